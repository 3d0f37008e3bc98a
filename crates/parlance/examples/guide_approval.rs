//! A refund over 100 EUR waits for a person (docs/guide/approval.md). The
//! paused run is its JSON: keep it anywhere, resume it later with a fresh
//! agent (another process, another language).
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_approval`

use parlance::{Agent, Decision, JsonSchema, Response, Resume, Tool};
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct Refund {
    order_id: String,
    amount: u32,
}

fn build() -> anyhow::Result<Agent> {
    let refund = Tool::new("refund", "Refund an order.", |r: Refund| async move {
        Ok(format!("refunded {} EUR on {}", r.amount, r.order_id))
    })
    .needs_approval_if(|args| args["amount"].as_u64().unwrap_or(0) > 100);
    Ok(Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .instructions("You handle refunds.")
        .tool(refund)
        .build()?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let paused = build()?.run("Refund 250 EUR on A-1001").await;
    println!("{}", paused.status.as_str());
    let stored = serde_json::to_string(&paused)?; // a database row, a queue message, a file...

    // Later, elsewhere:
    let paused: Response = serde_json::from_str(&stored)?;
    let call = paused.pending[0].clone(); // .tool_call_id, .name, .arguments, .digest
    println!("waiting: {} {}", call.name, call.arguments);
    let decisions = vec![Decision::approve(&call)];
    // or: Decision::edit(&call, json!({"order_id": "A-1001", "amount": 100})),
    //     Decision::reject(&call, "over the customer's limit"),
    //     Decision::answer(&call, "Refunded by hand.")
    let done = build()?
        .resume(Resume {
            turns: vec![],
            paused,
            decisions,
        })
        .await?;
    println!("{} {}", done.status.as_str(), done.text());
    Ok(())
}
