//! The tools of an MCP server, offered to an agent (docs/guide/mcp.md).
//! The server is a command Parlance runs (stdio); `McpServer::http(name,
//! url)` reaches one over streamable HTTP. Any server will do, e.g.
//! `MCP_COMMAND="npx -y @modelcontextprotocol/server-filesystem /srv/docs"`.
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --features mcp --example guide_mcp`

use parlance::mcp::McpServer;
use parlance::{Agent, Block};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let line = std::env::var("MCP_COMMAND").unwrap_or_else(|_| "python3 server.py".into());
    let mut words = line.split_whitespace();
    let command = words.next().unwrap_or("python3");
    let calc = McpServer::stdio("calc", command)
        .args(words)
        .prefix("calc")
        .only(["add"])
        .build()?;
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .toolset(calc)
        .build()?;
    let r = agent.run("What is 2 + 3?").await.into_result()?;
    agent.shutdown().await;
    for m in &r.messages {
        for b in &m.content {
            if let Block::ToolCall { tool_call } = b {
                println!("called: {} {}", tool_call.name, tool_call.arguments);
            }
        }
    }
    println!("{}", r.text());
    Ok(())
}
