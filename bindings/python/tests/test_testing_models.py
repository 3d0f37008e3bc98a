"""The test models of ``parlance.testing`` and models written in Python,
through the installed wheel: a cassette recorded from a provider (the
OpenAI mock on 127.0.0.1) replays offline with the same result; a request
that differs is refused with the difference named; the cassette under
testdata/cassettes replays as it does in Rust and TypeScript; TestModel
calls a tool with arguments its schema accepts; a model that raises fails
the run with its message."""

from __future__ import annotations

import asyncio
import contextvars
import json
import pathlib
import re
from typing import Any, Dict, List

import pytest
from conftest import REPO
from mock_openai import after_tools, calls

from parlance import Agent, ConfigError, Model, RunError, TextDelta, tool
from parlance.testing import FunctionModel, Recorder, Replay, RequestInfo, ScriptedModel, TestModel

SHARED = REPO / "testdata" / "cassettes" / "weather.jsonl"
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


@tool(schema=WEATHER_SCHEMA)
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"Sunny and 21 °C in {city}"


def weather_agent(model: Any) -> Agent[str]:
    """The agent of the shared cassette, as every language builds it."""
    return Agent(model, instructions="You answer questions about the weather.", tools=[weather])


def test_a_recorded_run_replays_offline_with_the_same_result(mock: Any, tmp_path: pathlib.Path) -> None:
    mock.script = after_tools(
        calls(("call_1", "weather", {"city": "Paris"})), lambda b: "It is sunny and 21 °C in Paris."
    )
    cassette = tmp_path / "weather.jsonl"
    recorder = Recorder(
        Model.build("openai", "gpt-4o-mini", {"base_url": mock.url, "api_key": "sk-test"}), str(cassette)
    )
    recorded = weather_agent(recorder).run_sync("What's the weather in Paris?")
    assert recorded.text == "It is sunny and 21 °C in Paris."
    assert len(mock.requests) == 2
    lines = cassette.read_text().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["request"]["messages"][1]["content"][0]["text"] == "What's the weather in Paris?"

    mock.requests.clear()
    replayed = weather_agent(Replay(str(cassette))).run_sync("What's the weather in Paris?")
    assert mock.requests == []  # offline
    assert replayed.output == recorded.output
    assert replayed.messages == recorded.messages
    # The requests are the ones the Rust test recorded for the same agent:
    # one cassette for three languages.
    # (The mock's answers differ from the Rust test's replay server's in
    # their ids and usage; the agent's own parts are the same.)
    mine = [json.loads(line)["request"] for line in lines]
    shared = [json.loads(line)["request"] for line in SHARED.read_text().splitlines()]
    assert mine[0] == shared[0]
    assert mine[1]["messages"][3] == shared[1]["messages"][3]  # the tool's result


def test_the_shared_cassette_replays_streamed_and_a_changed_request_is_named() -> None:
    async def main() -> None:
        deltas: List[str] = []
        async for e in weather_agent(Replay(str(SHARED))).stream("What's the weather in Paris?"):
            if isinstance(e, TextDelta):
                deltas.append(e.text)
        assert "".join(deltas) == "It is sunny and 21 °C in Paris."
        assert len(deltas) > 1

    asyncio.run(main())
    replay = Replay(str(SHARED))
    with pytest.raises(RunError) as e:
        weather_agent(replay).run_sync("What's the weather in Rome?")
    assert (
        "exchange 1 of 2: the request is not the recorded one: messages[1].content[0].text: "
        'recorded "What\'s the weather in Paris?", got "What\'s the weather in Rome?"'
    ) in str(e.value)
    assert replay.remaining == 1


def test_replay_of_a_file_that_is_not_a_cassette_is_a_config_error(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"request": {"messages": []}}\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl line 1: response: required field missing"):
        Replay(str(bad))


def test_test_model_calls_the_tool_with_arguments_its_schema_accepts() -> None:
    seen: List[Dict[str, Any]] = []

    @tool
    def book(name: str, guests: int, when: str) -> str:
        """Book a table."""
        seen.append({"name": name, "guests": guests, "when": when})
        return "booked"

    model = TestModel()
    r = Agent(model, tools=[book]).run_sync("Book for two")
    assert seen == [{"name": "a", "guests": 0, "when": "a"}]
    assert r.text == '{"book":"booked"}'
    assert len(model.received) == 2
    assert model.received[0]["tools"][0]["name"] == "book"
    assert model.call_tools == "all"
    # None called; a text of one's own.
    r = Agent(TestModel(call_tools=[], text="Done."), tools=[book]).run_sync("Hi")
    assert r.text == "Done." and len(seen) == 1
    # With an output type: a value of its schema.
    from dataclasses import dataclass

    @dataclass
    class Rating:
        stars: int
        comment: str

    out = Agent(TestModel(), output_type=Rating).run_sync("Rate it").output
    assert out == Rating(stars=0, comment="a")
    with pytest.raises(ConfigError, match="call_tools"):
        TestModel(call_tools="some")


def test_scripted_model_answers_its_script_and_keeps_the_requests() -> None:
    model = ScriptedModel(["Hello!", {"content": [{"type": "text", "text": "Again."}]}])
    agent = Agent(model)
    assert agent.run_sync("Hi").text == "Hello!"
    assert agent.run_sync("Hi again").text == "Again."
    assert model.remaining == 0
    assert [r["messages"][-1]["content"][0]["text"] for r in model.received] == ["Hi", "Hi again"]
    with pytest.raises(ConfigError, match=r"messages\[0\]"):
        ScriptedModel([{"content": [{"type": "txt"}]}])


class Echo(Model):
    """A model written in Python: async, on the caller's loop."""

    provider = "mine"
    model_id = "echo-1"

    def __init__(self) -> None:
        self.loops: List[Any] = []

    async def request(
        self, messages: List[Dict[str, Any]], *, tools: List[Dict[str, Any]], settings: Dict[str, Any]
    ) -> Dict[str, Any]:
        self.loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)
        last = messages[-1]["content"][0]["text"]
        return {"content": [{"type": "text", "text": f"{last} ({len(tools)} tools, {settings.get('max_tokens')})"}]}


REQUEST_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("request_var", default="unset")


def test_a_model_written_in_python_runs_on_the_callers_loop() -> None:
    model = Echo()
    agent = Agent(model, tools=[weather], model_settings={"max_tokens": 50})

    async def main() -> None:
        r = await agent.run("ping")
        assert r.text == "ping (1 tools, 50)"
        assert model.loops == [asyncio.get_running_loop()]
        assert r.messages[-1]["provider"] == "mine" and r.messages[-1]["model"] == "echo-1"
        deltas = [e.text async for e in agent.stream("pong") if isinstance(e, TextDelta)]
        assert "".join(deltas) == "pong (1 tools, 50)"

    asyncio.run(main())
    # In a _sync run, on a loop of its own.
    assert agent.run_sync("sync").text == "sync (1 tools, 50)"


def test_a_sync_model_and_its_context_variables() -> None:
    class Sync(Model):
        def request(
            self, messages: List[Dict[str, Any]], *, tools: List[Dict[str, Any]], settings: Dict[str, Any]
        ) -> str:
            return "plain text"

    assert Agent(Sync()).run_sync("hi").text == "plain text"

    class Ctx(Model):
        async def request(
            self, messages: List[Dict[str, Any]], *, tools: List[Dict[str, Any]], settings: Dict[str, Any]
        ) -> str:
            return REQUEST_VAR.get()

    async def main() -> str:
        REQUEST_VAR.set("from the caller")
        return (await Agent(Ctx()).run("hi")).text

    assert asyncio.run(main()) == "from the caller"


def test_a_model_that_raises_fails_the_run_with_its_message() -> None:
    class Broken(Model):
        async def request(
            self, messages: List[Dict[str, Any]], *, tools: List[Dict[str, Any]], settings: Dict[str, Any]
        ) -> str:
            raise ValueError("the backend is down")

    with pytest.raises(RunError, match=re.escape("Broken.request raised ValueError: the backend is down")) as e:
        Agent(Broken()).run_sync("hi")
    assert e.value.code == "model_error"

    class Wrong(Model):
        def request(
            self, messages: List[Dict[str, Any]], *, tools: List[Dict[str, Any]], settings: Dict[str, Any]
        ) -> Any:
            return {"content": [{"type": "txt"}]}

    with pytest.raises(RunError, match=r"Wrong.request returned a message that is not canonical: content\[0\].type"):
        Agent(Wrong()).run_sync("hi")

    class NoRequest(Model):
        pass

    with pytest.raises(ConfigError, match="NoRequest has no request method"):
        Agent(NoRequest())


def test_function_model_sync_and_async() -> None:
    def answer(messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        if not any(m["role"] == "tool" for m in messages):
            return {
                "content": [
                    {"type": "tool_call", "tool_call": {"id": "c1", "name": "weather", "arguments": {"city": "Oslo"}}}
                ]
            }
        return f"{info.tools[0]['name']}: {messages[-1]['content'][0]['tool_result']['content'][0]['text']}"

    r = Agent(FunctionModel(answer), tools=[weather]).run_sync("Weather in Oslo?")
    assert r.text == "weather: Sunny and 21 °C in Oslo"

    async def later(messages: List[Dict[str, Any]], info: RequestInfo) -> str:
        await asyncio.sleep(0)
        return f"async, {info.settings}"

    assert Agent(FunctionModel(later)).run_sync("hi").text == "async, {}"
    assert asyncio.run(Agent(FunctionModel(later)).run("hi")).text == "async, {}"


def test_recorder_of_a_python_model(tmp_path: pathlib.Path) -> None:
    cassette = tmp_path / "echo.jsonl"
    recorded = Agent(Recorder(Echo(), str(cassette))).run_sync("hi")
    replayed = Agent(Replay(str(cassette))).run_sync("hi")
    assert replayed.messages == recorded.messages
    assert json.loads(cassette.read_text())["request"]["model"] == "echo-1"


def test_the_testing_example_runs_offline(capsys: Any, monkeypatch: Any) -> None:
    from test_examples import example

    monkeypatch.delenv("PARLANCE_MODEL", raising=False)
    example("testing").main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == 'TestModel: {"weather":"Sunny in a"}'
    assert lines[1] == "FunctionModel: offered: weather"
    assert lines[2] == "Replay: It is sunny in Paris."
    assert (
        lines[3].startswith("Changed: ") and 'recorded "What\'s the weather in Paris?", got "And in Rome?"' in lines[3]
    )
