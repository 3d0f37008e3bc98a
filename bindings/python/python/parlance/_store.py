"""``Store``: threads in SQLite or PostgreSQL, for runs on threads
(``agent.run(..., store=store, thread_id=...)``). Every operation is one
query of the Rust core (``parlance_bindings::store``); each has an
``async`` form and a ``_sync`` one."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Dict, List, Literal, Mapping, Optional, Sequence

from typing_extensions import TypedDict

from . import _core, types
from ._budget import ThreadSpent
from ._errors import RunError, StoreError

if TYPE_CHECKING:
    from ._agent import Agent


class DeadRun(TypedDict):
    """A run whose process died (its lease ran out), as ``dead_runs()``
    lists it: ``agent`` is the name of the agent that made it (``None`` for
    an unnamed one), ``settings`` that agent's settings as recorded."""

    run_id: str
    thread_id: str
    agent: Optional[str]
    settings: Dict[str, Any]


class ResumedRun(TypedDict):
    """What ``resume_dead_runs()`` made of one dead run: its ``status``
    once carried on to its end (``completed``, ``failed``,
    ``requires_approval``), or ``not_resumed`` with the ``reason`` (another
    process took it first, it waits for decisions again, it died too many
    times at the same step). ``reason`` is also a failed run's error."""

    run_id: str
    thread_id: str
    status: Literal["completed", "failed", "requires_approval", "not_resumed"]
    reason: Optional[str]


class Store:
    """Threads in SQLite (``"sqlite:///parlance.db"``, ``"sqlite::memory:"``)
    or PostgreSQL (``"postgres://..."``). Opening migrates the schema; a
    store that cannot be opened raises ``StoreError`` here.

    ``lease`` (seconds, default 30) is how long a run holds its thread
    without renewing it: a process that dies mid-run frees its thread after
    that. ``redact`` lists secrets scrubbed from everything stored from now
    on (messages, errors, outputs)."""

    def __init__(self, url: str, *, lease: Optional[float] = None, redact: Sequence[str] = ()) -> None:
        self.url = url
        self._core = _core.Store(url, {"lease": lease, "redact": list(redact)})

    async def _q(self, op: str, **fields: Any) -> Any:
        return await self._core.query({"op": op, **fields})

    def _q_sync(self, op: str, **fields: Any) -> Any:
        return self._core.query_blocking({"op": op, **fields})

    async def create_thread(self, metadata: Optional[Mapping[str, Any]] = None, *, owner: Optional[str] = None) -> str:
        """A new thread (``metadata``: any JSON object; ``owner``: whose it
        is, for their budgets); its id."""
        thread: Dict[str, Any] = await self._q("create_thread", metadata=_meta(metadata), owner=owner)
        return str(thread["id"])

    async def spent(self, thread_id: str) -> ThreadSpent:
        """What the store counted for budgets: the thread's, its owner's
        today and this month (UTC). Only runs of agents with a thread or
        owner budget are counted."""
        s: ThreadSpent = await self._q("spent", thread_id=thread_id)
        return s

    async def thread(self, thread_id: str) -> Dict[str, Any]:
        """The thread: ``id``, ``owner``, ``metadata``, ``created_at``,
        ``updated_at`` (milliseconds since the epoch)."""
        t: Dict[str, Any] = await self._q("thread", thread_id=thread_id)
        return t

    async def threads(self, *, after: Optional[str] = None, limit: int = 100) -> Dict[str, Any]:
        """A page of threads, oldest first: ``{"items": [...], "next": id}``;
        pass ``next`` as ``after`` for the next page (``None`` at the end)."""
        page: Dict[str, Any] = await self._q("threads", after=after, limit=limit)
        return page

    async def messages(self, thread_id: str) -> List[types.Message]:
        """The thread's messages, in order, as canonical dicts (``types.Message``)."""
        messages: List[types.Message] = await self._q("messages", thread_id=thread_id)
        return messages

    async def message_page(self, thread_id: str, *, start: int = 0, limit: int = 100) -> List[Dict[str, Any]]:
        """``limit`` stored messages from position ``start``: ``seq``,
        ``run_id`` (the run that wrote it) and ``message``."""
        page: List[Dict[str, Any]] = await self._q("message_page", thread_id=thread_id, start=start, limit=limit)
        return page

    async def runs(self, thread_id: str) -> List[Dict[str, Any]]:
        """The thread's runs (id, status, usage, error, output...), oldest first."""
        runs: List[Dict[str, Any]] = await self._q("runs", thread_id=thread_id)
        return runs

    async def run(self, run_id: str) -> Dict[str, Any]:
        """One run's record."""
        run: Dict[str, Any] = await self._q("run", run_id=run_id)
        return run

    async def artifacts(self, thread_id: str) -> List[Dict[str, Any]]:
        """What tools kept for operators (never sent to the model):
        ``seq``, ``tool_call_id``, ``artifact``."""
        a: List[Dict[str, Any]] = await self._q("artifacts", thread_id=thread_id)
        return a

    async def waiting_runs(self, *, limit: int = 100) -> List[Dict[str, Any]]:
        """Runs waiting for decisions, the most recently paused first (their
        pending calls are in their ``output``)."""
        w: List[Dict[str, Any]] = await self._q("waiting", limit=limit)
        return w

    async def dead_runs(self) -> List[DeadRun]:
        """Runs whose process died (``running``, their lease run out),
        oldest first: each can be carried on with ``agent.carry_on()``."""
        d: List[DeadRun] = await self._q("dead_runs")
        return d

    async def resume_dead_runs(self, agents: Sequence[Agent[Any]], *, max_attempts: int = 3) -> List[ResumedRun]:
        """Carries on every dead run that one of ``agents`` made (the agent
        of the run's name; for an unnamed agent, one whose settings are the
        same), concurrently, from its last committed step, and waits for
        their ends (``agent.carry_on()``). Call it at start-up and from time
        to time (every third of the lease finds a dead run soon after its
        lease runs out). A run none of ``agents`` made is left alone."""
        jobs = []
        for run in await self.dead_runs():
            agent = _agent_of(run, agents)
            if agent is not None:
                jobs.append(_carry_on(agent, run, self, max_attempts))
        return list(await asyncio.gather(*jobs))

    def resume_dead_runs_sync(self, agents: Sequence[Agent[Any]], *, max_attempts: int = 3) -> List[ResumedRun]:
        """``resume_dead_runs`` without an event loop (one run after the other)."""
        out: List[ResumedRun] = []
        for run in self.dead_runs_sync():
            agent = _agent_of(run, agents)
            if agent is None:
                continue
            try:
                r = agent.carry_on_sync(run["run_id"], store=self, max_attempts=max_attempts)
                out.append(_resumed(run, r.status, None))
            except RunError as e:
                out.append(_resumed(run, "failed", str(e)))
            except StoreError as e:
                out.append(_resumed(run, "not_resumed", str(e)))
        return out

    async def delete_thread(self, thread_id: str, *, force: bool = False) -> None:
        """Deletes a thread (refused while a run is active on it; with
        ``force``, also when a run waits for decisions there)."""
        await self._q("delete_thread", thread_id=thread_id, force=force)

    def create_thread_sync(self, metadata: Optional[Mapping[str, Any]] = None, *, owner: Optional[str] = None) -> str:
        """``create_thread`` without an event loop."""
        thread: Dict[str, Any] = self._q_sync("create_thread", metadata=_meta(metadata), owner=owner)
        return str(thread["id"])

    def spent_sync(self, thread_id: str) -> ThreadSpent:
        """``spent`` without an event loop."""
        s: ThreadSpent = self._q_sync("spent", thread_id=thread_id)
        return s

    def thread_sync(self, thread_id: str) -> Dict[str, Any]:
        """``thread`` without an event loop."""
        t: Dict[str, Any] = self._q_sync("thread", thread_id=thread_id)
        return t

    def threads_sync(self, *, after: Optional[str] = None, limit: int = 100) -> Dict[str, Any]:
        """``threads`` without an event loop."""
        page: Dict[str, Any] = self._q_sync("threads", after=after, limit=limit)
        return page

    def messages_sync(self, thread_id: str) -> List[types.Message]:
        """``messages`` without an event loop."""
        messages: List[types.Message] = self._q_sync("messages", thread_id=thread_id)
        return messages

    def message_page_sync(self, thread_id: str, *, start: int = 0, limit: int = 100) -> List[Dict[str, Any]]:
        """``message_page`` without an event loop."""
        page: List[Dict[str, Any]] = self._q_sync("message_page", thread_id=thread_id, start=start, limit=limit)
        return page

    def runs_sync(self, thread_id: str) -> List[Dict[str, Any]]:
        """``runs`` without an event loop."""
        runs: List[Dict[str, Any]] = self._q_sync("runs", thread_id=thread_id)
        return runs

    def run_sync(self, run_id: str) -> Dict[str, Any]:
        """``run`` without an event loop."""
        run: Dict[str, Any] = self._q_sync("run", run_id=run_id)
        return run

    def artifacts_sync(self, thread_id: str) -> List[Dict[str, Any]]:
        """``artifacts`` without an event loop."""
        a: List[Dict[str, Any]] = self._q_sync("artifacts", thread_id=thread_id)
        return a

    def waiting_runs_sync(self, *, limit: int = 100) -> List[Dict[str, Any]]:
        """``waiting_runs`` without an event loop."""
        w: List[Dict[str, Any]] = self._q_sync("waiting", limit=limit)
        return w

    def dead_runs_sync(self) -> List[DeadRun]:
        """``dead_runs`` without an event loop."""
        d: List[DeadRun] = self._q_sync("dead_runs")
        return d

    def delete_thread_sync(self, thread_id: str, *, force: bool = False) -> None:
        """``delete_thread`` without an event loop."""
        self._q_sync("delete_thread", thread_id=thread_id, force=force)

    def __repr__(self) -> str:
        return f"Store({self.url!r})"


def _agent_of(run: DeadRun, agents: Sequence[Agent[Any]]) -> Optional[Agent[Any]]:
    """The agent that made ``run``: by name, or (unnamed) by settings."""
    for a in agents:
        settings = a.settings
        if run["agent"] is not None:
            if settings.get("name") == run["agent"]:
                return a
        elif settings == run["settings"]:
            return a
    return None


def _resumed(run: DeadRun, status: Any, reason: Optional[str]) -> ResumedRun:
    return {"run_id": run["run_id"], "thread_id": run["thread_id"], "status": status, "reason": reason}


async def _carry_on(agent: Agent[Any], run: DeadRun, store: Store, max_attempts: int) -> ResumedRun:
    try:
        r = await agent.carry_on(run["run_id"], store=store, max_attempts=max_attempts)
        return _resumed(run, r.status, None)
    except RunError as e:
        return _resumed(run, "failed", str(e))
    except StoreError as e:
        return _resumed(run, "not_resumed", str(e))


def _meta(metadata: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    return dict(metadata) if metadata is not None else None
