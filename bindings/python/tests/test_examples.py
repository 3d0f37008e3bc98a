"""The examples (type-checked with mypy --strict by scripts/test-python)
run against the local mock."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from types import ModuleType
from typing import Any

from conftest import REPO
from mock_openai import after_tools, calls, text

import parlance


def example(name: str) -> ModuleType:
    path = REPO / "bindings" / "python" / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the module's annotations there
    spec.loader.exec_module(module)
    return module


def model(mock: Any) -> parlance.Model:
    return parlance.OpenAI(base_url=mock.url, api_key="sk-test").model("gpt-4o-mini")


def test_quickstart(mock: Any) -> None:
    mock.script = after_tools(
        calls(("c1", "refund", {"order_id": "A-1001", "amount": 900})), lambda b: "Over the limit."
    )
    r = example("quickstart").build(model(mock)).run_sync("Refund 900 EUR on A-1001")
    assert r.text == "Over the limit."
    sent = [m["content"] for m in mock.requests[1]["messages"] if m["role"] == "tool"]
    assert sent == ["Invalid arguments for refund:\namount: must be at most 500, got 900"]
    schema = mock.requests[0]["tools"][0]["function"]["parameters"]
    assert schema["properties"]["amount"] == {"description": "Euros.", "maximum": 500, "minimum": 1, "type": "integer"}


def test_approvals(mock: Any) -> None:
    ex = example("approvals")
    mock.script = after_tools(
        calls(
            ("c1", "refund", {"order_id": "A-1", "amount": 250}), ("c2", "refund", {"order_id": "A-2", "amount": 400})
        ),
        lambda b: "One refunded.",
    )
    paused = ex.build(model(mock)).run_sync("Refund")
    r = ex.build(model(mock)).resume_sync(paused.to_json(), ex.review(paused))
    assert r.status == "completed"
    sent = [m["content"] for m in mock.requests[-1]["messages"] if m["role"] == "tool"]
    assert sent == ["refunded 250 EUR on A-1", "The reviewer rejected this call: over 300 EUR"]


def test_structured_output(mock: Any) -> None:
    ex = example("structured_output")
    mock.script = lambda b: text('{"order_id": "A-1001", "status": "shipped", "total_eur": 42.5}')
    r = ex.build(model(mock)).run_sync("Order A-1001 shipped")
    assert isinstance(r.output, ex.Order)
    assert r.output.total_eur == 42.5
    assert mock.requests[0]["response_format"]["json_schema"]["name"] == "Order"
    mock.script = lambda b: text('{"order_id": "A-1001", "status": "lost", "total_eur": 42.5}')
    try:
        ex.build(model(mock)).run_sync("Order A-1001 lost")
        raise AssertionError("expected RunError")
    except parlance.RunError as e:
        assert e.code == "invalid_output"
        assert "status" in e.message


def test_streaming(mock: Any, capsys: Any) -> None:
    ex = example("streaming")
    mock.script = after_tools(calls(("c1", "get_order", {"order_id": "A-1001"})), lambda b: "It shipped.")
    agent = ex.build(model(mock))

    async def main() -> None:
        async for event in agent.stream("Where?"):
            print(type(event).__name__)

    asyncio.run(main())
    out = capsys.readouterr().out.split()
    assert out[-1] == "RunCompleted" and "ToolCallFinished" in out and "TextDelta" in out


def test_reading_messages(mock: Any) -> None:
    ex = example("reading_messages")
    mock.script = after_tools(calls(("c1", "get_order", {"order_id": "A-1001"})), lambda b: "It shipped.")
    r = ex.build(model(mock)).run_sync("Where is A-1001?")
    assert ex.transcript(r.messages) == [
        "user: Where is A-1001?",
        "assistant: calls get_order({'order_id': 'A-1001'})",
        "tool: ok: A-1001: shipped",
        "assistant: It shipped.",
    ]
