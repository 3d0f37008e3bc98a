"""Testing an agent without a provider.

``TestModel`` calls the agent's tools with arguments made from their
schemas; ``FunctionModel`` answers with your function; ``Recorder`` writes
a real model's exchanges to a cassette and ``Replay`` serves them back
offline, checking each request against the recorded one.

    python testing.py                       # offline
    PARLANCE_MODEL=openai:gpt-4o-mini python testing.py   # records from a provider
"""

from __future__ import annotations

import os
import pathlib
import tempfile
from typing import Any, Dict, List, Union

from parlance import Agent, Model, RunError, tool
from parlance.testing import FunctionModel, Recorder, Replay, RequestInfo, ScriptedModel, TestModel


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}"


def build(model: Union[str, Model]) -> Agent[str]:
    return Agent(model, instructions="You answer questions about the weather.", tools=[weather])


def offered(messages: List[Dict[str, Any]], info: RequestInfo) -> str:
    return "offered: " + ", ".join(t["name"] for t in info.tools)


def main() -> None:
    # 1. No script: the tool is called with schema-valid arguments.
    print("TestModel:", build(TestModel()).run_sync("Weather?").text)

    # 2. Your function of the request.
    print("FunctionModel:", build(FunctionModel(offered)).run_sync("Hi").text)

    # 3. Record once, replay offline.
    real: Union[str, Model] = os.environ.get("PARLANCE_MODEL") or ScriptedModel(
        [
            {
                "content": [
                    {"type": "tool_call", "tool_call": {"id": "c1", "name": "weather", "arguments": {"city": "Paris"}}}
                ]
            },
            "It is sunny in Paris.",
        ]
    )
    with tempfile.TemporaryDirectory() as d:
        cassette = pathlib.Path(d) / "weather.jsonl"
        question = "What's the weather in Paris?"
        recorded = build(Recorder(real, cassette)).run_sync(question)
        replayed = build(Replay(cassette)).run_sync(question)
        assert replayed.messages == recorded.messages
        print("Replay:", replayed.text)
        try:
            build(Replay(cassette)).run_sync("And in Rome?")
        except RunError as e:
            print("Changed:", e)


if __name__ == "__main__":
    main()
