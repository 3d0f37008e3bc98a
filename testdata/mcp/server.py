"""A small MCP server for Parlance's tests (crates/mcp/tests), built on the
official Python SDK (`mcp` from PyPI, pinned in requirements.txt).

    python server.py --log CALLS                  # stdio
    python server.py --log CALLS --http PORT [--token T]   # streamable HTTP

Every tools/call that reaches the server is appended to CALLS (one line,
the tool's name and arguments as JSON), so a test can tell a call the
client refused from one the server saw. With --token, HTTP requests
without `Authorization: Bearer T` are answered 401.
"""

import argparse
import asyncio
import base64
import json
import os

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image

parser = argparse.ArgumentParser()
parser.add_argument("--log", required=True)
parser.add_argument("--http", type=int)
parser.add_argument("--token")
opts = parser.parse_args()

server = MCPServer("parlance-test", log_level="WARNING")

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)


def seen(tool, **args):
    with open(opts.log, "a") as f:
        f.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool(description="Adds two integers.")
def add(a: int, b: int) -> int:
    seen("add", a=a, b=b)
    return a + b


@server.tool(description="Says the text back.", structured_output=False)
def echo(text: str) -> str:
    seen("echo", text=text)
    return text


@server.tool(description="Waits, then answers.", structured_output=False)
async def sleep(seconds: float) -> str:
    seen("sleep", seconds=seconds)
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool(description="Always fails with the given message.")
def fail(message: str) -> str:
    seen("fail", message=message)
    raise ToolError(message)


@server.tool(description="The server's process id.")
def pid() -> int:
    seen("pid")
    return os.getpid()


@server.tool(description="Ends the server's process in the middle of the call.")
def die() -> str:
    seen("die")
    os._exit(3)


@server.tool(description="A tiny picture and its caption.", structured_output=False)
def picture() -> list:
    seen("picture")
    return ["a 1x1 png", Image(data=PNG, format="png")]


@server.tool(description="Offers one more tool, `late`, and says the tools changed.")
async def grow(ctx: Context) -> str:
    seen("grow")

    def late() -> str:
        seen("late")
        return "late tool"

    server.add_tool(late, name="late", description="Only there after grow.", structured_output=False)
    # On the call's own stream, before its result: sent on the session's
    # standalone stream (`send_tool_list_changed()`) it can reach an HTTP
    # client after the result, and the next model call would not list `late`.
    await ctx.session.send_notification(
        types.ToolListChangedNotification(), related_request_id=ctx.request_context.request_id
    )
    return "grown"


if opts.http is None:
    server.run("stdio")
else:
    import uvicorn

    app = server.streamable_http_app()

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and opts.token is not None:
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {opts.token}".encode():
                seen("refused-unauthorized")
                await send({"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
                return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=opts.http, log_level="warning", lifespan="on")
