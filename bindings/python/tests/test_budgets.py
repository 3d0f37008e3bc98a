"""Budgets (issue 31) through the wheel and the OpenAI mock on 127.0.0.1:
a run at its limit answers once without tools, then raises
``budget_exhausted``; ``stop`` asks nothing more; an owner's budget holds
across threads of a store; bad budgets name the setting."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from conftest import make_agent
from mock_openai import calls, text

from parlance import Budget, ConfigError, RunError, Store, tool


@tool
def get_order(order_id: str) -> str:
    """Look up an order."""
    return f"{order_id} shipped"


def answers(*replies: Any) -> Any:
    it: Iterator[Any] = iter(replies)
    return lambda body: next(it)


def test_a_run_at_its_limit_answers_once_without_tools_then_raises(mock: Any) -> None:
    budget: Budget = {"run": {"tool_calls": 2}}
    agent = make_agent(mock, tools=[get_order], budget=budget)
    mock.script = answers(
        calls(("c1", "get_order", {"order_id": "A-1"})),
        calls(("c2", "get_order", {"order_id": "A-2"})),
        text("A-1 and A-2 shipped; I stopped there."),
    )
    with pytest.raises(RunError) as e:
        agent.run_sync("Where are A-1 and A-2?")
    assert e.value.code == "budget_exhausted"
    assert e.value.message == "the run's budget is exhausted: 2 of 2 tool calls"
    assert e.value.detail == {"scope": "run", "measure": "tool_calls", "limit": 2.0, "spent": 2.0}
    response = e.value.response
    assert response is not None
    last = response.messages[-1]
    assert last["role"] == "assistant"
    assert [b.get("text") for b in last["content"]] == ["A-1 and A-2 shipped; I stopped there."]
    assert len(mock.requests) == 3
    closing = mock.requests[2]
    assert not closing.get("tools")
    assert "No tool can be called any more" in closing["messages"][-1]["content"]


def test_stop_asks_nothing_more(mock: Any) -> None:
    agent = make_agent(mock, tools=[get_order], budget={"run": {"tokens": 15}, "on_exhausted": "stop"})
    mock.script = answers(calls(("c1", "get_order", {"order_id": "A-1"})))
    with pytest.raises(RunError) as e:
        agent.run_sync("Go")
    assert e.value.message == "the run's budget is exhausted: 15 of 15 tokens"
    assert len(mock.requests) == 1


def test_an_owners_daily_budget_holds_across_threads_of_a_store(mock: Any) -> None:
    store = Store("sqlite::memory:")
    agent = make_agent(mock, budget={"owner_day": {"tokens": 30}})
    mock.script = lambda body: text("Hi.")  # 15 tokens each
    first = store.create_thread_sync(owner="alice")
    second = store.create_thread_sync(owner="alice")
    bobs = store.create_thread_sync(owner="bob")
    agent.run_sync("One", store=store, thread_id=first)
    agent.run_sync("Two", store=store, thread_id=second)
    with pytest.raises(RunError) as e:
        agent.run_sync("Three", store=store, thread_id=second)
    assert e.value.message == "the owner's budget for today (UTC) is exhausted: 30 of 30 tokens"
    assert len(mock.requests) == 2, "no model asked once the budget was spent"
    agent.run_sync("Bob's", store=store, thread_id=bobs)
    spent = store.spent_sync(second)
    assert spent["thread"]["tokens"] == 15
    assert spent["owner_day"] == spent["owner_month"]
    assert spent["owner_day"]["tokens"] == 30 and spent["owner_day"]["model_calls"] == 2
    assert store.spent_sync(bobs)["owner_day"]["tokens"] == 15
    runs = store.runs_sync(second)
    assert [r["status"] for r in runs] == ["completed", "failed"]


@pytest.mark.parametrize(
    "budget, message",
    [
        ({"run": {"cost": -1}}, "budget.run.cost: expected a number of US dollars, 0 or more, got -1"),
        ({"thread": {"tokens": 1.5}}, "budget.thread.tokens: expected a whole number, 0 or more, got 1.5"),
        ({"day": {}}, "budget.day: unknown field (known: run, thread, owner_day, owner_month, on_exhausted)"),
        ({"on_exhausted": "explain"}, 'budget.on_exhausted: expected "answer" or "stop", got "explain"'),
    ],
)
def test_a_budget_that_cannot_be_used_names_the_setting(mock: Any, budget: Any, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        make_agent(mock, budget=budget)
    assert str(e.value) == message
