"""``on_tool_exception``, checked on the requests a local mock provider
captured: what the model reads of an unexpected exception."""

from __future__ import annotations

import json
from typing import Any, List

import pytest
from conftest import make_agent
from mock_openai import after_tools, calls, tool_messages

from parlance import RunError, ToolError, tool

raised: List[BaseException] = []


@tool
def lookup(order_id: str) -> str:
    """Look up an order."""
    if order_id == "BUG":
        e = KeyError("customer 4242 has no address")
        raised.append(e)
        raise e
    if order_id == "NO":
        raise ToolError("no such order")
    return "found"


SCRIPT = after_tools(
    calls(
        ("c1", "lookup", {"order_id": "A-1"}),
        ("c2", "lookup", {"order_id": "BUG"}),
        ("c3", "lookup", {"order_id": "NO"}),
    ),
    lambda body: "done",
)


def tool_contents(mock: Any) -> List[str]:
    return [m["content"] for m in tool_messages(mock.requests[-1])]


def test_return_to_model_shows_the_class_and_message(mock: Any) -> None:
    mock.script = SCRIPT
    r = make_agent(mock, tools=[lookup]).run_sync("go")
    assert r.status == "completed"
    assert tool_contents(mock) == ["found", "lookup failed: KeyError: 'customer 4242 has no address'", "no such order"]


def test_return_generic_keeps_the_detail_out_of_every_request(mock: Any) -> None:
    mock.script = SCRIPT
    r = make_agent(mock, tools=[lookup], on_tool_exception="return_generic").run_sync("go")
    assert tool_contents(mock) == ["found", "lookup failed.", "no such order"]
    sent = json.dumps(mock.requests)
    assert "4242" not in sent and "KeyError" not in sent
    # The detail is in the result's artifact, in the response only.
    artifacts: List[Any] = [
        b["tool_result"]["artifact"]
        for m in r.messages
        for b in m["content"]
        if b["type"] == "tool_result" and "artifact" in b["tool_result"]
    ]
    assert len(artifacts) == 1 and "4242" in json.dumps(artifacts[0])


def test_fail_raises_run_error_with_the_tools_exception_as_cause(mock: Any) -> None:
    mock.script = SCRIPT
    raised.clear()
    with pytest.raises(RunError) as e:
        make_agent(mock, tools=[lookup], on_tool_exception="fail").run_sync("go")
    err = e.value
    assert err.code == "tool_failed"
    assert err.__cause__ is raised[0]
    assert err.detail == {"tool": "lookup", "error_type": "KeyError", "message": "'customer 4242 has no address'"}
    assert len(mock.requests) == 1, "the model is not called again"
    assert err.response is not None and err.response.status == "failed"
    # The history stays consistent: the tool message is kept.
    assert [m["role"] for m in err.response.messages] == ["user", "assistant", "tool"]


def test_an_unknown_policy_is_refused(mock: Any) -> None:
    from parlance import ConfigError

    with pytest.raises(ConfigError, match="on_tool_exception: expected one of return_to_model, return_generic, fail"):
        make_agent(mock, on_tool_exception="ignore")
