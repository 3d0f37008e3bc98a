"""What reaches Python through the bindings' shared core
(bindings/core): streamed runs on stored threads, the store's whole API,
tools returning content blocks, a stateless retry, and the agent settings
``max_tool_output`` and ``approval_key``."""

from __future__ import annotations

import asyncio
import base64
import re
from typing import Any, Dict, List, Optional

import pytest
from conftest import make_agent
from mock_openai import after_tools, calls, text, tool_messages

from parlance import (
    ConfigError,
    Content,
    DecisionError,
    Response,
    RunCompleted,
    RunError,
    Store,
    StoreError,
    TextDelta,
    approve,
    tool,
)
from parlance.types import ToolResult


def tool_result_of(r: Optional[Response[Any]]) -> ToolResult:
    """The first tool result of a run's messages."""
    assert r is not None, "the run gave no response"
    return next(b["tool_result"] for m in r.messages for b in m["content"] if b["type"] == "tool_result")


@tool(needs_approval=True)
def refund(order_id: str, amount: int) -> str:
    """Refund an order."""
    return f"refunded {amount} EUR"


def test_a_run_on_a_stored_thread_streams_and_is_stored(mock: Any, tmp_path: Any) -> None:
    mock.script = lambda body: text("Hello there")
    url = f"sqlite://{tmp_path}/t.db"

    async def main() -> Any:
        store = Store(url)
        thread = await store.create_thread()
        events = [e async for e in make_agent(mock).stream("Hi", store=store, thread_id=thread)]
        return thread, events, await Store(url).messages(thread)

    thread, events, stored = asyncio.run(main())
    assert any(isinstance(e, TextDelta) for e in events)
    assert isinstance(events[-1], RunCompleted)
    assert events[-1].response.thread_id == thread and events[-1].response.text == "Hello there"
    assert [m["role"] for m in stored] == ["user", "assistant"]


def test_a_paused_thread_run_resumes_as_a_stream_and_refusals_raise(mock: Any, tmp_path: Any) -> None:
    mock.script = after_tools(calls(("c1", "refund", {"order_id": "A-1", "amount": 3})), lambda b: "Done.")
    store = Store(f"sqlite://{tmp_path}/t.db")
    thread = store.create_thread_sync()
    agent = make_agent(mock, tools=[refund])
    paused = agent.run_sync("Refund", store=store, thread_id=thread)
    assert paused.status == "requires_approval"

    async def main() -> Any:
        with pytest.raises(DecisionError):
            forged = {"decision": "approved", "tool_call_id": "nope", "digest": "sha256:" + "0" * 64}
            async for _ in agent.resume_stream(paused, [forged], store=store):
                pass
        return [e async for e in agent.resume_stream(paused, [approve("c1")], store=store)]

    events = asyncio.run(main())
    assert isinstance(events[-1], RunCompleted) and events[-1].response.text == "Done."
    assert [r["status"] for r in store.runs_sync(thread)] == ["completed"]


def test_the_store_lists_pages_and_reads_threads_runs_and_waiting_runs(mock: Any, tmp_path: Any) -> None:
    mock.script = after_tools(calls(("c1", "refund", {"order_id": "A-1", "amount": 3})), lambda b: "Done.")
    store = Store(f"sqlite://{tmp_path}/t.db", lease=5, redact=["sk-secret-value-123"])
    ids = [store.create_thread_sync({"n": i}) for i in range(3)]
    first = store.threads_sync(limit=2)
    assert [t["id"] for t in first["items"]] == ids[:2] and first["next"] == ids[1]
    rest = store.threads_sync(after=first["next"])
    assert [t["id"] for t in rest["items"]] == ids[2:] and rest["next"] is None
    assert store.thread_sync(ids[0])["metadata"] == {"n": 0}
    paused = make_agent(mock, tools=[refund]).run_sync("Refund sk-secret-value-123", store=store, thread_id=ids[0])
    waiting = store.waiting_runs_sync()
    assert [w["id"] for w in waiting] == [paused.id]
    assert store.run_sync(paused.id or "")["status"] == "requires_approval"
    page = store.message_page_sync(ids[0], start=1, limit=1)
    assert [(m["seq"], m["message"]["role"]) for m in page] == [(1, "assistant")]
    # The redactor scrubbed the secret from what was stored.
    assert "sk-secret-value-123" not in str(store.messages_sync(ids[0]))
    with pytest.raises(StoreError) as busy:
        store.delete_thread_sync(ids[0])
    assert busy.value.kind == "busy"
    store.delete_thread_sync(ids[0], force=True)
    with pytest.raises(StoreError) as gone:
        store.thread_sync(ids[0])
    assert gone.value.kind == "not_found"
    assert asyncio.run(store.artifacts(ids[1])) == []
    with pytest.raises(ConfigError, match="limit: expected a whole number from 1 to 1000, got 0"):
        store.threads_sync(limit=0)
    with pytest.raises(ConfigError, match="lease: expected a positive number of seconds"):
        Store(f"sqlite://{tmp_path}/u.db", lease=-1)


PNG = b"\x89PNG\r\n\x1a\n fake image bytes"


def test_a_tool_returning_content_gives_the_model_an_image(mock: Any) -> None:
    @tool
    def chart(name: str) -> Content:
        """Draw a chart."""
        return Content(f"The {name} chart:", Content.image(PNG, "image/png"))

    # The image of a tool result may reach OpenAI Chat as a user message
    # after the tool message: answer once any tool message was sent.
    mock.script = lambda body: text("Here it is.") if tool_messages(body) else calls(("c1", "chart", {"name": "sales"}))
    # OpenAI Chat takes only text in tool results: the run fails saying
    # so (never silently dropping the image), and its messages hold the
    # blocks the tool returned.
    with pytest.raises(RunError) as e:
        make_agent(mock, tools=[chart]).run_sync("Chart?")
    assert "OpenAI Chat tool results take only text, not image blocks" in str(e.value)
    r = e.value.response
    result = tool_result_of(r)
    kinds = [b["type"] for b in result["content"]]
    assert kinds == ["text", "image"]
    image = result["content"][1]
    assert image["type"] == "image"
    assert image["image"]["media_type"] == "image/png"
    assert base64.b64decode(image["image"]["data"] or "") == PNG


def test_a_malformed_content_block_fails_the_call_naming_its_path(mock: Any) -> None:
    @tool
    def broken() -> Content:
        """Broken."""
        return Content({"type": "image", "image": {"dta": "x"}})

    mock.script = after_tools(calls(("c1", "broken", {})), lambda b: "ok")
    r = make_agent(mock, tools=[broken]).run_sync("Go")
    result = tool_result_of(r)
    assert result["status"] == "tool_failed"
    assert "(returned content)[0].image" in str(result)


def test_a_stateless_retry_runs_the_failed_call_again(mock: Any) -> None:
    attempts: List[str] = []

    @tool
    def flaky(order_id: str) -> str:
        """Look up an order."""
        attempts.append(order_id)
        if len(attempts) == 1:
            raise ConnectionError("down")
        return f"{order_id} shipped"

    mock.script = after_tools(calls(("c1", "flaky", {"order_id": "A-1"})), lambda b: "It shipped.")
    agent = make_agent(mock, tools=[flaky], on_tool_exception="fail")
    with pytest.raises(RunError) as e:
        agent.run_sync("Where is A-1?")
    failed = e.value.response
    assert failed is not None
    r = agent.retry_sync(turns=[failed])
    assert r.status == "completed" and r.text == "It shipped."
    assert attempts == ["A-1", "A-1"]
    with pytest.raises(ConfigError, match="turns: a retry needs"):
        agent.retry_sync()


def test_max_tool_output_and_approval_key_are_agent_settings(mock: Any) -> None:
    @tool
    def big() -> str:
        """Big."""
        return "x" * 5000

    mock.script = after_tools(calls(("c1", "big", {})), lambda b: "ok")
    r = make_agent(mock, tools=[big], max_tool_output=100).run_sync("Go")
    result = tool_result_of(r)
    assert "x" * 200 not in str(result)
    mock.script = after_tools(calls(("c1", "refund", {"order_id": "A", "amount": 1})), lambda b: "ok")
    signed = make_agent(mock, tools=[refund], approval_key="0123456789abcdef-key")
    plain = make_agent(mock, tools=[refund])
    a = signed.run_sync("Refund", run_id="run_1").pending[0].digest
    b = plain.run_sync("Refund", run_id="run_1").pending[0].digest
    assert a != b
    with pytest.raises(ConfigError, match="approval_key: expected a secret of at least 16 bytes"):
        make_agent(mock, approval_key="short")
    with pytest.raises(ConfigError, match="max_tool_output: expected a whole number of at least 1"):
        make_agent(mock, max_tool_output=0)


def test_a_rotated_approval_key_still_verifies_what_it_signed(mock: Any) -> None:
    mock.script = after_tools(calls(("c1", "refund", {"order_id": "A", "amount": 1})), lambda b: "Refunded.")
    old, new = "0123456789abcdef-old", "0123456789abcdef-new"
    paused = make_agent(mock, tools=[refund], approval_key=old).run_sync("Refund", run_id="run_1")
    decision = [approve(paused.pending[0])]
    with pytest.raises(DecisionError, match="does not match"):
        make_agent(mock, tools=[refund], approval_key=new).resume_sync(paused, decision)
    rotated = make_agent(mock, tools=[refund], approval_key=new, previous_approval_keys=[old])
    assert rotated.resume_sync(paused, decision).text == "Refunded."
    # What the rotated agent signs now, it signs with the new key.
    again = rotated.run_sync("Refund", run_id="run_1")
    assert again.pending[0].digest != paused.pending[0].digest
    with pytest.raises(ConfigError, match=r"previous_approval_keys\[0\]: expected a secret of at least 16 bytes"):
        make_agent(mock, previous_approval_keys=["short"])


def test_convert_reads_a_recorded_stream() -> None:
    import json

    from parlance import format

    events: List[Dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "m",
                "type": "message",
                "role": "assistant",
                "model": "c",
                "content": [],
                "usage": {"input_tokens": 1, "output_tokens": 0},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
        {"type": "message_stop"},
    ]
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    for value in (sse, events):
        m = format.convert(value, from_="anthropic", to="canonical", kind="stream")
        assert m["content"][0]["text"] == "Hi"


def test_providers_as_objects_take_retries_azure_and_bedrock_settings() -> None:
    from parlance import Azure, Bedrock, OpenAI

    m = OpenAI(api_key="sk-x", retry={"max_retries": 0, "initial_backoff": 0.01}).model("gpt-4o-mini")
    assert (m.provider, m.model_id) == ("openai", "gpt-4o-mini")
    b = Bedrock(region="eu-west-1", aws_credentials={"access_key_id": "A", "secret_access_key": "S"})
    assert b.model("anthropic.claude-3-haiku").provider == "bedrock"
    a = Azure(base_url="https://x.openai.azure.com/openai", api_version="2024-10-21", api_key="k")
    assert a.model("gpt-4o").model_id == "gpt-4o"
    with pytest.raises(ConfigError, match=re.escape("retry.max_retries: expected a whole number from 0 to 100")):
        OpenAI(api_key="k", retry={"max_retries": -1}).model("m")
    with pytest.raises(ConfigError, match=re.escape("aws_credentials.secret_access_key: required")):
        Bedrock(region="eu-west-1", aws_credentials={"access_key_id": "A"}).model("m")


def test_a_checkpoint_is_handed_each_step_sync_async_and_streamed() -> None:
    """``checkpoint=``: every step of a run reaches the function as it
    completes (an assistant message, the tool message, the decided tool
    message replacing it on resume), from ``run_sync``, ``await run`` with
    an ``async def`` and ``resume_stream``; what it raises fails the run
    with code ``store`` and is the ``RunError``'s cause; with a store it
    is refused."""
    from parlance import Agent, Step
    from parlance.testing import ScriptedModel

    @tool(needs_approval=True)
    def refund(amount: int) -> str:
        """Refunds."""
        return f"refunded {amount}"

    def script() -> Any:
        return ScriptedModel(
            [
                {"role": "assistant", "content": [call_block("c1", "refund", {"amount": 80})]},
                {"role": "assistant", "content": [{"type": "text", "text": "Refunded."}]},
            ]
        )

    steps: List[str] = []

    def keep(step: Step) -> None:
        steps.append(f"{step['kind']} {step['message']['role']}")

    agent = Agent(script(), tools=[refund])
    paused = agent.run_sync("Refund 80", checkpoint=keep)
    assert paused.status == "requires_approval"
    assert steps == ["append assistant", "append tool"]

    async def resume() -> Any:
        events = [e async for e in agent.resume_stream(paused, [approve(paused.pending[0])], checkpoint=keep)]
        last = events[-1]
        assert isinstance(last, RunCompleted)
        return last.response

    done = asyncio.run(resume())
    assert done.text == "Refunded."
    assert steps == ["append assistant", "append tool", "replace_last tool", "append assistant"]

    kept: List[str] = []

    async def keep_later(step: Step) -> None:
        await asyncio.sleep(0)
        kept.append(step["kind"])

    async def run_async() -> Any:
        return await Agent(script(), tools=[refund]).run("Refund 80", checkpoint=keep_later)

    assert asyncio.run(run_async()).status == "requires_approval"
    assert kept == ["append", "append"]

    def full(step: Step) -> None:
        raise OSError("disk full")

    with pytest.raises(RunError) as e:
        Agent(script(), tools=[refund]).run_sync("Refund 80", checkpoint=full)
    assert e.value.code == "store"
    assert "checkpoint raised OSError: disk full" in str(e.value)
    assert isinstance(e.value.__cause__, OSError)

    with pytest.raises(ConfigError, match="checkpoint: a run on a stored thread is checkpointed by its store"):
        store = Store("sqlite::memory:")
        Agent(script()).run_sync("hi", store=store, thread_id=store.create_thread_sync(), checkpoint=keep)
    with pytest.raises(ConfigError, match="checkpoint: expected a function of each step, got str"):
        Agent(script()).run_sync("hi", checkpoint="keep")  # type: ignore[arg-type]


def call_block(id: str, name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "tool_call", "tool_call": {"id": id, "name": name, "arguments": arguments}}
