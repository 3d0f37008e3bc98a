// The tools of an MCP server, offered to an agent. The server is a command
// Parlance runs (stdio); McpServer.http(name, url, { bearer }) reaches one
// over streamable HTTP. Any server will do, e.g.
//   MCP_COMMAND="npx -y @modelcontextprotocol/server-filesystem /srv/docs"
import { Agent, McpServer } from "parlance-ai";

const [command, ...args] = (process.env.MCP_COMMAND ?? "python3 server.py").split(" ");

const calc = McpServer.stdio("calc", command, { args, prefix: "calc", tools: ["add"] });
const agent = new Agent({ model: "openai:gpt-4o-mini", toolsets: [calc] });
const r = await agent.run("What is 2 + 3?");
await calc.shutdown();

for (const m of r.messages) {
  for (const b of m.content) {
    if (b.type === "tool_call") console.log("called:", b.tool_call.name, JSON.stringify(b.tool_call.arguments));
  }
}
console.log(r.text);
