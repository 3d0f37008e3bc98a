//! A paused run crosses languages: one paused by a Rust agent is checked
//! in as `testdata/python/paused-by-rust.json` (this test writes it with
//! `PARLANCE_UPDATE_FIXTURES=1` and fails when it drifts) and resumed by
//! the Python tests (`test_approvals.py`); one paused by a Python agent,
//! `paused-by-python.json` (written by the Python tests), is resumed here.

use parlance::scripted::ScriptedModel;
use parlance::{
    Agent, Block, Decision, DecisionKind, FinishReason, Message, Response, Resume, Role, RunStatus,
    Tool, ToolStatus,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

fn fixture(name: &str) -> String {
    format!(
        "{}/../../testdata/python/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[derive(Deserialize, JsonSchema)]
struct Refund {
    order_id: String,
    amount: u32,
}

fn refund() -> Tool {
    Tool::new("refund", "Refund an order.", |a: Refund| async move {
        Ok(format!("refunded {} EUR on {}", a.amount, a.order_id))
    })
    .needs_approval()
}

fn asks_for_a_refund() -> Message {
    let mut m = Message::new(
        Role::Assistant,
        vec![Block::tool_call(
            "call_1",
            "refund",
            json!({"order_id": "A-1001", "amount": 20}),
        )],
    );
    m.finish_reason = Some(FinishReason::ToolCalls);
    m
}

#[tokio::test]
async fn a_run_paused_by_rust_is_the_checked_in_fixture() {
    let model = ScriptedModel::new([asks_for_a_refund()]);
    let agent = Agent::builder(model).tool(refund()).build().unwrap();
    let paused = agent
        .run("Refund 20 EUR on A-1001")
        .id("run_paused_by_rust")
        .await;
    assert_eq!(paused.status, RunStatus::RequiresApproval);
    let text = parlance::format::to_json_pretty(&paused) + "\n";
    let path = fixture("paused-by-rust.json");
    if std::env::var_os("PARLANCE_UPDATE_FIXTURES").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        on_disk, text,
        "{path} differs from what the Rust agent writes; run with PARLANCE_UPDATE_FIXTURES=1 and commit"
    );
}

#[tokio::test]
async fn a_run_paused_by_python_resumes_in_rust() {
    let text = std::fs::read_to_string(fixture("paused-by-python.json")).unwrap();
    let paused = Response::from_value(&serde_json::from_str(&text).unwrap()).unwrap();
    assert_eq!(paused.status, RunStatus::RequiresApproval);
    let request = paused.pending[0].clone();
    let mut done = Message::assistant("Refunded.");
    done.finish_reason = Some(FinishReason::Stop);
    let agent = Agent::builder(ScriptedModel::new([done]))
        .tool(refund())
        .build()
        .unwrap();
    let r = agent
        .resume(Resume {
            turns: Vec::new(),
            paused,
            decisions: vec![Decision {
                tool_call_id: request.tool_call_id.clone(),
                digest: request.digest.clone(),
                decision: DecisionKind::Approved,
                arguments: None,
                reason: None,
                content: None,
            }],
        })
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(r.text(), "Refunded.");
    let result = r
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(Block::as_tool_result)
        .unwrap();
    assert_eq!(result.status, ToolStatus::Ok);
    assert_eq!(
        result.content[0].as_text(),
        Some("refunded 20 EUR on A-1001")
    );
}
