//! Budgets (docs/guide/budgets.md): this agent may make two tool calls a
//! run. At the limit the model answers once more, without tools, and the
//! run ends `budget_exhausted` with that answer as its last message.
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_budgets`

use parlance::{Agent, Budget, Caps, JsonSchema, Tool};
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct GetOrder {
    /// The order, like A-1001.
    order_id: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let get_order = Tool::new(
        "get_order",
        "Look up one order by its id.",
        |args: GetOrder| async move { Ok(format!("{} has shipped", args.order_id)) },
    );
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .tool(get_order)
        .budget(Budget::new().run(Caps::new().tool_calls(2)))
        .build()?;
    let r = agent.run("Where are A-1, A-2 and A-3?").await;
    if let Some(e) = &r.error {
        println!("{} - {}", e.code, e.message);
        let last = r.messages.last().map(|m| m.text()).unwrap_or_default();
        println!("last answer: {last}");
    }
    Ok(())
}
