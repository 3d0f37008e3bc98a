//! The guide's first agent (docs/guide/get-started.md): a tool whose
//! schema comes from its argument type, an agent, one run.
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_get_started`

use parlance::{Agent, JsonSchema, Tool};
use serde::Deserialize;
use serde_json::json;

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
        |args: GetOrder| async move { Ok(json!({"order_id": args.order_id, "status": "shipped"})) },
    );
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .instructions("You answer about orders.")
        .tool(get_order)
        .build()?;
    let r = agent.run("Where is order A-1001?").await.into_result()?;
    println!("{}", r.text());
    println!(
        "{} {} {}",
        r.status.as_str(),
        r.usage.input_tokens,
        r.usage.output_tokens
    );
    Ok(())
}
