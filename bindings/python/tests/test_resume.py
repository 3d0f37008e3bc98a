"""Runs that finish on their own after their process died: a worker process
starts a run on a stored thread (SQLite file, PostgreSQL), its tool call
is in flight when the worker is killed with SIGKILL; this process finds the
run dead once its lease runs out and carries it on (``resume_dead_runs``):
the call runs again here, once, with the same idempotency key, the model's
committed step is not asked again, and the same run ends ``completed``."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from parlance import Agent, ConfigError, Store, StoreError, ToolContext, tool
from parlance.testing import FunctionModel

WORKER = textwrap.dedent(
    """
    import asyncio, sys, time
    from parlance import Agent, Store, ToolContext, tool
    from parlance.testing import FunctionModel

    url, name, started = sys.argv[1], sys.argv[2], sys.argv[3]

    @tool
    def charge(amount: int, ctx: ToolContext) -> str:
        \"\"\"Charge a card.\"\"\"
        open(started, "w").write(ctx.idempotency_key)
        time.sleep(60)
        return "never"

    def answer(messages, info):
        if not any(m["role"] == "tool" for m in messages):
            return {"content": [{"type": "tool_call", "tool_call": {
                "id": "c1", "name": "charge", "arguments": {"amount": 5}}}]}
        return "Charged."

    async def main():
        store = Store(url, lease=0.5)
        thread = await store.create_thread()
        print(thread, flush=True)
        agent = Agent(FunctionModel(answer), tools=[charge], name=name)
        await agent.run("Charge me 5", store=store, thread_id=thread)

    asyncio.run(main())
    """
)


def killed_mid_tool(url: str, tmp_path: Path, name: str) -> tuple[str, str]:
    """Runs the worker until its tool call is in flight, then kills it:
    the thread, and the idempotency key the call had."""
    started = tmp_path / f"started-{name}"
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, url, name, str(started)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout is not None
    thread = worker.stdout.readline().strip()
    deadline = time.monotonic() + 30
    while not started.exists() or not started.read_text():
        assert time.monotonic() < deadline, "the worker's tool never started"
        time.sleep(0.02)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()
    time.sleep(0.8)  # past the lease
    return thread, started.read_text()


def test_a_killed_workers_run_is_carried_on_here(url: str, tmp_path: Path) -> None:
    name = f"support-{os.getpid()}-{time.monotonic_ns()}"
    thread, key = killed_mid_tool(url, tmp_path, name)
    keys: List[str] = []
    asked: List[int] = []

    @tool
    def charge(amount: int, ctx: ToolContext) -> str:
        """Charge a card."""
        keys.append(ctx.idempotency_key)
        return f"charged {amount}"

    def answer(messages: List[Dict[str, Any]], info: Any) -> Any:
        asked.append(len(messages))
        return "Charged."

    agent = Agent(FunctionModel(answer), tools=[charge], name=name)
    other = Agent(FunctionModel(answer), tools=[charge], name=f"{name}-other")

    async def main() -> Any:
        store = Store(url, lease=0.5)
        dead = [r for r in await store.dead_runs() if r["thread_id"] == thread]
        assert len(dead) == 1 and dead[0]["agent"] == name, dead
        # An agent that did not make it leaves it alone.
        assert all(r["thread_id"] != thread for r in await store.resume_dead_runs([other]))
        resumed = [r for r in await store.resume_dead_runs([agent]) if r["thread_id"] == thread]
        return store, dead[0], resumed, await store.runs(thread), await store.messages(thread)

    store, dead, resumed, runs, messages = asyncio.run(main())
    assert resumed == [{"run_id": dead["run_id"], "thread_id": thread, "status": "completed", "reason": None}]
    assert [r["id"] for r in runs] == [dead["run_id"]], "the same run went on"
    assert runs[0]["status"] == "completed"
    assert keys == [key] == [f"{thread}/c1"], "the call ran again once, with its key"
    assert asked == [3], "only the step after the tool was asked (user, call, result)"
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    # Nothing is dead any more; carrying it on again is refused.
    with pytest.raises(StoreError, match="not a dead run"):
        agent.carry_on_sync(dead["run_id"], store=store)


def test_carry_on_checks_its_arguments(tmp_path: Path) -> None:
    store = Store(f"sqlite://{tmp_path}/t.db")
    agent = Agent(FunctionModel(lambda m, i: "hi"), name="a")
    with pytest.raises(ConfigError, match="max_attempts: expected a whole number from 1 to 1000, got 0"):
        agent.carry_on_sync("run_x", store=store, max_attempts=0)
    with pytest.raises(StoreError, match="run_x is not a dead run"):
        agent.carry_on_sync("run_x", store=store)
    assert store.resume_dead_runs_sync([agent]) == []
