//! Agents that call agents (docs/guide/subagents.md): the researcher, used
//! as a tool by the support agent. Support's model sends it a task; it runs
//! the task as a run of its own; support's model reads only its answer, and
//! what it spent rolls up.
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_subagents`

use parlance::{Agent, Block, Role};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let researcher = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .name("researcher")
        .instructions("You look orders up: say where the order is and when it shipped.")
        .build()?;
    let support = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .name("support")
        .instructions("You answer customers. Ask the researcher to look orders up.")
        .tool(researcher.as_tool(
            "researcher",
            "Looks orders up: send it the order and the question.",
        ))
        .build()?;

    let r = support.run("Where is order A-1001?").await.into_result()?;
    println!("{}", r.text());
    let tool_message = r
        .messages
        .iter()
        .find(|m| m.role == Role::Tool)
        .expect("a tool message");
    let result = tool_message.content[0].as_tool_result().expect("a result");
    if let Block::Text(read) = &result.content[0] {
        println!("support's model read: {}", read.text);
    }
    let researchers = tool_message.usage.as_ref().map_or(0, |u| u.input_tokens);
    println!(
        "input tokens: {}, the researcher's {researchers}",
        r.usage.input_tokens
    );
    Ok(())
}
