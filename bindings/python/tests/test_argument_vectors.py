"""The shared tool-argument vectors (testdata/tools/arguments.json; Rust and
Node run the same file): a model's arguments against a tool's schema give
exactly these problems, as the model reads them, and reach the function
only when there are none. Includes the extra-argument rule: an argument the
schema does not declare is refused."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest
from conftest import REPO, make_agent, text_of
from mock_openai import after_tools, calls

from parlance import tool

VECTORS: List[Dict[str, Any]] = json.loads((REPO / "testdata" / "tools" / "arguments.json").read_text())


@pytest.mark.parametrize("case", VECTORS, ids=[c["name"] for c in VECTORS])
def test_each_vector_reads_the_same_in_python(mock: Any, case: Dict[str, Any]) -> None:
    received: List[Dict[str, Any]] = []

    def t(**arguments: Any) -> str:
        """The vector's tool."""
        received.append(arguments)
        return "ran"

    mock.script = after_tools(calls(("c1", "t", case["arguments"])), lambda body: "ok")
    agent = make_agent(mock, tools=[tool(schema=case["schema"])(t)], max_invalid_arguments=5)
    r = agent.run_sync("go")
    result = next(b["tool_result"] for m in r.messages for b in m["content"] if b["type"] == "tool_result")
    text = text_of(result)
    if case["problems"]:
        assert result["status"] == "invalid_arguments"
        assert text == "Invalid arguments for t:\n" + "\n".join(case["problems"])
        assert received == []
    else:
        assert result.get("status", "ok") == "ok", text
        assert received == [case["arguments"]]


def test_a_typed_python_tool_refuses_an_undeclared_argument(mock: Any) -> None:
    @tool
    def get_order(order_id: str) -> str:
        """Look up an order."""
        return order_id

    mock.script = after_tools(calls(("c1", "get_order", {"order_id": "A-1", "note": "x"})), lambda b: "ok")
    r = make_agent(mock, tools=[get_order]).run_sync("go")
    result = next(b["tool_result"] for m in r.messages for b in m["content"] if b["type"] == "tool_result")
    assert result["status"] == "invalid_arguments"
    assert text_of(result) == "Invalid arguments for get_order:\nnote: unexpected property"
