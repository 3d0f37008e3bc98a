"""A list of models is a fallback: a 429 and a 503 move on to the next
model, a 400 does not; a 429 with retry-after keeps a model out until
then; bad lists and bad kinds are ``ConfigError``s naming the setting."""

from __future__ import annotations

import asyncio
from typing import Any, Dict, Iterator, List

import pytest
from mock_openai import MockOpenAI, error, text

import parlance
from parlance import Agent, ConfigError, JsonValue, Message, RunError


@pytest.fixture
def mocks() -> Iterator[List[MockOpenAI]]:
    ms = [MockOpenAI() for _ in range(3)]
    yield ms
    for m in ms:
        m.close()


def model(mock: MockOpenAI, name: str) -> parlance.Model:
    # No retries of the model's own: the fallback moves on at once.
    return parlance.OpenAI(base_url=mock.url, api_key="sk-test", max_retries=0).model(name)


def fallback_steps(message: Message) -> List[Dict[str, JsonValue]]:
    """The models a fallback passed over, from the answer's metadata."""
    metadata = message.get("metadata")
    assert metadata is not None, "the answer has no metadata"
    steps = metadata["parlance_fallback"]
    assert isinstance(steps, list)
    out: List[Dict[str, JsonValue]] = []
    for step in steps:
        assert isinstance(step, dict)
        out.append(step)
    return out


def test_a_429_and_a_503_fall_back(mocks: List[MockOpenAI]) -> None:
    limited, down, spare = mocks
    limited.script = lambda body: error(429, "Rate limit reached")
    down.script = lambda body: error(503, "Service unavailable")
    spare.script = lambda body: text("Hello from the spare.")
    agent = Agent([model(limited, "first"), model(down, "second"), model(spare, "third")])
    r = agent.run_sync("Hi")
    assert r.text == "Hello from the spare."
    answer = r.messages[-1]
    assert answer["model"] == "third"
    assert [(s["model"], s["reason"]) for s in fallback_steps(answer)] == [
        ("openai:first", "rate_limited"),
        ("openai:second", "overloaded"),
    ]
    assert (len(limited.requests), len(down.requests), len(spare.requests)) == (1, 1, 1)


def test_a_streamed_run_falls_back(mocks: List[MockOpenAI]) -> None:
    down, spare, _ = mocks
    down.script = lambda body: error(503, "Service unavailable")
    spare.script = lambda body: text("Streamed from the spare.")
    agent = Agent((model(down, "first"), model(spare, "second")))

    async def main() -> List[Any]:
        return [e async for e in agent.stream("Hi")]

    events = asyncio.run(main())
    deltas = "".join(e.text for e in events if isinstance(e, parlance.TextDelta))
    assert deltas == "Streamed from the spare."
    assert spare.requests[0]["stream"] is True


def test_a_400_does_not_fall_back(mocks: List[MockOpenAI]) -> None:
    refuses, spare, _ = mocks
    refuses.script = lambda body: error(400, "messages: bad")
    spare.script = lambda body: text("never")
    agent = Agent([model(refuses, "first"), model(spare, "second")])
    with pytest.raises(RunError) as e:
        agent.run_sync("Hi")
    assert e.value.code == "model_error"
    assert "model[0] openai:first: messages: bad" in e.value.message
    assert spare.requests == []


def test_retry_after_cooldown_and_fallback_on(mocks: List[MockOpenAI]) -> None:
    limited, spare, down = mocks
    limited.script = lambda body: error(429, "slow down", {"retry-after": "30"})
    spare.script = lambda body: text("spare")
    agent = Agent([model(limited, "first"), model(spare, "second")])
    agent.run_sync("Hi")
    r = agent.run_sync("Again")
    assert len(limited.requests) == 1
    assert fallback_steps(r.messages[-1])[0]["reason"] == "cooling_down"

    down.script = lambda body: error(503, "Service unavailable")
    only_429 = Agent([model(down, "first"), model(spare, "second")], fallback_on=["rate_limited"])
    with pytest.raises(RunError):
        only_429.run_sync("Hi")
    assert len(spare.requests) == 2, "a 503 does not move on when only rate_limited does"


def test_bad_lists_and_kinds_name_the_setting() -> None:
    with pytest.raises(ConfigError, match=r"^model: expected at least one model, got an empty list$"):
        Agent([])
    m = parlance.OpenAI(api_key="sk-test").model("gpt-4o-mini")
    with pytest.raises(ConfigError, match=r"^model\[1\]: .*nowhere"):
        Agent([m, "nowhere:x"])
    with pytest.raises(ConfigError, match=r"^model\[1\]: model: expected a model string"):
        Agent([m, 3])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r'^fallback_on\[1\]: unknown error kind "rate_limit"'):
        Agent([m, m], fallback_on=["server", "rate_limit"])
    with pytest.raises(ConfigError, match=r'^fallback_on\[0\]: "invalid_request" never falls back'):
        Agent([m, m], fallback_on=["invalid_request"])
    with pytest.raises(ConfigError, match=r"^fallback_on: applies to a list of models"):
        Agent(m, fallback_on=["server"])


def test_cooldowns_shared_through_a_store_reach_another_agent(mocks: List[MockOpenAI], tmp_path: Any) -> None:
    limited, spare, _ = mocks
    limited.script = lambda body: error(429, "Rate limit reached", {"retry-after": "120"})
    spare.script = lambda body: text("From the spare.")
    # One store file: two agents stand for two processes of it.
    store = parlance.Store(f"sqlite://{tmp_path / 'shared.db'}")
    first = Agent([model(limited, "m"), model(spare, "m")], shared_cooldowns=store)
    second = Agent([model(limited, "m"), model(spare, "m")], shared_cooldowns=store)
    assert first.run_sync("Hi").text == "From the spare."
    r = second.run_sync("Hi")
    assert [s["reason"] for s in fallback_steps(r.messages[-1])] == ["cooling_down"]
    assert (len(limited.requests), len(spare.requests)) == (1, 2)
    # Without the store, another agent knows nothing of it.
    Agent([model(limited, "m"), model(spare, "m")]).run_sync("Hi")
    assert len(limited.requests) == 2
    with pytest.raises(ConfigError, match="shared_cooldowns: applies to a list of models"):
        Agent(model(spare, "m"), shared_cooldowns=store)
    with pytest.raises(ConfigError, match="shared_cooldowns: expected a Store, got str"):
        Agent([model(spare, "m")], shared_cooldowns="sqlite://x.db")  # type: ignore[call-overload]
