"""MCP servers' tools from Python, against the real MCP server of the Rust
tests (testdata/mcp/server.py, on the official Python SDK from PyPI, run
by the interpreter scripts/mcp-test-server installs): over stdio and over
streamable HTTP with a bearer token, arguments validated before they
reach the server, approvals, a lazy start, shutdown, and settings that
cannot work refused with the setting named."""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import socket
import subprocess
import time
from typing import Any, Dict, List, Mapping, Sequence

import pytest
from conftest import REPO

from parlance import Agent, ConfigError, McpServer, RunError, approve
from parlance.testing import FunctionModel, RequestInfo

SERVER = REPO / "testdata" / "mcp" / "server.py"


@pytest.fixture
def python() -> str:
    """The MCP test server's interpreter (PARLANCE_MCP_PYTHON); with
    PARLANCE_REQUIRE_MCP=1 a missing one fails instead of skipping."""
    path = os.environ.get("PARLANCE_MCP_PYTHON", str(REPO / "target" / "mcp-venv" / "bin" / "python"))
    if not pathlib.Path(path).exists():
        if os.environ.get("PARLANCE_REQUIRE_MCP") == "1":
            pytest.fail(f"PARLANCE_REQUIRE_MCP=1 but there is no MCP test server interpreter at {path}")
        pytest.skip("no MCP test server (scripts/mcp-test-server installs it)")
    return path


def seen(log: pathlib.Path) -> List[Dict[str, Any]]:
    """The calls that reached the server."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def call(id: str, name: str, arguments: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "tool_call", "tool_call": {"id": id, "name": name, "arguments": arguments}}


def results(messages: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
    return [b["tool_result"] for m in messages if m["role"] == "tool" for b in m["content"]]


class Script:
    """A model that calls the given tools once, then says what it read;
    it keeps the tool names of each request."""

    def __init__(self, *calls: Dict[str, Any]) -> None:
        self.calls = list(calls)
        self.offered: List[List[str]] = []

    def __call__(self, messages: List[Dict[str, Any]], info: RequestInfo) -> Any:
        self.offered.append([t["name"] for t in info.tools])
        if messages[-1]["role"] != "tool":
            return {"content": self.calls}
        return " | ".join(f"{r.get('status', 'ok')}: {json.dumps(r['content'])}" for r in results(messages[-1:]))


def test_stdio_tools_are_listed_validated_and_run(python: str, tmp_path: pathlib.Path) -> None:
    log = tmp_path / "calls"
    server = McpServer.stdio("tests", python, args=[str(SERVER), "--log", str(log)], timeout=5)
    script = Script(call("c1", "add", {"a": 2, "b": 3}), call("c2", "add", {"a": "two", "b": 3}))
    agent = Agent(FunctionModel(script), toolsets=[server])
    assert seen(log) == [], "started before a run needed it"

    r = agent.run_sync("add")
    assert r.status == "completed", r.error
    assert script.offered[0] == ["add", "echo", "sleep", "fail", "pid", "die", "picture", "grow"]
    statuses = [x.get("status", "ok") for x in results(r.messages)]
    assert statuses == ["ok", "invalid_arguments"]
    assert results(r.messages)[0]["content"] == [{"type": "json", "json": {"result": 5}}]
    # The call with a string for an integer was refused before the server saw it.
    assert seen(log) == [{"tool": "add", "args": {"a": 2, "b": 3}}]
    server.shutdown_sync()


def test_http_with_a_bearer_token_and_an_approval(python: str, tmp_path: pathlib.Path) -> None:
    log = tmp_path / "calls"
    with http_server(python, log, token="s3cret") as url:
        server = McpServer.http("tickets", url, bearer="s3cret", prefix="t", needs_approval=["echo"])
        script = Script(call("c1", "t_echo", {"text": "close it"}))
        agent = Agent(FunctionModel(script), toolsets=[server])

        paused = agent.run_sync("echo")
        assert paused.status == "requires_approval"
        assert [p.name for p in paused.pending] == ["t_echo"]
        assert seen(log) == [], "a call waiting for approval reached the server"

        r = agent.resume_sync(paused, [approve(paused.pending[0])])
        assert r.status == "completed", r.error
        assert r.text == 'ok: [{"type": "text", "text": "close it"}]'
        assert seen(log) == [{"tool": "echo", "args": {"text": "close it"}}]

        refused = McpServer.http("tickets", url, bearer="wrong")
        with pytest.raises(RunError, match=r'tools_unavailable\): mcp server "tickets": could not start: .*401'):
            Agent(FunctionModel(Script()), toolsets=[refused]).run_sync("hi")


def test_shutdown_stops_the_process_and_a_later_run_starts_it_again(python: str, tmp_path: pathlib.Path) -> None:
    log = tmp_path / "calls"

    async def go() -> List[int]:
        async with McpServer.stdio("tests", python, args=[str(SERVER), "--log", str(log)]) as server:
            agent = Agent(FunctionModel(Script(call("c1", "pid", {}))), toolsets=[server])
            first = await agent.run("pid")
            await server.shutdown()
            second = await agent.run("pid")
        return [results(r.messages)[0]["content"][0]["json"]["result"] for r in (first, second)]

    first, second = asyncio.run(go())
    assert first != second, "the same process answered after shutdown"
    for pid in (first, second):
        with pytest.raises(ProcessLookupError):
            wait_gone(pid)


def wait_gone(pid: int) -> None:
    """Raises ProcessLookupError once `pid` is gone (waits up to 5 s)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        os.kill(pid, 0)
        time.sleep(0.05)


def test_settings_that_cannot_work_are_refused_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match=r'mcp server "x": unknown setting "comand" \(known: name, command,'):
        McpServer({"name": "x", "comand": "python3"})
    with pytest.raises(ConfigError, match=r'mcp server "x": timeout: expected a positive number of seconds, got -1'):
        McpServer.stdio("x", "python3", timeout=-1)
    with pytest.raises(ConfigError, match=r'mcp server "x": '):
        McpServer({"name": "x"})
    with pytest.raises(ConfigError, match=r"mcp server \"x\": args: invalid type"):
        McpServer({"name": "x", "command": "python3", "args": "-V"})
    with pytest.raises(ConfigError, match=r"toolsets\[0\]: expected an McpServer or a Toolset, got str"):
        Agent(FunctionModel(Script()), toolsets=["python3 server.py"])  # type: ignore[list-item]


class http_server:
    """The test server over streamable HTTP on a free port of 127.0.0.1."""

    def __init__(self, python: str, log: pathlib.Path, token: str) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(
            [python, str(SERVER), "--log", str(log), "--http", str(self.port), "--token", token],
            stdout=subprocess.DEVNULL,
        )

    def __enter__(self) -> str:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("the MCP test server did not start") from None
                time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}/mcp"

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()
