"""Runs as a user writes them: awaited, run_sync, streamed, with turns;
the response's fields and its JSON, byte-identical to the Rust core's."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Dict

import pytest
from conftest import make_agent
from mock_openai import after_tools, calls, text

import parlance
from parlance import Agent, Response, RunError, tool


@tool
def get_order(order_id: str) -> Dict[str, Any]:
    """Look up one order by its id.

    Args:
        order_id: The order, like A-1001.
    """
    return {"order_id": order_id, "status": "shipped"}


def orders_script() -> Any:
    return after_tools(
        calls(("c1", "get_order", {"order_id": "A-1001"}), ("c2", "get_order", {"order_id": "A-1002"})),
        lambda body: "Both shipped.",
    )


def test_run_sync_with_a_tool(mock: Any) -> None:
    mock.script = orders_script()
    agent = make_agent(mock, instructions="You answer about orders.", tools=[get_order])
    r = agent.run_sync("Where are A-1001 and A-1002?")
    assert r.status == "completed"
    assert r.text == "Both shipped."
    assert r.output == "Both shipped."
    assert r.usage.input_tokens == 20 and r.usage.output_tokens == 10
    roles = [m["role"] for m in r.messages]
    assert roles == ["user", "assistant", "tool", "assistant"]
    # What the model got: the instructions, the tool's schema from the hints
    # and docstring, and the results in call order.
    first, second = mock.requests
    assert first["messages"][0] == {"role": "system", "content": "You answer about orders."}
    fn = first["tools"][0]["function"]
    assert fn["name"] == "get_order"
    assert fn["description"] == "Look up one order by its id."
    assert fn["parameters"]["properties"]["order_id"] == {"type": "string", "description": "The order, like A-1001."}
    results = [(m["tool_call_id"], json.loads(m["content"])) for m in second["messages"] if m["role"] == "tool"]
    assert results == [
        ("c1", {"order_id": "A-1001", "status": "shipped"}),
        ("c2", {"order_id": "A-1002", "status": "shipped"}),
    ]


def test_await_run_and_turns(mock: Any) -> None:
    mock.script = lambda body: text(f"You said {len(body['messages'])} things.")
    agent = make_agent(mock)

    async def main() -> tuple[Response[str], Response[str]]:
        first = await agent.run("Hi")
        second = await agent.run("Again", turns=[first])
        return first, second

    first, second = asyncio.run(main())
    assert first.text == "You said 1 things."
    assert second.text == "You said 3 things."
    assert [m["content"] for m in mock.requests[1]["messages"]] == ["Hi", "You said 1 things.", "Again"]


def test_every_turn_shape_of_the_shared_vectors_is_read_by_a_run(mock: Any) -> None:
    """The turns of testdata/format/legacy.json (whole responses, a failed
    one without messages, a stored run record) passed to a run: the model
    sees their messages, in order, then the new input — as in Rust."""
    from conftest import REPO

    cases = json.loads((REPO / "testdata" / "format" / "legacy.json").read_text())
    turns = [c for c in cases if c["kind"] == "turn"]
    assert len(turns) >= 4
    mock.script = lambda body: text("ok")
    agent = make_agent(mock)
    r = agent.run_sync("Next", turns=[c["input"] for c in turns])
    assert r.text == "ok"
    seen = [m for c in turns for m in c["expected"]["messages"]]
    sent = mock.requests[-1]["messages"]
    assert len(sent) == len(seen) + 1 and sent[-1] == {"role": "user", "content": "Next"}
    assert [m["role"] for m in sent[:-1]] == [m["role"] for m in seen]


def test_response_json_is_the_rust_json_and_reads_back(mock: Any) -> None:
    mock.script = orders_script()
    agent = make_agent(mock, tools=[get_order])
    r = agent.run_sync("Where?", run_id="run_1", thread_id="th_1")
    assert r.id == "run_1" and r.thread_id == "th_1"
    text_json = r.to_json()
    back = Response.from_json(text_json)
    assert back == r
    assert back.to_json() == text_json
    assert Response.from_dict(r.to_dict()).to_json() == text_json
    # Canonical JSON as the format crate writes it: the same bytes through
    # the format module's reader.
    assert parlance.format.dumps(json.loads(text_json), kind="response") == text_json
    assert json.loads(r.to_json(indent=True)) == json.loads(text_json)


def test_stream_reports_events_and_ends_with_the_response(mock: Any) -> None:
    mock.script = orders_script()
    agent = make_agent(mock, tools=[get_order])

    async def main() -> list[Any]:
        return [e async for e in agent.stream("Where?")]

    events = asyncio.run(main())
    kinds = [type(e).__name__ for e in events]
    assert kinds[-1] == "RunCompleted"
    assert kinds.count("ToolCallStarted") == 2 and kinds.count("ToolCallFinished") == 2
    deltas = "".join(e.text for e in events if isinstance(e, parlance.TextDelta))
    assert deltas == "Both shipped."
    finished = [e for e in events if isinstance(e, parlance.ToolCallFinished)]
    assert {e.status for e in finished} == {"ok"} and all(e.elapsed >= 0 for e in finished)
    assert events[-1].response.text == "Both shipped."
    assert all(b.get("stream") for b in mock.requests)


def test_a_model_error_raises_run_error_with_the_failed_response(mock: Any) -> None:
    def broken(body: Dict[str, Any]) -> Any:
        raise ValueError("nope")

    mock.script = broken
    agent = make_agent(mock)
    with pytest.raises(RunError) as e:
        agent.run_sync("Hi")
    assert e.value.code == "model_error"
    assert e.value.response is not None and e.value.response.status == "failed"
    assert "mock script" in e.value.message


def test_bad_input_names_its_path(mock: Any) -> None:
    agent = make_agent(mock)
    with pytest.raises(parlance.FormatError) as e:
        agent.run_sync([{"role": "user", "content": [{"type": "txt", "text": "x"}]}])
    assert str(e.value).startswith('input[0].content[0].type: unknown block type "txt"')
    with pytest.raises(parlance.FormatError) as e:
        agent.run_sync("x", turns=[{"messages": [{"role": "robot", "content": []}]}])
    assert str(e.value).startswith('turns[0].messages[0].role: unknown role "robot"')


def test_run_sync_inside_a_loop_says_what_to_do(mock: Any) -> None:
    agent = make_agent(mock)

    async def main() -> None:
        agent.run_sync("Hi")

    with pytest.raises(RuntimeError, match=r"use `await agent\.run"):
        asyncio.run(main())


def test_a_provider_object_sends_its_base_url_key_and_headers(mock: Any) -> None:
    openai = parlance.OpenAI(base_url=mock.url, api_key="sk-own", headers={"x-team": "refunds"}, user_agent="shop/1.0")
    assert Agent(openai.model("gpt-4o-mini")).run_sync("hello").text == "Hello."
    assert Agent("gpt-4o-mini", provider=openai).run_sync("hello").text == "Hello."
    assert len(mock.headers) == 2
    for headers, body in zip(mock.headers, mock.requests):
        assert headers["authorization"] == "Bearer sk-own"
        assert headers["x-team"] == "refunds"
        assert headers["user-agent"] == "shop/1.0"
        assert body["model"] == "gpt-4o-mini"


def test_a_missing_key_is_an_error_before_any_request(monkeypatch: Any) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(parlance.ConfigError, match="ANTHROPIC_API_KEY"):
        Agent("anthropic:claude-sonnet-4-5")
    with pytest.raises(parlance.ConfigError, match="unknown provider"):
        Agent("nosuch:model")


def test_response_can_be_subscripted_at_run_time() -> None:
    import typing

    def annotated() -> Response[str]:
        raise NotImplementedError

    assert Response[int] is Response
    # The string annotation (this file uses `from __future__ import
    # annotations`) resolves at run time, as pydantic or FastAPI would do it.
    assert typing.get_type_hints(annotated)["return"] is Response


def test_a_dropped_thinking_block_is_a_logging_warning(mock: Any, caplog: pytest.LogCaptureFixture) -> None:
    """What a request leaves out (Anthropic's signed thinking, which OpenAI
    cannot take) reaches Python's ``logging`` as a warning of the
    runtime's logger, once per model."""
    mock.script = lambda body: text("ok")
    agent = make_agent(mock)
    earlier = [
        {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
        {
            "role": "assistant",
            "provider": "anthropic",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "sig", "provider": "anthropic"},
                {"type": "text", "text": "Sunny."},
            ],
        },
    ]
    with caplog.at_level(logging.WARNING):
        agent.run_sync("And tomorrow?", turns=[{"messages": earlier}])
        agent.run_sync("And the day after?", turns=[{"messages": earlier}])
    drops = [r for r in caplog.records if "thinking dropped" in r.getMessage()]
    assert len(drops) == 1, [r.getMessage() for r in caplog.records]
    assert drops[0].levelno == logging.WARNING
    assert drops[0].name.startswith("parlance_providers")
    assert ".content[0]: thinking dropped (from anthropic" in drops[0].getMessage()
