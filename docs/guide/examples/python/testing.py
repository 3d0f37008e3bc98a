# Testing an agent with no provider, no key, no network.
import pathlib
import tempfile
from typing import Any

from parlance import Agent, RunError, tool
from parlance.testing import FunctionModel, Recorder, Replay, RequestInfo, ScriptedModel, TestModel


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny in {city}"


# TestModel: calls every tool with arguments made from its schema, then answers.
model = TestModel()  # or TestModel(call_tools=["weather"], text="Done.", seed=1)
r = Agent(model, tools=[weather]).run_sync("Weather?")
assert r.text == '{"weather":"Sunny in a"}'
assert model.received[0]["tools"][0]["name"] == "weather"
print("TestModel:", r.text)


# FunctionModel: your function of the messages, the tools and the settings.
CALL = {"content": [{"type": "tool_call", "tool_call": {"id": "c1", "name": "weather", "arguments": {"city": "Oslo"}}}]}


def answer(messages: list[dict[str, Any]], info: RequestInfo) -> Any:
    if not any(m["role"] == "tool" for m in messages):
        return CALL
    return "offered: " + ", ".join(t["name"] for t in info.tools)


print("FunctionModel:", Agent(FunctionModel(answer), tools=[weather]).run_sync("Weather in Oslo?").text)

# ScriptedModel: its answers in order; one request too many fails the run.
scripted = ScriptedModel(["Hello!", {"content": [{"type": "text", "text": "Again."}]}])
agent = Agent(scripted)
print("ScriptedModel:", agent.run_sync("Hi").text, agent.run_sync("Hi again").text, scripted.remaining)

# Recorder and Replay: record a model's exchanges once, replay them offline.
with tempfile.TemporaryDirectory() as d:
    cassette = pathlib.Path(d) / "weather.jsonl"
    real = ScriptedModel([CALL, "It is sunny in Oslo."])  # a real model here: "openai:gpt-4o-mini"
    recorded = Agent(Recorder(real, cassette), tools=[weather]).run_sync("Weather in Oslo?")
    replayed = Agent(Replay(cassette), tools=[weather]).run_sync("Weather in Oslo?")
    assert replayed.messages == recorded.messages
    print("Replay:", replayed.text)
    try:
        Agent(Replay(cassette), tools=[weather]).run_sync("And in Rome?")
    except RunError as e:
        print("Changed:", str(e)[str(e).index("exchange") :])  # names the exchange and the first difference
