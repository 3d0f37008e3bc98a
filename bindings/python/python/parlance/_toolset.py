"""``Toolset``: tools that come and go. A function the agent asks before
each model call for the tools it offers now (per customer, per feature
flag, found at run time), given the run's ``deps``. Its tools are ordinary
``@tool`` tools: validated, timed out and approved by the engine; a name
the agent or another toolset also offers is prefixed with the toolset's
``prefix`` (default: its name) and ``_``."""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Optional, Union

from . import _core
from ._errors import ConfigError
from ._tools import Tool

ToolLike = Union[Tool[Any], Callable[..., Any]]
ListTools = Callable[..., Union[Iterable[ToolLike], Awaitable[Iterable[ToolLike]]]]


class Toolset:
    """``Toolset(list_tools)``: ``list_tools()`` or ``list_tools(deps)``
    (``def`` or ``async def``) returns the tools (``@tool`` tools or plain
    functions) to offer for the next model call. Returning the same tool
    objects costs nothing (the agent rebuilds only when they change; plain
    functions are made tools once). What it raises fails the run with code
    ``tools_unavailable``, naming the toolset.

        def tools_for(deps: Customer) -> list[Tool]:
            return [refund] if deps.can_refund else [lookup]

        agent = Agent("openai:gpt-4o", toolsets=[Toolset(tools_for)])
    """

    def __init__(self, list_tools: ListTools, *, name: Optional[str] = None, prefix: Optional[str] = None) -> None:
        if not callable(list_tools):
            raise ConfigError(f"Toolset: expected a function returning tools, got {type(list_tools).__name__}")
        self.name = name if name is not None else getattr(list_tools, "__name__", "toolset")
        self._fn = list_tools
        self._made: Dict[Any, Tool[Any]] = {}
        takes_deps = len(inspect.signature(list_tools).parameters) > 0
        is_async = inspect.iscoroutinefunction(list_tools)

        def call(deps: Any) -> Any:
            return list_tools(deps) if takes_deps else list_tools()

        if is_async:

            async def listed(deps: Any) -> List[Any]:
                return self._cores(await call(deps))

            self._core = _core.Toolset(self.name, listed, is_async=True, prefix=prefix)
        else:

            def listed_sync(deps: Any) -> List[Any]:
                return self._cores(call(deps))

            self._core = _core.Toolset(self.name, listed_sync, is_async=False, prefix=prefix)

    def _cores(self, tools: Iterable[ToolLike]) -> List[Any]:
        out = []
        for i, t in enumerate(tools):
            if not isinstance(t, Tool):
                made = self._made.get(t) if callable(t) else None
                if made is None:
                    try:
                        made = Tool(t)
                    except ConfigError as e:
                        raise ConfigError(f"[{i}]: {e}") from None
                    self._made[t] = made
                t = made
            out.append(t._core)
        return out

    def __repr__(self) -> str:
        return f"Toolset({self.name!r})"
