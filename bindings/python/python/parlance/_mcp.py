"""``McpServer``: an MCP server's tools for an agent (``Agent(...,
toolsets=[server])``). The settings are the server TOML's ``[[mcp]]``
ones, checked by the same Rust code (``parlance_bindings::mcp``); the
tools are validated, timed out, approved and run by the engine exactly
as ``@tool`` functions are."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

from typing_extensions import Self

from . import _core


class McpServer:
    """An MCP server, started when a run first needs its tools (not when
    it is made) and shared by every agent it is given to: one process or
    one HTTP session per ``McpServer``.

    Make one with ``McpServer.stdio(name, command, args=[...])`` (a child
    process on stdin/stdout) or ``McpServer.http(name, url)`` (streamable
    HTTP). ``prefix`` goes before each tool's name with ``_`` (``fs`` makes
    ``fs_read_file``); a name another source also offers is prefixed with
    the server's name anyway. ``tools`` offers only these (their names on
    the server). ``needs_approval``: ``True`` (every call waits for a
    human's decision) or a list of tool names. ``timeout`` (seconds): the
    time a call may take (default: the agent's ``tool_timeout``);
    ``startup_timeout`` (seconds, default 30): the time the server has to
    start and list its tools.

    ``await server.shutdown()`` (or ``async with server:``) stops it; a
    later run starts it again. The process also ends when the last agent
    holding it is gone.
    """

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self._core = _core.McpServer(dict(settings))

    @classmethod
    def stdio(
        cls,
        name: str,
        command: str,
        *,
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        inherit_env: bool = False,
        cwd: Optional[str] = None,
        prefix: Optional[str] = None,
        tools: Optional[Iterable[str]] = None,
        needs_approval: Union[bool, Iterable[str]] = False,
        timeout: Optional[float] = None,
        startup_timeout: Optional[float] = None,
    ) -> McpServer:
        """A server run as a child process. Only ``HOME``, ``LANG``, ``LC_ALL``,
        ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM``, ``TMPDIR``, ``USER`` and
        ``env`` reach it, so that API keys do not reach every server;
        ``inherit_env=True`` passes this process's whole environment on."""
        return cls(
            {
                "name": name,
                "command": command,
                "args": list(args),
                "env": dict(env) if env is not None else None,
                "inherit_env": inherit_env,
                "cwd": cwd,
                **_common(prefix, tools, needs_approval, timeout, startup_timeout),
            }
        )

    @classmethod
    def http(
        cls,
        name: str,
        url: str,
        *,
        headers: Optional[Mapping[str, str]] = None,
        bearer: Optional[str] = None,
        bearer_env: Optional[str] = None,
        prefix: Optional[str] = None,
        tools: Optional[Iterable[str]] = None,
        needs_approval: Union[bool, Iterable[str]] = False,
        timeout: Optional[float] = None,
        startup_timeout: Optional[float] = None,
    ) -> McpServer:
        """A server reached over streamable HTTP at ``url``; ``bearer`` (or
        the variable ``bearer_env`` names, read now) is sent as
        ``Authorization: Bearer ...``, ``headers`` with every request."""
        return cls(
            {
                "name": name,
                "url": url,
                "headers": dict(headers) if headers is not None else None,
                "bearer": bearer,
                "bearer_env": bearer_env,
                **_common(prefix, tools, needs_approval, timeout, startup_timeout),
            }
        )

    @property
    def name(self) -> str:
        """The server's name."""
        return self._core.name

    async def shutdown(self) -> None:
        """Stops the server now; the next run that needs it starts it again."""
        await self._core.shutdown()

    def shutdown_sync(self) -> None:
        """``shutdown`` without an event loop."""
        self._core.shutdown_blocking()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.shutdown()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.shutdown_sync()

    def __repr__(self) -> str:
        return f"McpServer({self.name!r})"


def _common(
    prefix: Optional[str],
    tools: Optional[Iterable[str]],
    needs_approval: Union[bool, Iterable[str]],
    timeout: Optional[float],
    startup_timeout: Optional[float],
) -> Dict[str, Any]:
    return {
        "prefix": prefix,
        "tools": list(tools) if tools is not None else None,
        "needs_approval": needs_approval if isinstance(needs_approval, bool) else list(needs_approval),
        "timeout": timeout,
        "startup_timeout": startup_timeout,
    }
