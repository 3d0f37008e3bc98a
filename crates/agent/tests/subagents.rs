//! Agents used as tools (`Agent::as_tool`), in memory: the parent's model
//! reads only the sub-agent's output; what the sub-agent spent rolls up;
//! its failures, a wait it cannot keep, a slow run past the timeout and
//! the parent's dependencies are the call's.

use std::time::Duration;

use parlance_agent::{Agent, Tool, ToolContext, ToolError};
use parlance_format::{Block, FinishReason, Message, Role, RunStatus, ToolStatus, Usage};
use parlance_model::scripted::ScriptedModel;
use serde_json::{Value, json};

fn delegates(id: &str, task: &str) -> Message {
    let mut m = Message::new(
        Role::Assistant,
        vec![Block::tool_call(id, "research", json!({"input": task}))],
    );
    m.finish_reason = Some(FinishReason::ToolCalls);
    m
}

fn says(text: &str, tokens: u64) -> Message {
    let mut m = Message::assistant(text);
    m.finish_reason = Some(FinishReason::Stop);
    m.usage = Some(Usage {
        input_tokens: tokens,
        output_tokens: 1,
        ..Usage::default()
    });
    m
}

fn result_of(messages: &[Message]) -> (ToolStatus, String) {
    let r = messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(Block::as_tool_result)
        .expect("a tool result");
    let text = r
        .content
        .iter()
        .map(|b| match b {
            Block::Text(t) => t.text.clone(),
            Block::Json { json } => json.to_string(),
            _ => String::new(),
        })
        .collect();
    (r.status, text)
}

fn parent(model: ScriptedModel, child: &Agent) -> Agent {
    Agent::builder(model)
        .tool(child.as_tool("research", "Looks things up."))
        .build()
        .expect("a parent")
}

#[tokio::test]
async fn the_parent_reads_only_the_sub_agents_output_and_its_spending_rolls_up() {
    let child_model = ScriptedModel::new([says("Order 7 shipped on May 2.", 100)]);
    let child = Agent::builder(child_model.clone())
        .instructions("You look orders up.")
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        delegates("c1", "When did order 7 ship?"),
        says("It shipped on May 2.", 10),
    ]);
    let r = parent(model.clone(), &child).run("Where is order 7?").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.text(), "It shipped on May 2.");
    assert_eq!(
        result_of(&r.messages),
        (ToolStatus::Ok, "Order 7 shipped on May 2.".into())
    );
    // The sub-agent was sent the task alone, under its own instructions.
    let sent = &child_model.received()[0].messages;
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].text(), "You look orders up.");
    assert_eq!(sent[1].text(), "When did order 7 ship?");
    // The parent's second request holds the output, not the child's messages.
    let second = &model.received()[1].messages;
    assert_eq!(second.len(), 3);
    // Tokens: the parent's answers (10 in, 1 out) and the child's (100 in, 1 out).
    assert_eq!(r.usage.input_tokens, 110);
    assert_eq!(r.usage.output_tokens, 1 + 1);
    let tool_message = &r.messages[2];
    assert_eq!(tool_message.role, Role::Tool);
    assert_eq!(tool_message.usage.map(|u| u.input_tokens), Some(100));
}

#[tokio::test]
async fn a_structured_output_reaches_the_parent_as_json() {
    let child = Agent::builder(ScriptedModel::new([says(r#"{"shipped": "May 2"}"#, 1)]))
        .output_schema("shipping", json!({"type": "object"}))
        .build()
        .unwrap();
    let model = ScriptedModel::new([delegates("c1", "order 7?"), says("May 2.", 1)]);
    let r = parent(model, &child).run("Where is order 7?").await;
    assert_eq!(
        result_of(&r.messages),
        (ToolStatus::Ok, r#"{"shipped":"May 2"}"#.into())
    );
}

#[tokio::test]
async fn a_failed_sub_agent_is_a_failed_call_the_model_can_read() {
    // No answer left: the child's model fails.
    let child = Agent::builder(ScriptedModel::new(Vec::<Message>::new()))
        .build()
        .unwrap();
    let model = ScriptedModel::new([
        delegates("c1", "order 7?"),
        says("I could not look it up.", 1),
    ]);
    let r = parent(model, &child).run("Where is order 7?").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let (status, text) = result_of(&r.messages);
    assert_eq!(status, ToolStatus::ToolFailed);
    assert!(
        text.starts_with("research failed: agent:model_error: agent research's run failed"),
        "{text}"
    );
}

#[tokio::test]
async fn a_sub_agent_cannot_wait_for_approval_in_memory_and_says_so() {
    let refund =
        Tool::new("refund", "Refund.", |_: Value| async { Ok("refunded") }).needs_approval();
    let child = Agent::builder(ScriptedModel::new([Message::new(
        Role::Assistant,
        vec![Block::tool_call("r1", "refund", json!({}))],
    )]))
    .tool(refund)
    .build()
    .unwrap();
    let model = ScriptedModel::new([delegates("c1", "refund order 7"), says("Could not.", 1)]);
    let r = parent(model, &child).run("Refund order 7").await;
    let (status, text) = result_of(&r.messages);
    assert_eq!(status, ToolStatus::ToolFailed);
    assert!(text.contains("waits for a decision on refund"), "{text}");
    assert!(text.contains("a thread store"), "{text}");
}

#[tokio::test]
async fn a_sub_agent_slower_than_the_timeout_is_stopped() {
    let slow = Tool::with_context("wait", "Waits.", |_: Value, ctx: ToolContext| async move {
        ctx.cancel.cancelled().await;
        Err::<String, _>(ToolError::new("stopped"))
    });
    let child = Agent::builder(ScriptedModel::new([Message::new(
        Role::Assistant,
        vec![Block::tool_call("w1", "wait", json!({}))],
    )]))
    .tool(slow)
    .build()
    .unwrap();
    let model = ScriptedModel::new([delegates("c1", "wait"), says("Too slow.", 1)]);
    let parent = Agent::builder(model)
        .tool(
            child
                .as_tool("research", "Looks things up.")
                .timeout(Duration::from_millis(100)),
        )
        .build()
        .unwrap();
    let r = tokio::time::timeout(Duration::from_secs(5), parent.run("go"))
        .await
        .expect("the parent is not held by its sub-agent");
    let (status, text) = result_of(&r.messages);
    assert_eq!(status, ToolStatus::Timeout, "{text}");
}

#[tokio::test]
async fn the_parents_dependencies_reach_the_sub_agents_tools() {
    struct Caller(&'static str);
    let whoami = Tool::with_context(
        "whoami",
        "Who asks.",
        |_: Value, ctx: ToolContext| async move {
            ctx.deps::<Caller>()
                .map(|c| c.0.to_string())
                .ok_or_else(|| ToolError::new("nobody"))
        },
    );
    let child = Agent::builder(ScriptedModel::new([
        Message::new(
            Role::Assistant,
            vec![Block::tool_call("w1", "whoami", json!({}))],
        ),
        says("It is ada.", 1),
    ]))
    .tool(whoami)
    .build()
    .unwrap();
    let child_view = child.clone();
    let model = ScriptedModel::new([delegates("c1", "who?"), says("ada", 1)]);
    let r = parent(model, &child)
        .with_deps(Caller("ada"))
        .run("who am I?")
        .await;
    assert_eq!(
        result_of(&r.messages),
        (ToolStatus::Ok, "It is ada.".into())
    );
    assert!(child_view.sub_agent("research").is_none());
}

#[tokio::test]
async fn the_agent_behind_a_tool_is_found_by_the_tools_name() {
    let child = Agent::builder(ScriptedModel::new([says("x", 1)]))
        .name("researcher")
        .build()
        .unwrap();
    let p = parent(ScriptedModel::new(Vec::<Message>::new()), &child);
    assert_eq!(
        p.sub_agent("research")
            .and_then(|a| a.name().map(str::to_string)),
        Some("researcher".to_string())
    );
    assert!(p.sub_agent("nothing").is_none());
    // The model is offered the task as one string.
    let spec = p.tools().get("research").unwrap().spec().clone();
    assert_eq!(spec.input_schema["required"], json!(["input"]));
}
