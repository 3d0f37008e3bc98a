"""``Agent``: a model, instructions, tools and limits, built once into a
Rust agent; each run goes to the Rust core, which calls the model, runs
the tools and loops, with the GIL released while it works."""

from __future__ import annotations

import os
import sys
from typing import (
    TYPE_CHECKING,
    Any,
    Awaitable,
    Callable,
    Dict,
    Generic,
    Iterable,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    TypedDict,
    TypeVar,
    Union,
    overload,
)

from . import _core, types
from ._budget import Budget
from ._context import ContextPolicy
from ._core import Model, Response
from ._decisions import Decision, to_dicts
from ._errors import ConfigError
from ._guardrails import Guardrail
from ._mcp import McpServer
from ._providers import Provider
from ._schema import output_check, output_schema
from ._store import Store
from ._tools import AgentTool, Tool
from ._toolset import Toolset

if TYPE_CHECKING:
    from ._core import RunStream

T = TypeVar("T")
OnToolException = Literal["return_to_model", "return_generic", "fail"]


class Step(TypedDict):
    """A step of a run, handed to a ``checkpoint`` as it completes:
    ``append`` (a message was added) or ``replace_last`` (the last one was
    replaced: a tool message whose approvals were decided, or whose failed
    calls ran again). The run's input is the caller's and is not a step."""

    kind: Literal["append", "replace_last"]
    message: types.Message


Checkpoint = Callable[[Step], Union[Awaitable[None], None]]
"""Receives each step of a run (``def`` or ``async def``); what it raises
fails the run (``RunError`` code ``store``, the exception as its cause)."""
Input = Union[str, Mapping[str, Any], Sequence[Mapping[str, Any]]]
Turns = Optional[Sequence[Union[Response[Any], Mapping[str, Any], Sequence[Mapping[str, Any]]]]]
Decisions = Sequence[Union[Decision, Mapping[str, Any]]]
Paused = Union[Response[Any], Mapping[str, Any], str]


def _no_running_loop(what: str) -> None:
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(f"{what}() cannot run inside a running event loop; use `await agent.{what[:-5]}(...)`")


class Agent(Generic[T]):
    """An agent: a model, instructions, tools and limits.

    ``model`` is a string (``"anthropic:claude-sonnet-4-5"``,
    ``"openai:gpt-4o-mini"``...; the key from the provider's variable), a
    ``Model``, or a model name with ``provider=OpenAI(base_url=...,
    api_key=...)``; or a list of them, tried in order (a fallback: when one
    is rate limited, overloaded, failing or timing out, the next is asked;
    ``fallback_on`` names the error kinds that move on, by default
    ``["rate_limited", "overloaded", "server", "timeout", "network",
    "context_too_long"]``). ``tools`` are ``@tool`` functions (plain functions are
    made tools). ``output_type`` (a pydantic model, dataclass, TypedDict...)
    makes the final answer JSON satisfying its schema, and ``output`` an
    instance of it. ``prices``: a JSON price table file (genai-prices'
    format) for the messages' ``cost``, consulted before the built-in one.
    ``output_retries`` (default 1): final answers that do not fit
    ``output_type`` (not JSON, refused by its schema or by pydantic's
    validators) sent back to the model with the problems, per run, before
    it fails with ``RunError`` ``invalid_output``.
    ``toolsets``: ``McpServer``s and ``Toolset``s whose tools the agent
    offers too (listed before each model call, so tools that come and go
    are seen). ``guardrails``: ``Guardrail``s run at the input, each tool
    call and the final answer (see ``Guardrail``); ``output_hold``: how a
    streamed answer waits for the output guardrails (``"answer"``: all of
    it checked first; ``"sentence"``: each sentence once the answer so far
    is allowed). ``context``: a ``ContextPolicy`` that keeps each run's
    context inside the model's window (fail early, drop the oldest turns,
    or compact them into a stored summary). ``budget``: what each run, each
    thread and each thread owner may spend (tokens, cost, model and tool
    calls; see ``Budget``): at a limit the model answers once more without
    tools, then the run raises ``RunError`` ``budget_exhausted``.

    ``handoffs``: agents this one may hand the conversation to: each is
    offered as a tool ``transfer_to_NAME`` (described by its
    ``description``); calling it gives the rest of the run to that agent
    (its instructions, tools, model), ``Response.handoff`` names it, and
    the next turns are its too: asked of this agent, a conversation handed
    over is answered by the agent that holds it. ``agent.as_tool()`` makes
    an agent a tool instead: it answers one task and the caller goes on.

    ``shared_cooldowns``: a ``Store`` through which a list of models
    shares its cooldowns (a model that answered ``429`` with a wait is
    skipped by every process of that store until then).

    ``on_tool_exception`` says what an unexpected exception in a tool
    becomes: ``return_to_model`` (the model reads its class and message),
    ``return_generic`` (the model reads only that the tool failed; the
    detail stays in the result's artifact, never sent) or ``fail`` (the run
    raises ``RunError`` with the tool's exception as ``__cause__``).
    ``ToolError`` always goes back to the model.

    ``max_tool_output`` caps a tool result (bytes of JSON; beyond it the
    model reads a short error instead). ``approval_key`` (a secret of at
    least 16 bytes) signs the digests of calls waiting for approval, so
    that decisions can only be made for calls this agent paused on.
    ``previous_approval_keys`` are keys retired by a rotation: digests they
    signed still verify, so runs that paused before the rotation stay
    decidable; new digests are signed with ``approval_key`` only.
    """

    @overload
    def __init__(
        self: Agent[str],
        model: Union[str, Model, Sequence[Union[str, Model]]],
        *,
        instructions: Optional[str] = None,
        tools: Iterable[Union[Tool[Any], Callable[..., Any]]] = (),
        name: Optional[str] = None,
        output_type: None = None,
        provider: Optional[Provider] = None,
        on_tool_exception: OnToolException = "return_to_model",
        tool_timeout: float = 60.0,
        max_model_calls: int = 10,
        max_invalid_arguments: int = 3,
        tool_concurrency: Optional[int] = None,
        model_settings: Optional[Mapping[str, Any]] = None,
        max_tool_output: Optional[int] = None,
        approval_key: Optional[str] = None,
        previous_approval_keys: Iterable[str] = (),
        fallback_on: Optional[Iterable[str]] = None,
        prices: Optional[Union[str, os.PathLike[str]]] = None,
        output_retries: int = 1,
        toolsets: Iterable[Union[McpServer, Toolset]] = (),
        guardrails: Iterable[Guardrail] = (),
        output_hold: Literal["answer", "sentence"] = "answer",
        context: Optional[ContextPolicy] = None,
        budget: Optional[Budget] = None,
        shared_cooldowns: Optional[Store] = None,
        description: Optional[str] = None,
        handoffs: Iterable[Agent[Any]] = (),
    ) -> None: ...

    @overload
    def __init__(
        self: Agent[T],
        model: Union[str, Model, Sequence[Union[str, Model]]],
        *,
        instructions: Optional[str] = None,
        tools: Iterable[Union[Tool[Any], Callable[..., Any]]] = (),
        name: Optional[str] = None,
        output_type: type[T],
        provider: Optional[Provider] = None,
        on_tool_exception: OnToolException = "return_to_model",
        tool_timeout: float = 60.0,
        max_model_calls: int = 10,
        max_invalid_arguments: int = 3,
        tool_concurrency: Optional[int] = None,
        model_settings: Optional[Mapping[str, Any]] = None,
        max_tool_output: Optional[int] = None,
        approval_key: Optional[str] = None,
        previous_approval_keys: Iterable[str] = (),
        fallback_on: Optional[Iterable[str]] = None,
        prices: Optional[Union[str, os.PathLike[str]]] = None,
        output_retries: int = 1,
        toolsets: Iterable[Union[McpServer, Toolset]] = (),
        guardrails: Iterable[Guardrail] = (),
        output_hold: Literal["answer", "sentence"] = "answer",
        context: Optional[ContextPolicy] = None,
        budget: Optional[Budget] = None,
        shared_cooldowns: Optional[Store] = None,
        description: Optional[str] = None,
        handoffs: Iterable[Agent[Any]] = (),
    ) -> None: ...

    def __init__(
        self,
        model: Union[str, Model, Sequence[Union[str, Model]]],
        *,
        instructions: Optional[str] = None,
        tools: Iterable[Union[Tool[Any], Callable[..., Any]]] = (),
        name: Optional[str] = None,
        output_type: Optional[type[Any]] = None,
        provider: Optional[Provider] = None,
        on_tool_exception: OnToolException = "return_to_model",
        tool_timeout: float = 60.0,
        max_model_calls: int = 10,
        max_invalid_arguments: int = 3,
        tool_concurrency: Optional[int] = None,
        model_settings: Optional[Mapping[str, Any]] = None,
        max_tool_output: Optional[int] = None,
        approval_key: Optional[str] = None,
        previous_approval_keys: Iterable[str] = (),
        fallback_on: Optional[Iterable[str]] = None,
        prices: Optional[Union[str, os.PathLike[str]]] = None,
        output_retries: int = 1,
        toolsets: Iterable[Union[McpServer, Toolset]] = (),
        guardrails: Iterable[Guardrail] = (),
        output_hold: Literal["answer", "sentence"] = "answer",
        context: Optional[ContextPolicy] = None,
        budget: Optional[Budget] = None,
        shared_cooldowns: Optional[Store] = None,
        description: Optional[str] = None,
        handoffs: Iterable[Agent[Any]] = (),
    ) -> None:
        if provider is not None:
            if not isinstance(model, str):
                raise ConfigError('model: with provider=, give the model\'s name ("gpt-4o-mini")')
            model = provider.model(model)
        self.tools: List[Tool[Any]] = [t if isinstance(t, Tool) else Tool(t) for t in tools]
        self.output_type = output_type
        schema: Optional[Dict[str, Any]] = None
        validate = None
        check = None
        if output_type is not None and output_type is not str:
            out_name, out_schema, validate = output_schema(output_type)
            schema = {"name": out_name, "schema": out_schema}
            check = output_check(validate)
        if context is not None and not isinstance(context, ContextPolicy):
            raise ConfigError(f"context: expected a ContextPolicy, got {type(context).__name__}")
        settings: Dict[str, Any] = {
            "instructions": instructions,
            "name": name,
            "description": description,
            "output_schema": schema,
            "on_tool_exception": on_tool_exception,
            "tool_timeout": tool_timeout,
            "max_model_calls": max_model_calls,
            "max_invalid_arguments": max_invalid_arguments,
            "tool_concurrency": tool_concurrency,
            "max_tool_output": max_tool_output,
            "model_settings": dict(model_settings) if model_settings is not None else None,
            "approval_key": approval_key,
            "previous_approval_keys": list(previous_approval_keys),
            "fallback_on": list(fallback_on) if fallback_on is not None else None,
            "prices": os.fspath(prices) if prices is not None else None,
            "output_retries": output_retries,
            "output_hold": output_hold,
            "context": context._settings() if context is not None else None,
            "budget": dict(budget) if budget is not None else None,
        }
        self.context = context
        self.toolsets: List[Union[McpServer, Toolset]] = list(toolsets)
        for i, t in enumerate(self.toolsets):
            if not isinstance(t, (McpServer, Toolset)):
                raise ConfigError(f"toolsets[{i}]: expected an McpServer or a Toolset, got {type(t).__name__}")
        self.guardrails: List[Guardrail] = list(guardrails)
        for i, g in enumerate(self.guardrails):
            if not isinstance(g, Guardrail):
                raise ConfigError(f"guardrails[{i}]: expected a Guardrail, got {type(g).__name__}")
        self.handoffs: List[Agent[Any]] = list(handoffs)
        for i, h in enumerate(self.handoffs):
            if not isinstance(h, Agent):
                raise ConfigError(f"handoffs[{i}]: expected an Agent, got {type(h).__name__}")
        self._core = _core.Agent(
            model,
            [t._core for t in self.tools],
            settings,
            validate,
            [t._core for t in self.toolsets],
            output_check=check,
            guardrails=[g._core for g in self.guardrails],
            context_model=context.model if context is not None else None,
            shared_cooldowns=_store_core(shared_cooldowns),
            handoffs=[_core_of(h) for h in self.handoffs],
        )

    def _run_work(
        self, input: Input, turns: Turns, run_id: Optional[str], thread_id: Optional[str], store: Optional[Store]
    ) -> _core.Work:
        if store is not None:
            return _core.Work.on_thread(store._core, _thread(thread_id, turns, run_id), input)
        return _core.Work.run(input, turns=_list(turns), run_id=run_id, thread_id=thread_id)

    def _resume_work(self, paused: Paused, decisions: Decisions, turns: Turns, store: Optional[Store]) -> _core.Work:
        paused_r = _paused(paused)
        chosen = to_dicts(decisions, paused_r.pending)
        if store is not None:
            return _core.Work.resume_thread(store._core, _run_id(paused_r), chosen)
        return _core.Work.resume(paused_r, chosen, turns=_list(turns))

    def _retry_work(
        self,
        thread_id: Optional[str],
        store: Optional[Store],
        turns: Turns,
        run_id: Optional[str],
    ) -> _core.Work:
        if store is not None:
            if thread_id is None:
                raise ConfigError("thread_id: a retry on a store needs the thread")
            if turns is not None:
                raise ConfigError("turns: a retry on a thread takes its history from the store")
            return _core.Work.retry_thread(store._core, thread_id)
        if turns is None:
            raise ConfigError("turns: a retry needs the failed run's history (or store= and the thread)")
        return _core.Work.retry(list(turns), run_id=run_id, thread_id=thread_id)

    async def _go(self, work: _core.Work, deps: Any, checkpoint: Optional[Checkpoint]) -> Response[T]:
        r: Response[T] = await self._core.run(work, deps=deps, checkpoint=checkpoint)
        return r

    def _go_sync(
        self, what: str, work: Callable[[], _core.Work], deps: Any, checkpoint: Optional[Checkpoint]
    ) -> Response[T]:
        _no_running_loop(what)
        if self._core.has_async_tools:
            import asyncio

            async def go() -> Response[T]:
                return await self._go(work(), deps, checkpoint)

            return asyncio.run(go())
        r: Response[T] = self._core.run_blocking(work(), deps=deps, checkpoint=checkpoint)
        return r

    async def run(
        self,
        input: Input,
        *,
        turns: Turns = None,
        run_id: Optional[str] = None,
        thread_id: Optional[str] = None,
        deps: Any = None,
        store: Optional[Store] = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> Response[T]:
        """Runs to the end (or to a pause for approval): the ``Response``.

        ``input`` is a string (a user message), a message dict or a list of
        them; ``turns`` the earlier turns (``Response``s, or their
        messages); ``deps`` reaches every tool as ``ctx.deps``. A failed run
        raises ``RunError``.

        With ``store`` and ``thread_id`` the run is on a stored thread: its
        history comes from the store, each step is committed as it
        completes, and one run at a time holds the thread (``StoreError``
        ``busy`` otherwise).

        ``checkpoint`` (``def`` or ``async def``) is handed each ``Step`` of
        the run as it completes, to keep its progress in your own storage;
        what it raises fails the run (``RunError`` code ``store``, the
        exception as ``__cause__``). Every method that runs takes it; with
        ``store`` the store is the checkpoint and it is refused.
        """
        return await self._go(self._run_work(input, turns, run_id, thread_id, store), deps, checkpoint)

    def run_sync(
        self,
        input: Input,
        *,
        turns: Turns = None,
        run_id: Optional[str] = None,
        thread_id: Optional[str] = None,
        deps: Any = None,
        store: Optional[Store] = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> Response[T]:
        """``run`` without an event loop (not from inside one). ``async def``
        tools get a loop of their own for the run."""
        return self._go_sync(
            "run_sync", lambda: self._run_work(input, turns, run_id, thread_id, store), deps, checkpoint
        )

    def stream(
        self,
        input: Input,
        *,
        turns: Turns = None,
        run_id: Optional[str] = None,
        thread_id: Optional[str] = None,
        deps: Any = None,
        store: Optional[Store] = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> RunStream:
        """The run as events (``async for event in agent.stream(...)``):
        text deltas, completed messages, tool calls started and finished,
        approvals required, and last ``RunCompleted`` with the response.
        Call it inside a running event loop. With ``store``, the run is on
        the stored thread ``thread_id`` (as ``run``)."""
        return self._core.stream(
            self._run_work(input, turns, run_id, thread_id, store), deps=deps, checkpoint=checkpoint
        )

    async def resume(
        self,
        paused: Paused,
        decisions: Decisions,
        *,
        turns: Turns = None,
        deps: Any = None,
        store: Optional[Store] = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> Response[T]:
        """Applies decisions to a paused run (a ``Response``, its dict or
        its JSON, from this process or any other, Rust included) and goes
        on. Refused decisions raise ``DecisionError`` and nothing runs;
        calls left undecided stay pending. With ``store``, the paused run
        is the one stored on its thread (the response names it)."""
        return await self._go(self._resume_work(paused, decisions, turns, store), deps, checkpoint)

    def resume_sync(
        self,
        paused: Paused,
        decisions: Decisions,
        *,
        turns: Turns = None,
        deps: Any = None,
        store: Optional[Store] = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> Response[T]:
        """``resume`` without an event loop."""
        return self._go_sync(
            "resume_sync", lambda: self._resume_work(paused, decisions, turns, store), deps, checkpoint
        )

    def resume_stream(
        self,
        paused: Paused,
        decisions: Decisions,
        *,
        turns: Turns = None,
        deps: Any = None,
        store: Optional[Store] = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> RunStream:
        """``resume`` as events."""
        return self._core.stream(self._resume_work(paused, decisions, turns, store), deps=deps, checkpoint=checkpoint)

    async def retry(
        self,
        thread_id: Optional[str] = None,
        *,
        store: Optional[Store] = None,
        turns: Turns = None,
        run_id: Optional[str] = None,
        deps: Any = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> Response[T]:
        """Runs a failed run again from its last committed step: a tool call
        that failed it (``on_tool_exception="fail"``) runs again (the model
        never reads the failure), and a failed model request is sent again.

        On a stored thread (``thread_id`` and ``store``): the thread's last
        run, refused with ``StoreError`` (kind ``conflict``) when it did not
        fail. Without a store: ``turns`` is the failed run's history, the
        failed turn (its ``Response``) last."""
        return await self._go(self._retry_work(thread_id, store, turns, run_id), deps, checkpoint)

    def retry_sync(
        self,
        thread_id: Optional[str] = None,
        *,
        store: Optional[Store] = None,
        turns: Turns = None,
        run_id: Optional[str] = None,
        deps: Any = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> Response[T]:
        """``retry`` without an event loop."""
        return self._go_sync("retry_sync", lambda: self._retry_work(thread_id, store, turns, run_id), deps, checkpoint)

    def retry_stream(
        self,
        thread_id: Optional[str] = None,
        *,
        store: Optional[Store] = None,
        turns: Turns = None,
        run_id: Optional[str] = None,
        deps: Any = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> RunStream:
        """``retry`` as events."""
        return self._core.stream(self._retry_work(thread_id, store, turns, run_id), deps=deps, checkpoint=checkpoint)

    async def carry_on(
        self,
        run_id: str,
        *,
        store: Store,
        max_attempts: int = 3,
        deps: Any = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> Response[T]:
        """Takes over a run of this agent whose process died (its lease ran
        out: see ``store.dead_runs()``) and carries it on from its last
        committed step: a model step that had not committed is asked again,
        tool calls that had not committed run again (with the same
        ``ctx.idempotency_key``), nothing that committed runs twice. The
        same run goes on (same id) and ends as any run.

        Raises ``StoreError`` (kind ``conflict``) when the run is not dead
        (alive, ended, or taken over by another process), when it died after
        its decisions were taken (it waits for them again), or when it died
        more than ``max_attempts`` times at the same step (it is then given
        up: failed, ``interrupted``). ``store.resume_dead_runs()`` does this
        for every dead run of a list of agents."""
        return await self._go(_core.Work.carry_on(store._core, run_id, max_attempts), deps, checkpoint)

    def carry_on_sync(
        self,
        run_id: str,
        *,
        store: Store,
        max_attempts: int = 3,
        deps: Any = None,
        checkpoint: Optional[Checkpoint] = None,
    ) -> Response[T]:
        """``carry_on`` without an event loop."""
        return self._go_sync(
            "carry_on_sync", lambda: _core.Work.carry_on(store._core, run_id, max_attempts), deps, checkpoint
        )

    def as_tool(
        self,
        name: Optional[str] = None,
        description: Optional[str] = None,
        *,
        timeout: Optional[float] = None,
    ) -> AgentTool:
        """This agent as a tool of another: the calling agent's model sends
        the task (``{"input": "..."}``); this agent runs it as a run of its
        own, with the caller's ``deps``, and its output is the call's
        result. What it spent rolls up into the calling run.

        ``name`` defaults to the agent's ``name``; ``description`` tells the
        calling model what it does. ``timeout`` (seconds) replaces the
        caller's ``tool_timeout`` for these calls: a run usually takes
        longer than a tool.

        On a store (``store=``), its run is kept on a thread of its own,
        linked to the calling run; if it waits for approval, the calling
        run waits with it and lists its calls in ``pending`` (each naming
        its ``run_id``): decide them through the calling run
        (``resume(paused, decisions, store=store)``), which resumes this
        agent, then the caller. Without a store it cannot wait: such a
        call fails, saying so."""
        name = name or self.settings.get("name")
        if not name:
            raise ConfigError("as_tool: give the tool a name (or the agent one: Agent(..., name=...))")
        if description is None:
            description = f"The {name} agent: send it the whole task."
        core = self._core.as_tool(name, description, timeout)
        return AgentTool(lambda task: self.run_sync(task).output, core, name, description)

    @property
    def settings(self) -> Dict[str, Any]:
        """The agent's settings, as recorded with each stored run."""
        s: Dict[str, Any] = self._core.settings
        return s

    def __repr__(self) -> str:
        return repr(self._core)


def _thread(thread_id: Optional[str], turns: Turns, run_id: Optional[str]) -> str:
    if thread_id is None:
        raise ConfigError("thread_id: a run on a store needs the thread (store.create_thread())")
    if turns is not None or run_id is not None:
        raise ConfigError("turns, run_id: a run on a thread takes its history and its id from the store")
    return thread_id


def _run_id(paused: Response[Any]) -> str:
    if paused.id is None:
        raise ConfigError("paused: the response names no run (its id is missing)")
    return paused.id


def _list(turns: Turns) -> Optional[List[Any]]:
    return None if turns is None else list(turns)


def _paused(paused: Paused) -> Response[Any]:
    if isinstance(paused, Response):
        return paused
    if isinstance(paused, str):
        return Response.from_json(paused)
    return Response.from_dict(paused)


def _store_core(store: Optional[Store]) -> Any:
    """The native store of ``shared_cooldowns`` (``None``: not shared)."""
    if store is None:
        return None
    if not isinstance(store, Store):
        raise ConfigError(f"shared_cooldowns: expected a Store, got {type(store).__name__}")
    return store._core


def _core_of(agent: Agent[Any]) -> _core.Agent:
    """The core agent of ``agent`` (typed apart: mypy reads ``_core`` once ``Agent`` is whole)."""
    core: _core.Agent = agent._core
    return core
