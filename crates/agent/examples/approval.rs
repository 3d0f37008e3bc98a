//! A run that pauses for a human's approval, is stored as JSON, and is
//! resumed by a fresh agent — with a scripted model standing in for a
//! provider, so it runs anywhere.
//!
//! Run: `cargo run -p parlance-agent --example approval`

use std::sync::Arc;

use parlance_agent::{Agent, Resume, RunInput, Tool, ToolContext, ToolError};
use parlance_format::{Block, Decision, DecisionKind, FinishReason, Message, Response, Role};
use parlance_model::scripted::ScriptedModel;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Refund {
    /// The order to refund, like A-1001.
    order_id: String,
    /// Euros.
    #[schemars(range(min = 1, max = 500))]
    amount: u32,
}

fn agent(model: ScriptedModel) -> Agent {
    let refund = Tool::new(
        "refund",
        "Refund an order.",
        |a: Refund, _ctx: ToolContext| async move {
            Ok::<_, ToolError>(format!("refunded {} EUR on {}", a.amount, a.order_id))
        },
    )
    .needs_approval_if(|args| args["amount"].as_u64().unwrap_or(0) > 50);
    Agent::builder(Arc::new(model))
        .instructions("You handle refunds.")
        .tool(refund)
        .build()
        .expect("valid tools")
}

#[tokio::main]
async fn main() {
    let mut call = Message::new(
        Role::Assistant,
        vec![Block::tool_call(
            "call_1",
            "refund",
            json!({"order_id": "A-1001", "amount": 120}),
        )],
    );
    call.finish_reason = Some(FinishReason::ToolCalls);
    let model = ScriptedModel::new([
        call,
        Message::assistant("Your refund of 100 EUR is on its way."),
    ]);

    let paused = agent(model.clone())
        .run(RunInput::text("Please refund order A-1001 (120 EUR)"))
        .await;
    println!("status: {}", paused.status.as_str());
    let stored = parlance_format::to_json_pretty(&paused);
    println!("stored state:\n{stored}\n");

    // Later, maybe in another process: read the state, decide, resume.
    let paused =
        Response::from_value(&serde_json::from_str(&stored).expect("json")).expect("canonical");
    let request = &paused.pending[0];
    println!(
        "{} wants to run {} with {}",
        request.tool_call_id, request.name, request.arguments
    );
    let decision = Decision {
        tool_call_id: request.tool_call_id.clone(),
        digest: request.digest.clone(),
        decision: DecisionKind::Edited,
        arguments: Some(json!({"order_id": "A-1001", "amount": 100})),
        reason: None,
        content: None,
    };
    let done = agent(model)
        .resume(Resume {
            turns: vec![],
            paused,
            decisions: vec![decision],
        })
        .await
        .expect("the decision matches the pending call");
    println!("status: {}", done.status.as_str());
    println!("output: {}", done.output);
}
