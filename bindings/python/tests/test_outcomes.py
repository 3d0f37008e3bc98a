"""How a call ends, for ``def`` and ``async def`` tools alike: a value, a
``ToolError``, any other exception, a timeout, invalid arguments, an
unknown tool. Results come back in call order whatever order the calls end
in; async tools run on the caller's loop; a blocking ``def`` tool does not
stall the others."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Annotated, Any, Dict, List, Tuple

import pytest
from conftest import make_agent
from mock_openai import after_tools, calls
from pydantic import Field

from parlance import ToolCallFinished, ToolContext, ToolError, tool


def results(r: Any) -> List[Tuple[str, str, str]]:
    """(call id, status, text) of every tool result of a run, in order."""
    out = []
    for m in r.messages:
        for b in m["content"]:
            if b["type"] == "tool_result":
                res = b["tool_result"]
                text = "".join(c.get("text", "") for c in res["content"] if c["type"] == "text")
                if not text:
                    text = str([c.get("json") for c in res["content"]])
                out.append((res["tool_call_id"], res.get("status", "ok"), text))
    return out


def make_tools(is_async: bool) -> List[Any]:
    if is_async:

        @tool(name="refund", timeout=0.3)
        async def refund(order_id: str, amount: Annotated[int, Field(ge=1, le=500)]) -> str:
            """Refund an order."""
            await asyncio.sleep(0)
            if order_id == "X-1":
                raise ToolError("orders starting with X cannot be refunded")
            if order_id == "BUG":
                raise KeyError("customer")
            if order_id == "SLOW":
                await asyncio.sleep(10)
            return f"refunded {amount} EUR"

    else:

        @tool(name="refund", timeout=0.3)
        def refund(order_id: str, amount: Annotated[int, Field(ge=1, le=500)]) -> str:
            """Refund an order."""
            if order_id == "X-1":
                raise ToolError("orders starting with X cannot be refunded")
            if order_id == "BUG":
                raise KeyError("customer")
            if order_id == "SLOW":
                time.sleep(1.0)
            return f"refunded {amount} EUR"

    return [refund]


@pytest.mark.parametrize("is_async", [False, True], ids=["def", "async def"])
def test_the_outcome_table(mock: Any, is_async: bool) -> None:
    mock.script = after_tools(
        calls(
            ("c1", "refund", {"order_id": "A-1", "amount": 20}),
            ("c2", "refund", {"order_id": "X-1", "amount": 20}),
            ("c3", "refund", {"order_id": "BUG", "amount": 20}),
            ("c4", "refund", {"order_id": "SLOW", "amount": 20}),
            ("c5", "refund", {"order_id": "A-1", "amount": 900}),
            ("c6", "nosuch", {}),
        ),
        lambda body: "done",
    )
    agent = make_agent(mock, tools=make_tools(is_async), max_invalid_arguments=5)

    async def main() -> Any:
        return await agent.run("Refund")

    r = asyncio.run(main())
    assert results(r) == [
        ("c1", "ok", "refunded 20 EUR"),
        ("c2", "error", "orders starting with X cannot be refunded"),
        ("c3", "tool_failed", "refund failed: KeyError: 'customer'"),
        (
            "c4",
            "timeout",
            # An async def is cancelled at its next await; a def runs on a
            # worker thread that nothing can stop, and the model is told so.
            "refund timed out after 0.3s and was cancelled"
            if is_async
            else "refund timed out after 0.3s; it was told to stop but may still be running,"
            " and its result will be discarded",
        ),
        ("c5", "invalid_arguments", "Invalid arguments for refund:\namount: must be at most 500, got 900"),
        ("c6", "error", 'unknown tool "nosuch"; available tools: refund'),
    ]
    # The model read the same lines.
    sent = [m["content"] for m in mock.requests[1]["messages"] if m["role"] == "tool"]
    assert "amount: must be at most 500, got 900" in sent[4]


@pytest.mark.parametrize("is_async", [False, True], ids=["def", "async def"])
def test_results_in_call_order_with_random_durations(mock: Any, is_async: bool) -> None:
    delays = {f"c{i}": random.uniform(0, 0.08) for i in range(8)}
    if is_async:

        @tool
        async def wait(call: str) -> str:
            """Waits."""
            await asyncio.sleep(delays[call])
            return call

    else:

        @tool
        def wait(call: str) -> str:
            """Waits."""
            time.sleep(delays[call])
            return call

    mock.script = after_tools(calls(*[(c, "wait", {"call": c}) for c in delays]), lambda b: "ok")
    agent = make_agent(mock, tools=[wait])
    r = asyncio.run(agent.run("go"))
    assert [(c, s, t) for c, s, t in results(r)] == [(c, "ok", c) for c in delays]
    sent = [m["tool_call_id"] for m in mock.requests[1]["messages"] if m["role"] == "tool"]
    assert sent == list(delays)


def test_an_async_tool_runs_on_the_callers_loop(mock: Any) -> None:
    seen: Dict[str, Any] = {}

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        gate: asyncio.Future[str] = loop.create_future()

        @tool
        async def wait_for_gate(ctx: ToolContext) -> str:
            """Waits for the caller."""
            seen["loop"] = asyncio.get_running_loop()
            seen["ctx"] = (ctx.run_id, ctx.call_id, ctx.tool_name, ctx.deps, ctx.remaining > 0)
            return await gate  # a future of the caller's loop

        mock.script = after_tools(calls(("c1", "wait_for_gate", {})), lambda b: "opened")
        agent = make_agent(mock, tools=[wait_for_gate])
        run = asyncio.ensure_future(agent.run("go", run_id="run_7", deps={"user": "ada"}))
        while "loop" not in seen:
            await asyncio.sleep(0.01)
        gate.set_result("the gate is open")
        r = await run
        assert seen["loop"] is loop
        return r

    r = asyncio.run(main())
    assert results(r) == [("c1", "ok", "the gate is open")]
    assert seen["ctx"] == ("run_7", "c1", "wait_for_gate", {"user": "ada"}, True)


def test_the_default_timeout_is_60_seconds_for_def_and_async_def_tools(mock: Any) -> None:
    """The deadline the engine gives a call with no timeout of its own, as
    the tool's context reads it (no 60 s sleep)."""
    seen: Dict[str, float] = {}

    @tool
    def sync_view(ctx: ToolContext) -> str:
        """Reads its deadline."""
        seen["def"] = ctx.remaining
        return "ok"

    @tool
    async def async_view(ctx: ToolContext) -> str:
        """Reads its deadline."""
        seen["async def"] = ctx.deadline - time.monotonic()
        return "ok"

    mock.script = after_tools(calls(("c1", "sync_view", {}), ("c2", "async_view", {})), lambda b: "ok")
    r = asyncio.run(make_agent(mock, tools=[sync_view, async_view]).run("go"))
    assert [s for _, s, _ in results(r)] == ["ok", "ok"]
    assert set(seen) == {"def", "async def"}
    for kind, left in seen.items():
        assert 59.0 < left <= 60.0, (kind, left)


def test_a_timed_out_def_tool_is_told_to_stop_and_its_side_effects_still_happen(mock: Any) -> None:
    effects: List[str] = []
    stopped = threading.Event()

    @tool(timeout=0.2)
    def stubborn() -> str:
        """Ignores its context."""
        time.sleep(0.5)
        effects.append("written anyway")
        return "late"

    @tool(timeout=0.2)
    def polite(ctx: ToolContext) -> str:
        """Checks ctx.cancelled and stops."""
        while not ctx.cancelled:
            time.sleep(0.01)
        stopped.set()
        return "stopped"

    mock.script = after_tools(calls(("c1", "stubborn", {}), ("c2", "polite", {})), lambda b: "ok")
    r = make_agent(mock, tools=[stubborn, polite]).run_sync("go")
    assert [(c, s) for c, s, _ in results(r)] == [("c1", "timeout"), ("c2", "timeout")]
    assert all("may still be running" in t for _, _, t in results(r))
    tool_results = [b["tool_result"] for m in r.messages for b in m["content"] if b["type"] == "tool_result"]
    assert [t["artifact"] for t in tool_results] == [{"timeout": {"after_ms": 200, "stopped": False}}] * 2
    assert stopped.wait(2), "ctx.cancelled turned true at the timeout"
    assert effects == []
    time.sleep(0.6)
    assert effects == ["written anyway"], "the model was told it may still be running: it was"


def test_a_timed_out_async_tool_is_cancelled(mock: Any) -> None:
    cancelled = threading.Event()

    @tool(timeout=0.2)
    async def forever() -> str:
        """Never ends."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    mock.script = after_tools(calls(("c1", "forever", {})), lambda b: "gave up")

    async def main() -> Any:
        r = await make_agent(mock, tools=[forever]).run("go")
        await asyncio.sleep(0.05)  # the cancellation runs on this loop
        return r

    r = asyncio.run(main())
    assert results(r) == [("c1", "timeout", "forever timed out after 0.2s and was cancelled")]
    assert cancelled.is_set()


def test_a_blocking_def_tool_does_not_stall_the_others(mock: Any) -> None:
    @tool
    def blocking() -> str:
        """Blocks its thread."""
        time.sleep(0.6)
        return "slow"

    @tool
    def quick() -> str:
        """Returns at once."""
        return "quick"

    @tool
    async def also_quick() -> str:
        """Returns at once."""
        return "also quick"

    mock.script = after_tools(
        calls(("c1", "blocking", {}), ("c2", "quick", {}), ("c3", "also_quick", {})), lambda b: "ok"
    )
    agent = make_agent(mock, tools=[blocking, quick, also_quick])

    async def main() -> Any:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        t = asyncio.ensure_future(ticker())
        stream = agent.stream("go")
        finished: Dict[str, float] = {}
        start = time.monotonic()
        async for e in stream:
            if isinstance(e, ToolCallFinished):
                finished[e.call_id] = time.monotonic() - start
        t.cancel()
        return finished, ticks

    finished, ticks = asyncio.run(main())
    assert finished["c2"] < 0.4 and finished["c3"] < 0.4, finished
    assert finished["c1"] >= 0.6
    # The caller's loop kept running while the def tool blocked its thread.
    assert ticks >= 8


def test_tool_return_values_become_content(mock: Any) -> None:
    from dataclasses import dataclass

    @dataclass
    class Order:
        order_id: str
        total: float

    @tool
    def as_dataclass() -> Order:
        """An order."""
        return Order("A-1", 42.5)

    @tool
    def as_number() -> int:
        """A number."""
        return 7

    @tool
    def as_none() -> None:
        """Nothing."""

    @tool
    def not_json() -> Any:
        """A set."""
        return {"s": {1, 2}}

    mock.script = after_tools(
        calls(("c1", "as_dataclass", {}), ("c2", "as_number", {}), ("c3", "as_none", {}), ("c4", "not_json", {})),
        lambda b: "ok",
    )
    r = make_agent(mock, tools=[as_dataclass, as_number, as_none, not_json]).run_sync("go")
    got = results(r)
    assert got[0] == ("c1", "ok", str([{"order_id": "A-1", "total": 42.5}]))
    assert got[1] == ("c2", "ok", "[7]")
    assert got[2] == ("c3", "ok", "[]")
    assert got[3][1] == "ok" and got[3][2] == str([{"s": [1, 2]}])


def test_cancelling_the_awaiting_task_stops_the_run_and_its_tools(mock: Any) -> None:
    started = threading.Event()
    cancelled = threading.Event()

    @tool
    async def slow() -> str:
        """Takes long."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    mock.script = after_tools(calls(("c1", "slow", {})), lambda b: "never")

    async def main() -> None:
        run = asyncio.ensure_future(make_agent(mock, tools=[slow]).run("go"))
        while not started.is_set():
            await asyncio.sleep(0.01)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        for _ in range(100):  # the tool's cancellation is scheduled on this loop
            if cancelled.is_set():
                break
            await asyncio.sleep(0.01)

    asyncio.run(main())
    assert cancelled.is_set()
    assert len(mock.requests) == 1, "the run stopped: the model was not called again"


def test_resume_stream_reports_the_decided_calls(mock: Any) -> None:
    from parlance import ToolCallFinished, approve

    @tool(needs_approval=True)
    def pay(amount: int) -> str:
        """Pays."""
        return f"paid {amount}"

    mock.script = after_tools(calls(("c1", "pay", {"amount": 5})), lambda b: "Paid.")
    agent = make_agent(mock, tools=[pay])

    async def main() -> List[Any]:
        paused = await agent.run("pay")
        return [e async for e in agent.resume_stream(paused, [approve(paused.pending[0])])]

    events = asyncio.run(main())
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.call_id, e.status) for e in finished] == [("c1", "ok")]
    assert events[-1].response.text == "Paid."


def _raising(raised: BaseException) -> Any:
    def lookup() -> str:
        """Look up."""
        raise raised

    return lookup


def test_a_tool_short_of_the_processs_resources_stops_the_run_unread_by_the_model() -> None:
    """An ``OSError`` of too many open files (or ``MemoryError``) is the
    process's lack of resources, not the tool's failure: the run ends
    ``server_resources``, the call's result is ``interrupted``, the model is
    not asked again."""
    import errno

    from parlance import Agent, RunError
    from parlance.testing import FunctionModel

    asked: list[int] = []

    def answer(messages: List[Dict[str, Any]], info: Any) -> Any:
        asked.append(len(messages))
        return {"content": [{"type": "tool_call", "tool_call": {"id": "c1", "name": "lookup", "arguments": {}}}]}

    for raised in [OSError(errno.EMFILE, "Too many open files"), MemoryError("no memory")]:
        asked.clear()

        agent = Agent(FunctionModel(answer), tools=[_raising(raised)])
        with pytest.raises(RunError) as e:
            agent.run_sync("Where is A-1?")
        assert e.value.code == "server_resources", e.value
        assert "the server ran out of resources" in e.value.message
        assert asked == [1]
        assert e.value.response is not None
        last: Any = e.value.response.messages[-1]
        result = last["content"][0]["tool_result"]
        assert result["status"] == "interrupted"
    # Any other OSError is the tool's: the model reads it.
    asked.clear()

    def refused() -> str:
        """Look up."""
        raise ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")

    texts: List[str] = []

    def answer_once(messages: List[Dict[str, Any]], info: Any) -> Any:
        if any(m["role"] == "tool" for m in messages):
            texts.append(messages[-1]["content"][0]["tool_result"]["content"][0]["text"])
            return "It failed."
        return {"content": [{"type": "tool_call", "tool_call": {"id": "c1", "name": "refused", "arguments": {}}}]}

    r = Agent(FunctionModel(answer_once), tools=[refused]).run_sync("Where is A-1?")
    assert r.text == "It failed." and "Connection refused" in texts[0]
