# The tools of an MCP server, offered to an agent. The server is a command
# Parlance runs (stdio); McpServer.http(name, url, bearer=...) reaches one
# over streamable HTTP. Any server will do, e.g.
#   MCP_COMMAND="npx -y @modelcontextprotocol/server-filesystem /srv/docs"
import os
import shlex

from parlance import Agent, McpServer

command, *args = shlex.split(os.environ.get("MCP_COMMAND", "python3 server.py"))

with McpServer.stdio("calc", command, args=args, prefix="calc", tools=["add"]) as calc:
    agent = Agent("openai:gpt-4o-mini", toolsets=[calc])
    r = agent.run_sync("What is 2 + 3?")

for m in r.messages:
    for b in m["content"]:
        if b["type"] == "tool_call":
            print("called:", b["tool_call"]["name"], b["tool_call"]["arguments"])
print(r.text)
