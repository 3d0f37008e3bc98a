"""100 concurrent runs from one event loop against a local mock."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Dict

from conftest import make_agent
from mock_openai import calls, text, tool_messages

from parlance import tool

in_flight = 0
most = 0


@tool
async def get_order(order_id: str) -> Dict[str, Any]:
    """Look up one order."""
    global in_flight, most
    in_flight += 1
    most = max(most, in_flight)
    await asyncio.sleep(0.01)
    in_flight -= 1
    return {"order_id": order_id, "status": "shipped"}


def script(body: Dict[str, Any]) -> Any:
    if body["messages"][-1]["role"] == "user":
        n = body["messages"][-1]["content"]
        return calls(*[(f"c{i}", "get_order", {"order_id": f"{n}-{i}"}) for i in range(3)])
    ids = [json.loads(m["content"])["order_id"] for m in tool_messages(body)]
    return text(" ".join(ids))


def test_100_concurrent_runs_from_one_loop(mock: Any) -> None:
    mock.script = script
    agent = make_agent(mock, tools=[get_order])

    async def main() -> Any:
        return await asyncio.gather(*[agent.run(f"R{i}") for i in range(100)])

    responses = asyncio.run(main())
    assert [r.text for r in responses] == [f"R{i}-0 R{i}-1 R{i}-2" for i in range(100)]
    assert len(mock.requests) == 200
    assert most > 3, "the tools of different runs overlapped on the loop"
