"""`parlance serve` speaks MCP: the official `mcp` client (PyPI) lists the
configured agents as tools and calls them over streamable HTTP (the API's
bearer tokens) and over stdio (`parlance mcp serve`); a call that waits for
a person's approval is a form the client answers (approved, edited,
rejected) and the run goes on; a client that answers no forms is told where
to decide; a bad token, an unknown tool and bad arguments are refused."""

from __future__ import annotations

import pathlib
import re
import socket
import socketserver
import threading
from typing import Any, Dict, List, Optional, Tuple

import anyio
import httpx2
import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mock_openai import calls, text
from serve_support import TOKEN, Recorder, environment, support_served, write_config  # noqa: F401  (the fixture)
from test_guide import parlance_bin


def http_client(url: str, token: str = TOKEN, **kw: Any) -> Client:
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"})
    transport = streamable_http_client(f"{url}/mcp", http_client=http)
    return Client(transport, **kw)


def answers(*contents: Dict[str, Any]) -> Tuple[List[str], Any]:
    """An elicitation callback that accepts each form with the next content,
    and the messages it was shown."""
    shown: List[str] = []
    queue = list(contents)

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        shown.append(params.message)
        content = queue.pop(0)
        if content.get("action") == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=content)

    return shown, answer


def test_agents_are_mcp_tools_and_approvals_are_forms(support_served: Any, mock: Any) -> None:  # noqa: F811
    url, tool, _ = support_served

    async def main() -> None:
        mock.script = lambda b: (
            calls(("c1", "get_order", {"order_id": "A-17"}))
            if b["messages"][-1]["role"] == "user"
            else text("A-17 has shipped.")
        )
        shown, answer = answers(
            {"decision": "edited", "arguments": '{"amount": 30}'},
            {"decision": "rejected", "reason": "over the limit"},
        )
        async with http_client(url, elicitation_callback=answer) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["support"]
            assert listed.tools[0].input_schema["required"] == ["input"]

            pieces: List[str] = []

            async def progress(progress: float, total: Optional[float], message: Optional[str]) -> None:
                pieces.append(message or "")

            r = await client.call_tool("support", {"input": "Where is A-17?"}, progress_callback=progress)
            assert "".join(pieces) == "A-17 has shipped.", "the answer streamed as progress notifications"
            assert not r.is_error
            assert isinstance(r.content[0], types.TextContent) and r.content[0].text == "A-17 has shipped."
            s: Any = r.structured_content
            assert s["status"] == "completed" and s["run_id"].startswith("run_") and s["thread_id"].startswith("thr_")
            assert tool.got == [{"order_id": "A-17"}], "the tool ran on the server"

            # A call that waits for a person: the client's form decides it (edited).
            mock.script = lambda b: (
                calls(("c2", "refund", {"amount": 40})) if b["messages"][-1]["role"] == "user" else text("Refunded 30.")
            )
            r = await client.call_tool("support", {"input": "Refund 40", "thread_id": s["thread_id"]})
            assert not r.is_error, r.content
            assert isinstance(r.content[0], types.TextContent) and r.content[0].text == "Refunded 30."
            assert tool.got[-1] == {"amount": 30}, "it ran with the edited arguments"
            assert shown == ['refund({"amount":40}) waits for your decision.']
            user_turns = [m for m in mock.requests[-1]["messages"] if m["role"] == "user"]
            assert len(user_turns) == 2, "the second call went on in the first one's thread"

            # Rejected: the call does not run; the model reads the reason.
            mock.script = lambda b: (
                calls(("c3", "refund", {"amount": 900}))
                if b["messages"][-1]["role"] == "user"
                else text("Not refunded.")
            )
            r = await client.call_tool("support", {"input": "Refund 900"})
            assert isinstance(r.content[0], types.TextContent) and r.content[0].text == "Not refunded."
            assert tool.got[-1] == {"amount": 30}, "the rejected call never ran"
            told = mock.requests[-1]["messages"][-1]
            assert told["role"] == "tool" and "over the limit" in told["content"]

    anyio.run(main)


def test_a_client_without_forms_is_told_where_to_decide_and_bad_calls_are_refused(
    support_served: Any,  # noqa: F811
    mock: Any,
) -> None:
    url, tool, _ = support_served

    async def main() -> None:
        mock.script = lambda b: calls(("c1", "refund", {"amount": 5}))
        async with http_client(url) as client:
            r = await client.call_tool("support", {"input": "Refund 5"})
            assert not r.is_error
            s: Any = r.structured_content
            assert s["status"] == "requires_approval" and s["pending"][0]["name"] == "refund"
            assert isinstance(r.content[0], types.TextContent)
            assert f"/v1/runs/{s['run_id']}/decisions" in r.content[0].text and s["thread_id"] in r.content[0].text
            assert tool.got == []

            r = await client.call_tool("support", {"thread_id": s["thread_id"]})
            assert r.is_error, "input is required"
            r = await client.call_tool("support", {"input": "Hi", "thread_id": "thr_not_yours"})
            assert r.is_error and isinstance(r.content[0], types.TextContent)
            assert r.content[0].text == 'thread_id: no thread "thr_not_yours" of yours'
            with pytest.raises(MCPError, match="no tool"):
                await client.call_tool("nobody", {"input": "Hi"})

        # Answers forged for another caller's waiting run: refused, and the
        # run still waits.
        async with http_client(url, token="tok-bob-0123456789") as bob:
            digest = s["pending"][0]["digest"]
            answer = types.ElicitResult(action="accept", content={"decision": "approved"})
            r = await bob.call_tool("support", {}, request_state=s["run_id"], input_responses={digest: answer})
            assert r.is_error and isinstance(r.content[0], types.TextContent)
            assert r.content[0].text == f'no run "{s["run_id"]}" waits for these answers'
        assert tool.got == [], "nothing ran"

        # A bad token: the SDK's call fails; the server said 401 with the
        # scheme to authenticate with, before any MCP ran.
        try:
            async with http_client(url, token="nope") as client:
                await client.list_tools()
            refused = ""
        except Exception as e:  # the SDK raises its error inside a task group's
            refused = repr(e)
        assert "MCPError" in refused, refused
        async with httpx2.AsyncClient() as http:
            raw = await http.post(
                f"{url}/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"authorization": "Bearer nope", "accept": "application/json, text/event-stream"},
            )
        assert raw.status_code == 401 and raw.headers["www-authenticate"].startswith("Bearer")
        assert raw.json()["error"] == {"code": "unauthorized", "message": "unknown token"}

    anyio.run(main)


def test_parlance_mcp_serve_speaks_mcp_over_stdio(mock: Any, tmp_path: pathlib.Path) -> None:
    tool = Recorder()
    config = write_config(tmp_path, tool)
    mock.script = lambda b: (
        calls(("c1", "refund", {"amount": 12})) if b["messages"][-1]["role"] == "user" else text("Refunded 12.")
    )
    shown, answer = answers({"decision": "approved"})

    async def main() -> None:
        server = StdioServerParameters(
            command=str(parlance_bin()), args=["mcp", "serve", "--config", str(config)], env=environment(mock)
        )
        async with Client(server, elicitation_callback=answer) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["support"]
            r = await client.call_tool("support", {"input": "Refund 12"})
            assert isinstance(r.content[0], types.TextContent) and r.content[0].text == "Refunded 12."
            assert tool.got == [{"amount": 12}]
            assert len(shown) == 1

    try:
        anyio.run(main)
    finally:
        tool.server.shutdown()


class DroppingProxy:
    """A TCP proxy to `port` that cuts the first connection carrying a
    `tools/call` once the server's answer has sent one SSE event with an id
    (a client's network dropping mid-call); everything else passes."""

    def __init__(self, port: int) -> None:
        self.dropped = 0
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                upstream = socket.create_connection(("127.0.0.1", port))
                state = {"calling": False}

                def client_to_server() -> None:
                    try:
                        while data := self.request.recv(65536):
                            if b'"tools/call"' in data and proxy.dropped == 0:
                                state["calling"] = True
                            upstream.sendall(data)
                    except OSError:
                        pass
                    finally:
                        upstream.close()

                threading.Thread(target=client_to_server, daemon=True).start()
                seen = b""
                try:
                    while data := upstream.recv(65536):
                        self.request.sendall(data)
                        if state["calling"]:
                            seen += data
                            if re.search(rb"(^|\n)id: ?\S+", seen) and b"\n\n" in seen:
                                proxy.dropped += 1
                                break
                except OSError:
                    pass
                finally:
                    upstream.close()
                    self.request.close()

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def test_a_call_whose_connection_dropped_is_picked_up_with_its_last_event_id(
    support_served: Any,  # noqa: F811
    mock: Any,
) -> None:
    url, _, _ = support_served
    port = int(url.rsplit(":", 1)[1])
    proxy = DroppingProxy(port)
    mock.script = lambda b: text("Slowly, but surely: here.", pace=0.2)

    async def main() -> None:
        async with http_client(proxy.url) as client:
            r = await client.call_tool("support", {"input": "Take your time."})
            assert not r.is_error, r.content
            assert isinstance(r.content[0], types.TextContent) and r.content[0].text == "Slowly, but surely: here."

    try:
        anyio.run(main)
    finally:
        proxy.server.shutdown()
    assert proxy.dropped == 1, "the call's connection was cut, and the client picked it up"
    assert len(mock.requests) == 1, "picked up, not asked again: the agent ran once"
