//! A run paused for a human's approval, kept as JSON (as a server or a
//! queue would), and resumed later, possibly by another process.
//! Runs offline: `cargo run -p parlance-ai --example approval`.

use parlance::scripted::ScriptedModel;
use parlance::{
    Agent, Block, Decision, DecisionKind, Message, Response, Resume, Role, RunStatus, Tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Refund {
    /// The order.
    order_id: String,
    /// Euros.
    amount: u32,
}

fn agent(model: ScriptedModel) -> anyhow::Result<Agent> {
    let refund = Tool::new("refund", "Refund an order.", |r: Refund| async move {
        Ok(format!("refunded {} EUR on {}", r.amount, r.order_id))
    })
    // Refunds over 100 EUR wait for a person.
    .needs_approval_if(|args| args["amount"].as_u64().unwrap_or(0) > 100);
    Ok(Agent::builder(model).tool(refund).build()?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let model = ScriptedModel::new([
        Message::new(
            Role::Assistant,
            vec![Block::tool_call(
                "c1",
                "refund",
                json!({"order_id": "A-1001", "amount": 120}),
            )],
        ),
        Message::assistant("Your refund of 120 EUR is on its way."),
    ]);
    let paused = agent(model.clone())?
        .run("Please refund order A-1001 (120 EUR)")
        .await;
    assert_eq!(paused.status, RunStatus::RequiresApproval);
    let pending = &paused.pending[0];
    println!("waiting: {} {}", pending.name, pending.arguments);

    // Kept as JSON, read back later.
    let stored = serde_json::to_string(&paused)?;
    let paused: Response = serde_json::from_str(&stored)?;

    // A reviewer approves; the decision repeats the request's digest, so it
    // cannot be applied to another call or to changed arguments.
    let decision = Decision {
        tool_call_id: pending.tool_call_id.clone(),
        digest: pending.digest.clone(),
        decision: DecisionKind::Approved,
        arguments: None,
        reason: None,
        content: None,
    };
    let resume = Resume {
        turns: vec![],
        paused,
        decisions: vec![decision],
    };
    let done = agent(model)?.resume(resume).await?.into_result()?;
    println!("answer: {}", done.text());
    Ok(())
}
