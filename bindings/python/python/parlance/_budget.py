"""Budgets: what each run, each thread and each thread owner may spend.

    agent = Agent(
        "openai:gpt-4o",
        budget={
            "run": {"cost": 0.50, "model_calls": 20},
            "owner_day": {"cost": 5.0},      # counted by the store, all threads of the owner
            "on_exhausted": "answer",        # or "stop"
        },
    )

Each limit is checked before every model call. At a limit the model is
asked once more, without tools, to answer with what it has (``"stop"``: not
even that); the run then raises ``RunError`` ``budget_exhausted`` (its
response, with that answer, on ``.response``). Thread and owner limits read
what the store counted for runs on its threads (``Store.spent``); an owner
is the one given to ``Store.create_thread(owner=...)``.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict


class BudgetLimits(TypedDict, total=False):
    """The limits of one scope (any of them; unset: no limit)."""

    tokens: int
    """Input plus output tokens."""
    cost: float
    """US dollars (priced models only: give others a token limit)."""
    model_calls: int
    """Model calls."""
    tool_calls: int
    """Tool calls the model asked for."""


class Budget(TypedDict, total=False):
    """Limits per run, per thread and per thread owner (UTC day and month)."""

    run: BudgetLimits
    thread: BudgetLimits
    owner_day: BudgetLimits
    owner_month: BudgetLimits
    on_exhausted: Literal["answer", "stop"]


class Spent(TypedDict):
    """What the store counted for one scope."""

    tokens: int
    cost: float
    model_calls: int
    tool_calls: int


class ThreadSpent(TypedDict):
    """``Store.spent``: the thread's, and its owner's today and this month (UTC)."""

    thread: Spent
    owner_day: Spent
    owner_month: Spent
