//! A tool with bounds, an error the model reads, and the context of the
//! call (docs/guide/tools.md).
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_tools`

use std::time::Duration;

use parlance::{Agent, Block, JsonSchema, Limits, Tool, ToolContext, ToolError};
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Refund {
    /// The order, like A-1001.
    order_id: String,
    /// Euros to refund.
    #[schemars(range(min = 1, max = 500))]
    amount: u32,
}

/// What the caller hands every tool: a database pool, the user...
struct User(&'static str);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let refund = Tool::with_context(
        "refund",
        "Refund an order.",
        |r: Refund, ctx: ToolContext| async move {
            if r.order_id.starts_with('X') {
                return Err(ToolError::new("orders starting with X cannot be refunded"));
            }
            let user = ctx.deps::<User>().map_or("nobody", |u| u.0);
            Ok(format!(
                "refunded {} EUR on {} for {user}",
                r.amount, r.order_id
            ))
        },
    );
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .instructions("You handle refunds.")
        .tool(refund)
        .limits(Limits {
            tool_timeout: Duration::from_secs(10),
            ..Limits::default()
        })
        .build()?
        .with_deps(User("ada"));
    let r = agent
        .run("Refund 900 EUR on A-1001, then 40 EUR on X-7, then 40 EUR on A-1001")
        .await
        .into_result()?;

    // What the model read back from each call: the engine refused the first
    // before the function ran; the second returned ToolError; the third ran.
    for m in &r.messages {
        for result in m.content.iter().filter_map(Block::as_tool_result) {
            let text: String = result.content.iter().filter_map(Block::as_text).collect();
            println!("{}: {text}", result.status.as_str());
        }
    }
    println!("{}", r.text());
    Ok(())
}
