"""``@tool``: a Python function as a tool of the Rust engine.

The schema comes from the function's type hints and docstring
(``_schema``); the engine validates every call's arguments against it
before the function runs, so the model reads the engine's messages
(``amount: must be at most 500, got 900``). ``async def`` tools run as
tasks on the caller's event loop, ``def`` tools on worker threads.
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, Dict, Generic, Optional, TypeVar, Union, overload

from . import _core
from ._errors import ConfigError
from ._schema import Signature, hand_written, signature

R = TypeVar("R")
ApprovalCheck = Callable[[Dict[str, Any]], bool]


class Tool(Generic[R]):
    """A function the model can call: its name, description, input
    schema, and how it runs (timeout, approval). Calling the object calls
    the function itself (handy in tests)."""

    def __init__(
        self,
        func: Callable[..., R],
        *,
        name: Optional[str] = None,
        description: Optional[str] = None,
        schema: Optional[Dict[str, Any]] = None,
        needs_approval: Union[bool, ApprovalCheck] = False,
        timeout: Optional[float] = None,
        max_invalid_arguments: Optional[int] = None,
    ) -> None:
        if not callable(func):
            raise ConfigError(f"a tool needs a function, got {type(func).__name__}")
        self.func = func
        self.name: str = name or getattr(func, "__name__", "") or ""
        if not self.name or self.name == "<lambda>":
            raise ConfigError("a tool made from a lambda needs a name: Tool(f, name=...)")
        if schema is None:
            sig: Signature = signature(func, self.name)
        elif isinstance(schema, dict):
            sig = hand_written(func, self.name, schema)
        else:
            raise ConfigError(f"tool {self.name}: schema must be a dict (a JSON Schema)")
        self.signature = sig
        self.description: str = description if description is not None else sig.description
        # A callable object whose __call__ is `async def` is async too (not a callability test).
        self.is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
            getattr(func, "__call__", None)  # noqa: B004
        )
        self.needs_approval = needs_approval
        self.timeout = timeout
        self.max_invalid_arguments = max_invalid_arguments
        self._core = _core.Tool(
            self.name,
            self.description,
            sig.schema,
            self._invoke_async if self.is_async else self._invoke,
            is_async=self.is_async,
            timeout=timeout,
            needs_approval=needs_approval if needs_approval is not False else None,
            max_invalid_arguments=max_invalid_arguments,
        )

    @property
    def schema(self) -> Dict[str, Any]:
        """The input JSON Schema the model is given."""
        return self.signature.schema

    @property
    def spec(self) -> Dict[str, Any]:
        """What the model is told: name, description, input schema."""
        spec: Dict[str, Any] = self._core.spec
        return spec

    def _kwargs(self, args: Dict[str, Any], ctx: _core.ToolContext) -> Dict[str, Any]:
        kwargs = self.signature.arguments(args)
        if self.signature.context_param is not None:
            kwargs[self.signature.context_param] = ctx
        return kwargs

    def _invoke(self, args: Dict[str, Any], ctx: _core.ToolContext) -> Any:
        return self.func(**self._kwargs(args, ctx))

    async def _invoke_async(self, args: Dict[str, Any], ctx: _core.ToolContext) -> Any:
        return await self.func(**self._kwargs(args, ctx))  # type: ignore[misc]

    def __call__(self, *args: Any, **kwargs: Any) -> R:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


class AgentTool(Tool[Any]):
    """Another agent as a tool (made by ``Agent.as_tool``): the model sends
    the task as ``input``; the agent runs it as a run of its own and its
    output is the call's result. Calling the object runs the agent on a
    task (handy in tests)."""

    def __init__(self, run: Callable[[str], Any], core: _core.Tool, name: str, description: str) -> None:
        self.func = run
        self.name = name
        self.description = description
        self.is_async = core.is_async
        self.needs_approval = False
        self.timeout = None
        self.max_invalid_arguments = None
        self._core = core

    @property
    def schema(self) -> Dict[str, Any]:
        schema: Dict[str, Any] = self._core.spec["input_schema"]
        return schema

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"AgentTool({self.name!r})"


F = TypeVar("F", bound=Callable[..., Any])


@overload
def tool(func: Callable[..., R], /) -> Tool[R]: ...


@overload
def tool(
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    schema: Optional[Dict[str, Any]] = None,
    needs_approval: Union[bool, ApprovalCheck] = False,
    timeout: Optional[float] = None,
    max_invalid_arguments: Optional[int] = None,
) -> Callable[[Callable[..., R]], Tool[R]]: ...


def tool(
    func: Optional[Callable[..., R]] = None,
    /,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    schema: Optional[Dict[str, Any]] = None,
    needs_approval: Union[bool, ApprovalCheck] = False,
    timeout: Optional[float] = None,
    max_invalid_arguments: Optional[int] = None,
) -> Union[Tool[R], Callable[[Callable[..., R]], Tool[R]]]:
    """Makes a function a tool: ``@tool`` or ``@tool(needs_approval=True)``.

    The input schema comes from the type hints (``str``, ``int``,
    ``Literal``, ``Optional``, ``Annotated[int, Field(ge=1)]``, ``Enum``,
    ``TypedDict``, dataclasses, pydantic models...) and the parameter
    descriptions from the docstring (Google, NumPy or Sphinx style); its
    summary is the tool's description. A parameter annotated
    ``ToolContext`` receives the call's context and is not shown to the
    model. ``schema=`` gives a JSON Schema written by hand instead.

    ``needs_approval``: ``True`` (every call waits for a human) or a
    function of the arguments. ``timeout``: seconds (the agent's otherwise,
    60 by default); an ``async def`` tool is cancelled, a ``def`` tool is
    abandoned (``ctx.cancelled`` turns true).
    """

    def make(f: Callable[..., R]) -> Tool[R]:
        return Tool(
            f,
            name=name,
            description=description,
            schema=schema,
            needs_approval=needs_approval,
            timeout=timeout,
            max_invalid_arguments=max_invalid_arguments,
        )

    if func is not None:
        return make(func)
    return make


AsyncFn = Callable[..., Awaitable[Any]]
