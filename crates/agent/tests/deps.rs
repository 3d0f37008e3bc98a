//! `Agent::with_deps`: what a caller hands the tools reaches every call of
//! every way to run (awaited, streamed, resumed), and the original agent
//! stays without it.

use std::sync::Arc;

use parlance_agent::{Agent, Resume, Tool, ToolContext, ToolError};
use parlance_format::{
    Block, Decision, DecisionKind, FinishReason, Message, Role, RunStatus, ToolStatus,
};
use parlance_model::scripted::ScriptedModel;
use serde_json::{Value, json};

struct Caller {
    name: &'static str,
}

fn calls(id: &str) -> Message {
    let mut m = Message::new(
        Role::Assistant,
        vec![Block::tool_call(id, "whoami", json!({}))],
    );
    m.finish_reason = Some(FinishReason::ToolCalls);
    m
}

fn says(text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.finish_reason = Some(FinishReason::Stop);
    m
}

fn whoami(needs_approval: bool) -> Tool {
    let t = Tool::with_context(
        "whoami",
        "Who is asking.",
        |_: Value, ctx: ToolContext| async move {
            match ctx.deps::<Caller>() {
                Some(c) => Ok(c.name.to_string()),
                None => Err(ToolError::new("no caller")),
            }
        },
    );
    if needs_approval {
        t.needs_approval()
    } else {
        t
    }
}

/// The text of the tool result in the run's tool message.
fn tool_text(messages: &[Message]) -> (ToolStatus, String) {
    let r = messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(Block::as_tool_result)
        .expect("a tool result");
    (
        r.status,
        r.content.iter().filter_map(Block::as_text).collect(),
    )
}

#[tokio::test]
async fn deps_reach_tools_awaited_streamed_and_resumed() {
    let model = ScriptedModel::new([
        calls("c1"),
        says("done"),
        calls("c2"),
        says("done"),
        calls("c3"),
        says("done"),
        calls("c4"),
    ]);
    let agent = Agent::builder(Arc::new(model.clone()) as Arc<dyn parlance_model::Model>)
        .tool(whoami(false))
        .build()
        .unwrap();
    let ada = agent.with_deps(Caller { name: "ada" });

    let r = ada.run("who?").await;
    assert_eq!(tool_text(&r.messages), (ToolStatus::Ok, "ada".into()));

    let r = ada.run("who?").stream().response().await;
    assert_eq!(tool_text(&r.messages), (ToolStatus::Ok, "ada".into()));

    // The original agent has none.
    let r = agent.run("who?").await;
    assert_eq!(
        tool_text(&r.messages),
        (ToolStatus::Error, "no caller".into())
    );
}

#[tokio::test]
async fn deps_reach_a_resumed_call() {
    let model = ScriptedModel::new([calls("c1"), says("done")]);
    let agent = Agent::builder(model).tool(whoami(true)).build().unwrap();
    let paused = agent.run("who?").await;
    assert_eq!(paused.status, RunStatus::RequiresApproval);
    let request = &paused.pending[0];
    let decision = Decision {
        tool_call_id: request.tool_call_id.clone(),
        decision: DecisionKind::Approved,
        digest: request.digest.clone(),
        arguments: None,
        reason: None,
        content: None,
    };
    let r = agent
        .with_deps(Caller { name: "grace" })
        .resume(Resume {
            turns: Vec::new(),
            paused,
            decisions: vec![decision],
        })
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(tool_text(&r.messages), (ToolStatus::Ok, "grace".into()));
}
