//! A paused run crosses languages: one paused by a Rust agent is checked
//! in as `testdata/paused/paused-by-rust.json` (this test writes it with
//! `PARLANCE_UPDATE_FIXTURES=1` and fails when it drifts) and resumed by
//! the Python and Node tests; the runs paused by Python and by Node
//! (`paused-by-python.json`, `paused-by-node.json`, written by their
//! tests) are resumed here with each of the four decisions of
//! `testdata/paused/decisions.json`.

use std::sync::{Arc, Mutex};

use parlance::scripted::ScriptedModel;
use parlance::{
    Agent, Block, Decision, FinishReason, Message, Response, Resume, Role, RunStatus, Tool,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

fn fixture(name: &str) -> String {
    format!(
        "{}/../../testdata/paused/{name}",
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
async fn runs_paused_by_python_and_node_resume_in_rust_with_each_decision() {
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture("decisions.json")).unwrap()).unwrap();
    assert_eq!(cases.len(), 4, "the four decisions");
    for file in ["paused-by-python.json", "paused-by-node.json"] {
        for case in &cases {
            let what = format!("{file}, {}", case["decision"]["decision"]);
            let text = std::fs::read_to_string(fixture(file)).unwrap();
            let paused = Response::from_value(&serde_json::from_str(&text).unwrap()).unwrap();
            assert_eq!(paused.status, RunStatus::RequiresApproval, "{what}");
            let request = paused.pending[0].clone();
            let mut decision = case["decision"].clone();
            decision["tool_call_id"] = json!(request.tool_call_id);
            decision["digest"] = json!(request.digest);
            let decision = Decision::from_value(&decision).unwrap();
            let ran = Arc::new(Mutex::new(Vec::new()));
            let mut done = Message::assistant("Done.");
            done.finish_reason = Some(FinishReason::Stop);
            let agent = Agent::builder(ScriptedModel::new([done]))
                .tool(refund_recorded(Arc::clone(&ran)))
                .build()
                .unwrap();
            let r = agent
                .resume(Resume {
                    turns: Vec::new(),
                    paused,
                    decisions: vec![decision],
                })
                .await
                .unwrap();
            assert_eq!(r.status, RunStatus::Completed, "{what}");
            let result = r
                .messages
                .iter()
                .flat_map(|m| &m.content)
                .find_map(Block::as_tool_result)
                .unwrap();
            assert_eq!(json!(result.status), case["status"], "{what}");
            let text: String = result.content.iter().filter_map(Block::as_text).collect();
            assert_eq!(json!(text), case["text"], "{what}");
            assert_eq!(json!(*ran.lock().unwrap()), case["ran"], "{what}");
            // The resumed history starts with the other language's part.
            assert_eq!(r.messages[0].text(), "Refund 20 EUR on A-1001", "{what}");
        }
    }
}

fn refund_recorded(ran: Arc<Mutex<Vec<Value>>>) -> Tool {
    Tool::new("refund", "Refund an order.", move |a: Refund| {
        let ran = Arc::clone(&ran);
        async move {
            ran.lock()
                .unwrap()
                .push(json!({"order_id": a.order_id, "amount": a.amount}));
            Ok::<_, parlance::ToolError>(format!("refunded {} EUR on {}", a.amount, a.order_id))
        }
    })
    .needs_approval()
}
