"""Runs on stored threads (a real SQLite file): history from the store,
steps committed, one run per thread, a paused run resumed by a fresh store
and agent, a retry after a failed run."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

import pytest
from conftest import make_agent
from mock_openai import after_tools, calls, text

from parlance import RunError, Store, StoreError, ToolContext, approve, tool

ran: List[Dict[str, Any]] = []


@tool(needs_approval=True)
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    ran.append({"order_id": order_id, "amount": amount})
    return f"refunded {amount} EUR"


def test_runs_on_a_thread_keep_the_history(mock: Any, url: str) -> None:
    mock.script = lambda body: text(f"{len(body['messages'])} messages so far")

    async def main() -> Any:
        store = Store(url)
        thread = await store.create_thread({"customer": "ada"})
        agent = make_agent(mock)
        first = await agent.run("Hi", store=store, thread_id=thread)
        second = await agent.run("Again", store=store, thread_id=thread)
        return thread, first, second, await Store(url).messages(thread), await store.runs(thread)

    thread, first, second, messages, runs = asyncio.run(main())
    assert first.thread_id == thread and first.text == "1 messages so far"
    assert second.text == "3 messages so far"
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert [r["status"] for r in runs] == ["completed", "completed"]


def test_a_paused_run_on_a_thread_resumes_from_a_fresh_store(mock: Any, url: str) -> None:
    ran.clear()
    mock.script = after_tools(calls(("c1", "refund", {"order_id": "A-1", "amount": 30})), lambda b: "Refunded.")
    store = Store(url)
    thread = store.create_thread_sync()
    paused = make_agent(mock, tools=[refund]).run_sync("Refund A-1", store=store, thread_id=thread)
    assert paused.status == "requires_approval"
    with pytest.raises(StoreError) as e:
        make_agent(mock, tools=[refund]).run_sync("And another", store=store, thread_id=thread)
    assert e.value.kind == "busy"
    # Another "process": a new store and agent, the paused response's JSON.
    r = make_agent(mock, tools=[refund]).resume_sync(paused.to_json(), [approve("c1")], store=Store(url))
    assert r.status == "completed" and r.text == "Refunded."
    assert ran == [{"order_id": "A-1", "amount": 30}]
    history = store.messages_sync(thread)
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]


def test_retry_after_a_failed_run(mock: Any, url: str) -> None:
    answers = iter(["boom", "fine"])

    def script(body: Dict[str, Any]) -> Any:
        a = next(answers)
        if a == "boom":
            raise ValueError("down")
        return text(a)

    mock.script = script
    store = Store(url)
    thread = store.create_thread_sync()
    agent = make_agent(mock)
    with pytest.raises(RunError):
        agent.run_sync("Hi", store=store, thread_id=thread)
    r = agent.retry_sync(thread, store=store)
    assert r.text == "fine"
    # The retry sent the stored history: the user's message.
    assert mock.requests[-1]["messages"] == [{"role": "user", "content": "Hi"}]


def test_retry_runs_the_failed_call_again_and_is_refused_after_a_completed_run(mock: Any, url: str) -> None:
    """Under on_tool_exception="fail" the failing call is run again by the
    retry (the model is not asked again, nor sent the failure); a retry
    after a completed run is refused."""
    attempts: List[str] = []

    @tool
    def flaky(order_id: str) -> str:
        """Look up an order."""
        attempts.append(order_id)
        if len(attempts) == 1:
            raise ConnectionError("the order service is down")
        return f"{order_id} shipped"

    mock.script = after_tools(calls(("c1", "flaky", {"order_id": "A-1"})), lambda b: "It shipped.")
    store = Store(url)
    thread = store.create_thread_sync()
    agent = make_agent(mock, tools=[flaky], on_tool_exception="fail")
    with pytest.raises(RunError) as e:
        agent.run_sync("Where is A-1?", store=store, thread_id=thread)
    assert e.value.code == "tool_failed"
    asked = len(mock.requests)
    r = agent.retry_sync(thread, store=store)
    assert r.status == "completed" and r.text == "It shipped."
    assert attempts == ["A-1", "A-1"]
    # One more request only: the answer after the call ran again; it
    # carries the call's real result, not the failure.
    assert len(mock.requests) == asked + 1
    sent = [m for m in mock.requests[-1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in sent] == ["A-1 shipped"]
    assert [x["status"] for x in store.runs_sync(thread)] == ["failed", "completed"]
    with pytest.raises(StoreError) as refused:
        agent.retry_sync(thread, store=store)
    assert refused.value.kind == "conflict"
    assert "nothing to retry" in str(refused.value)


def test_store_errors_name_what_is_wrong(mock: Any, tmp_path: Any) -> None:
    store = Store(f"sqlite://{tmp_path}/threads.db")
    with pytest.raises(StoreError) as e:
        make_agent(mock).run_sync("Hi", store=store, thread_id="thr_nosuch")
    assert e.value.kind == "not_found"
    with pytest.raises(StoreError):
        Store("nosuchdb://x")


def test_artifacts_are_stored_on_the_thread_but_never_sent(url: str) -> None:
    """A ``return_generic`` failure keeps its detail (here a card number)
    in the result's artifact: stored with the thread, read back by
    ``Store.artifacts``, never in a request, not even after a fresh agent
    reloads the thread from the store."""
    from parlance import Agent
    from parlance.testing import FunctionModel, RequestInfo

    sent: List[str] = []

    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        sent.append(repr(messages))
        if len(sent) == 1:
            return {"content": [{"type": "tool_call", "tool_call": {"id": "c1", "name": "charge", "arguments": {}}}]}
        return "Sorry."

    @tool
    def charge() -> str:
        """Charges the card."""
        raise ValueError("card 4111-1111-1111-1111 declined")

    def agent() -> Agent[str]:
        return Agent(FunctionModel(answer), tools=[charge], on_tool_exception="return_generic")

    store = Store(url)
    thread = store.create_thread_sync()
    r = agent().run_sync("Charge me", store=store, thread_id=thread)
    assert r.status == "completed"
    artifacts = Store(url).artifacts_sync(thread)
    assert [a["tool_call_id"] for a in artifacts] == ["c1"]
    assert artifacts[0]["artifact"] == {"error_type": "ValueError", "message": "card 4111-1111-1111-1111 declined"}
    agent().run_sync("Hello?", store=Store(url), thread_id=thread)
    assert len(sent) == 3
    for i, request in enumerate(sent):
        assert "4111" not in request, f"request {i} carried the artifact"
    assert "charge failed." in sent[2]


CRASHING_RUN = """
import pathlib, sys, time
from parlance import Agent, Store, tool
from parlance.testing import FunctionModel

url, marker = sys.argv[1], pathlib.Path(sys.argv[2])

@tool
def stall() -> str:
    '''Never ends.'''
    marker.write_text("started")
    time.sleep(3600)
    return "never"

def answer(messages, info):
    return {"content": [{"type": "tool_call", "tool_call": {"id": "c1", "name": "stall", "arguments": {}}}]}

store = Store(url, lease=1.0)
Agent(FunctionModel(answer), tools=[stall], tool_timeout=3600).run_sync("go", store=store, thread_id=sys.argv[3])
"""


def test_a_run_whose_process_was_killed_frees_its_thread_after_the_lease(url: str, tmp_path: Any) -> None:
    """kill -9 in the middle of a tool call: the thread stays busy while
    the dead run's lease lasts, then a run from another process goes
    ahead, and the dead run reads ``failed`` / ``interrupted``."""
    import signal
    import subprocess
    import sys
    import time

    from parlance import Agent
    from parlance.testing import ScriptedModel

    store = Store(url, lease=1.0)
    thread = store.create_thread_sync()
    marker = tmp_path / "started"
    child = subprocess.Popen([sys.executable, "-c", CRASHING_RUN, url, str(marker), thread])
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, "the run's process ended before its tool started"
            assert time.monotonic() < deadline, "the tool never started"
            time.sleep(0.02)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    agent = Agent(ScriptedModel([{"role": "assistant", "content": [{"type": "text", "text": "Back."}]}]))
    try:
        # Within the dead run's lease (unless this machine stalled past it).
        r = agent.run_sync("Hello?", store=store, thread_id=thread)
    except StoreError as e:
        assert e.kind == "busy", e
        time.sleep(1.2)
        r = agent.run_sync("Hello?", store=store, thread_id=thread)
    assert r.text == "Back."
    runs = store.runs_sync(thread)
    assert [(x["status"], (x.get("error") or {}).get("code")) for x in runs] == [
        ("failed", "interrupted"),
        ("completed", None),
    ]


def test_a_tool_calls_idempotency_key_is_the_same_on_a_retry(mock: Any) -> None:
    seen: List[str] = []

    @tool
    def charge(ctx: ToolContext) -> str:
        """Charge a card."""
        seen.append(ctx.idempotency_key)
        if len(seen) == 2:
            raise RuntimeError("the card service is down")
        return "charged"

    mock.script = after_tools(calls(("c1", "charge", {})), lambda b: "done")
    agent = make_agent(mock, tools=[charge], on_tool_exception="fail")
    agent.run_sync("Charge", run_id="run_fixed")
    assert seen == ["run_fixed/c1"]
    store = Store("sqlite::memory:")
    thread = store.create_thread_sync()
    with pytest.raises(RunError):
        agent.run_sync("Charge", store=store, thread_id=thread)
    agent.retry_sync(thread, store=store)
    assert seen[1:] == [f"{thread}/c1", f"{thread}/c1"]
