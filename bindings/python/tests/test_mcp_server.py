"""`parlance serve` speaks MCP: the official `mcp` client (PyPI) lists the
configured agents as tools and calls them over streamable HTTP (the API's
bearer tokens) and over stdio (`parlance mcp serve`); a call that waits for
a person's approval is a form the client answers (approved, edited,
rejected) and the run goes on; a client that answers no forms is told where
to decide; a bad token, an unknown tool and bad arguments are refused."""

from __future__ import annotations

import pathlib
from typing import Any, Dict, List, Tuple

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

            r = await client.call_tool("support", {"input": "Where is A-17?"})
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
