"""Context policies (issue 31) through the wheel and the OpenAI mock on
127.0.0.1: a thread past its window is compacted, stored, and the next run
sends the summary; drop_oldest and fail; the errors of bad policies."""

from __future__ import annotations

import asyncio
from typing import Any, Iterator, List

import pytest
from conftest import make_agent
from mock_openai import text

from parlance import ConfigError, ContextCompacted, ContextPolicy, MessageCompleted, RunError, Store

LONG = "x" * 400  # ~100 tokens by the estimate


def answers(*replies: Any) -> Any:
    it: Iterator[Any] = iter(replies)
    return lambda body: next(it)


def sent(request: Any) -> List[str]:
    return [m["content"] for m in request["messages"]]


def test_a_thread_past_its_window_is_compacted_stored_and_the_next_run_sends_the_summary(mock: Any) -> None:
    store = Store("sqlite::memory:")
    thread = store.create_thread_sync()
    agent = make_agent(mock, instructions="Help.", context=ContextPolicy.compact(window=100))
    mock.script = answers(text("A-17 shipped."))
    agent.run_sync(f"Where is A-17? {LONG}", store=store, thread_id=thread)

    # Past 80 of 100 tokens: first the summary, then the answer.
    mock.script = answers(text("The user asked about A-17; it shipped."), text("B-2 is on its way."))
    mock.requests.clear()

    async def events() -> List[Any]:
        return [e async for e in agent.stream(f"And B-2? {LONG}", store=store, thread_id=thread)]

    got = asyncio.run(events())
    compacted = [e for e in got if isinstance(e, ContextCompacted)]
    assert len(compacted) == 1
    c = compacted[0]
    assert (c.strategy, c.replaces) == ("compact", 2)
    assert c.tokens_before > 80 and c.tokens_before > c.tokens_after
    after = got[got.index(c) + 1]
    assert isinstance(after, MessageCompleted)
    assert after.message["metadata"]["compaction"]["replaces"] == 2

    assert len(mock.requests) == 2
    transcript = mock.requests[0]["messages"][1]["content"]
    assert "Where is A-17?" in transcript and "A-17 shipped." in transcript
    main = sent(mock.requests[1])
    assert main[0] == "Help."
    assert main[1].endswith("The user asked about A-17; it shipped.")
    assert main[2].startswith("And B-2?")
    assert len(main) == 3

    # The store keeps every message; the next run sends the summary, not
    # the range, and writes no new one.
    kept: Any = store.messages_sync(thread)
    assert [m["role"] for m in kept] == ["user", "assistant", "user", "user", "assistant"]
    assert kept[3]["metadata"]["compaction"]["strategy"] == "compact"
    mock.script = answers(text("You're welcome."))
    mock.requests.clear()
    agent.run_sync("Thanks!", store=store, thread_id=thread)
    assert len(mock.requests) == 1
    third = sent(mock.requests[0])
    assert third[1].endswith("it shipped.")
    assert third[3:] == ["B-2 is on its way.", "Thanks!"]


def test_the_policys_own_model_writes_the_summary(mock: Any) -> None:
    from parlance import OpenAI

    writer = OpenAI(base_url=mock.url, api_key="sk-test").model("gpt-4o")
    policy = ContextPolicy.compact(window=100, model=writer, instructions="One line.")
    mock.script = answers(text("SUMMARY"), text("ok"))
    turns = [{"messages": [{"role": "user", "content": LONG}, {"role": "assistant", "content": "ok"}]}]
    make_agent(mock, context=policy).run_sync(f"more {LONG}", turns=turns)
    assert mock.requests[0]["model"] == "gpt-4o"
    assert mock.requests[0]["messages"][0]["content"] == "One line."
    assert mock.requests[1]["model"] == "gpt-4o-mini"


def test_drop_oldest_and_fail(mock: Any) -> None:
    turns = [{"messages": [{"role": "user", "content": LONG}, {"role": "assistant", "content": "ok"}]}]
    mock.script = answers(text("fine"))
    r = make_agent(mock, context=ContextPolicy.drop_oldest(window=100)).run_sync(f"more {LONG}", turns=turns)
    assert r.status == "completed"
    assert [m["content"][:4] for m in mock.requests[0]["messages"]] == ["more"]
    record: Any = r.messages[1]
    assert record["metadata"]["compaction"]["strategy"] == "drop_oldest"

    mock.requests.clear()
    with pytest.raises(RunError) as e:
        make_agent(mock, context=ContextPolicy.fail(window=100)).run_sync(f"more {LONG}", turns=turns)
    assert e.value.code == "context_too_long"
    assert "window of gpt-4o-mini" in e.value.message
    assert mock.requests == []


def test_a_bad_policy_is_refused_naming_the_field(mock: Any) -> None:
    with pytest.raises(ConfigError, match=r"context.keep: expected a share of the window above 0 and below"):
        make_agent(mock, context=ContextPolicy.compact(keep=0.9))
    with pytest.raises(ConfigError, match=r"context.trigger: expected a share of the window in \(0, 1\]"):
        make_agent(mock, context=ContextPolicy.fail(trigger=0))
    with pytest.raises(ConfigError, match=r"context\.model: only a compact strategy writes summaries"):
        make_agent(mock, context=ContextPolicy("drop_oldest", model="openai:gpt-4o"))
    with pytest.raises(ConfigError, match=r"context: expected a ContextPolicy, got dict"):
        make_agent(mock, context={"strategy": "compact"})
