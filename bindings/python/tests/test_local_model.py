"""The embedded local model (``"local"``, llama.cpp in the wheel) from
Python, offline: a tool call whose arguments the grammar keeps to the
tool's schema, run by the engine, then an answer; a structured output.
Needs the default model in the cache (``parlance.pull_local_model()`` or
``parlance model pull``); with PARLANCE_REQUIRE_MODEL=1 (scripts/test) a
missing model fails instead of skipping."""

from __future__ import annotations

import os
import pathlib
import re
from typing import Any, Dict, List

import pytest
from typing_extensions import TypedDict

import parlance
from parlance import Agent, tool


@pytest.fixture(autouse=True)
def model_file() -> None:
    path = parlance.local_model_path()
    assert path is not None, "the wheel was built without the local model"
    if not pathlib.Path(path).exists():
        if os.environ.get("PARLANCE_REQUIRE_MODEL"):
            pytest.fail(f"PARLANCE_REQUIRE_MODEL is set but {path} is missing (parlance.pull_local_model())")
        pytest.skip(f"no local model at {path}")


ORDER = {
    "type": "object",
    "properties": {"order_id": {"type": "string", "pattern": "^A-[0-9]{4}$"}},
    "required": ["order_id"],
    "additionalProperties": False,
}


class Place(TypedDict):
    city: str
    country: str


@tool(schema=ORDER)
def lookup_order(order_id: str) -> Dict[str, Any]:
    """Looks an order up by its id."""
    return {"order_id": order_id, "status": "shipped"}


def test_the_local_model_calls_a_tool_with_schema_valid_arguments() -> None:
    agent = Agent("local", instructions="You help customers with their orders.", tools=[lookup_order])
    r = agent.run_sync("Where is my order A-1001?")
    assert r.status == "completed", r.error
    messages: List[Dict[str, Any]] = [dict(m) for m in r.messages]
    call = next(b["tool_call"] for b in messages[1]["content"] if b["type"] == "tool_call")
    assert call["name"] == "lookup_order"
    assert re.fullmatch(r"A-[0-9]{4}", call["arguments"]["order_id"]), call
    result = messages[2]["content"][0]["tool_result"]
    assert result.get("status", "ok") == "ok", "the engine validated and ran it"
    assert isinstance(r.output, str) and r.output, "an answer after the result"
    assert r.usage.input_tokens > 0 and r.usage.output_tokens > 0
    assert r.messages[-1].get("provider") == "local"


def test_a_structured_output_from_the_local_model() -> None:
    agent = Agent("local", output_type=Place)
    r = agent.run_sync("What is the capital of France?")
    assert r.status == "completed", r.error
    assert isinstance(r.output["city"], str) and r.output["city"]
