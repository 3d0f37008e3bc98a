"""Toolsets written in Python: a function the agent asks before each model
call for its tools, given the run's deps (``def`` and ``async def``);
tools that come and go between calls; a name the agent also offers is
prefixed; the same tool objects are not rebuilt; what the function raises,
or a value that is not a tool, fails the run naming the toolset."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, List

import pytest

from parlance import Agent, ConfigError, RunError, Toolset, tool
from parlance.testing import FunctionModel, RequestInfo


@tool
def lookup(order_id: str) -> str:
    """Looks an order up."""
    return f"{order_id}: shipped"


@tool
def refund(order_id: str) -> str:
    """Refunds an order."""
    return f"{order_id}: refunded"


def call(id: str, name: str, order_id: str) -> Dict[str, Any]:
    return {"type": "tool_call", "tool_call": {"id": id, "name": name, "arguments": {"order_id": order_id}}}


def test_tools_are_asked_for_before_each_model_call_with_the_runs_deps() -> None:
    asked: List[Any] = []
    offered: List[List[str]] = []

    def tools_for(deps: Dict[str, Any]) -> List[Any]:
        asked.append(deps)
        # Refunds become possible once the order was looked up.
        return [lookup, refund] if len(asked) > 1 and deps["can_refund"] else [lookup]

    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        offered.append([t["name"] for t in info.tools])
        turn = len(offered)
        if turn == 1:
            return {"content": [call("c1", "lookup", "A-1")]}
        if turn == 2:
            return {"content": [call("c2", "refund", "A-1")]}
        return "Refunded."

    agent = Agent(FunctionModel(answer), toolsets=[Toolset(tools_for)])
    r = agent.run_sync("Refund A-1", deps={"can_refund": True})
    assert r.text == "Refunded.", r.error
    assert offered == [["lookup"], ["lookup", "refund"], ["lookup", "refund"]]
    assert asked == [{"can_refund": True}] * 3
    messages: List[Dict[str, Any]] = [dict(m) for m in r.messages]
    results = [b["tool_result"] for m in messages for b in m["content"] if b["type"] == "tool_result"]
    texts = [x["content"][0]["text"] for x in results]
    assert texts == ["A-1: shipped", "A-1: refunded"]


def test_an_async_toolset_of_plain_functions_and_a_name_clash_is_prefixed() -> None:
    def status(order_id: str) -> str:
        """The order's status, from the warehouse."""
        return "in the warehouse"

    async def warehouse() -> List[Any]:
        await asyncio.sleep(0)
        return [status, lookup]

    offered: List[List[str]] = []

    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        offered.append([t["name"] for t in info.tools])
        if len(offered) == 1:
            return {"content": [call("c1", "warehouse_lookup", "A-2")]}
        return "ok"

    agent = Agent(FunctionModel(answer), tools=[lookup], toolsets=[Toolset(warehouse)])
    r = asyncio.run(agent.run("Where is A-2?"))
    assert r.text == "ok", r.error
    assert offered[0] == ["lookup", "status", "warehouse_lookup"]
    assert agent.run_sync("again").text == "ok"


def test_a_failing_toolset_fails_the_run_naming_it() -> None:
    def broken() -> List[Any]:
        raise KeyError("flags")

    def not_tools() -> List[Any]:
        return ["lookup"]

    model = FunctionModel(lambda m, i: "hi")
    with pytest.raises(
        RunError, match=r"tools_unavailable\): toolset \"broken\": its function raised KeyError: 'flags'"
    ):
        Agent(model, toolsets=[Toolset(broken)]).run_sync("hi")
    with pytest.raises(
        RunError, match=r"toolset \"flags\": its function raised ConfigError: \[0\]: a tool needs a function, got str"
    ):
        Agent(model, toolsets=[Toolset(not_tools, name="flags")]).run_sync("hi")
    with pytest.raises(ConfigError, match="Toolset: expected a function returning tools, got list"):
        Toolset([lookup])  # type: ignore[arg-type]
