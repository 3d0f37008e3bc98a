//! Toolsets: asked before each model call (the first ask starts them),
//! their tools offered next to the agent's under the same engine, names
//! two sources share prefixed, a failure to list failing the run, and
//! `Agent::shutdown` reaching them. A fake toolset stands in for an MCP
//! server (crates/mcp/tests runs a real one).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use parlance_agent::{Agent, Tool, ToolBox, ToolError, Toolset, ToolsetError};
use parlance_format::{Block, FinishReason, Message, Role, RunStatus, ToolStatus};
use parlance_model::scripted::ScriptedModel;
use serde_json::{Value, json};

struct Fake {
    name: String,
    prefix: String,
    tools: Mutex<Result<Arc<ToolBox>, String>>,
    asked: AtomicUsize,
    stopped: AtomicUsize,
}

fn echo(name: &str, reply: &'static str) -> Tool {
    Tool::new(name, "Says something.", move |_: Value| async move {
        Ok::<_, ToolError>(reply)
    })
    .with_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
}

fn tool_box(tools: Vec<Tool>) -> Arc<ToolBox> {
    let mut b = ToolBox::new();
    for t in tools {
        b.add(t).unwrap();
    }
    Arc::new(b)
}

impl Fake {
    fn new(name: &str, tools: Vec<Tool>) -> Arc<Fake> {
        Arc::new(Fake {
            name: format!("fake {name}"),
            prefix: name.into(),
            tools: Mutex::new(Ok(tool_box(tools))),
            asked: AtomicUsize::new(0),
            stopped: AtomicUsize::new(0),
        })
    }
}

impl Toolset for Fake {
    fn name(&self) -> &str {
        &self.name
    }
    fn prefix(&self) -> &str {
        &self.prefix
    }
    fn tools(&self) -> BoxFuture<'_, Result<Arc<ToolBox>, ToolsetError>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let r = self.tools.lock().unwrap().clone();
        Box::pin(async move { r.map_err(|e| ToolsetError::new(self.name.clone(), e)) })
    }
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        self.stopped.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {})
    }
}

fn calls(list: &[(&str, &str, Value)]) -> Message {
    let mut m = Message::new(
        Role::Assistant,
        list.iter()
            .map(|(id, name, args)| Block::tool_call(*id, *name, args.clone()))
            .collect(),
    );
    m.finish_reason = Some(FinishReason::ToolCalls);
    m
}

fn says(text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.finish_reason = Some(FinishReason::Stop);
    m
}

fn names(model: &ScriptedModel, request: usize) -> Vec<String> {
    model.received()[request]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

#[tokio::test]
async fn toolsets_are_asked_before_each_model_call_and_share_names_with_prefixes() {
    let a = Fake::new(
        "a",
        vec![echo("search", "from a"), echo("only_a", "a alone")],
    );
    let b = Fake::new(
        "b",
        vec![echo("search", "from b"), echo("mine", "b's mine")],
    );
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "a_search", json!({})),
            ("c2", "b_search", json!({})),
            ("c3", "mine", json!({})),
            ("c4", "b_mine", json!({})),
            ("c5", "only_a", json!({"n": "x"})),
        ]),
        says("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .tool(echo("mine", "the agent's own"))
        .toolset(Arc::clone(&a))
        .toolset(Arc::clone(&b))
        .build()
        .unwrap();
    assert_eq!(a.asked.load(Ordering::SeqCst), 0, "asked before a run");
    let r = agent.run("go").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(
        names(&model, 0),
        ["mine", "a_search", "only_a", "b_search", "b_mine"]
    );
    let results: Vec<_> = r.messages[2]
        .content
        .iter()
        .filter_map(|b| b.as_tool_result())
        .collect();
    let text = |i: usize| results[i].content[0].as_text().unwrap().to_string();
    assert_eq!(text(0), "from a");
    assert_eq!(text(1), "from b");
    assert_eq!(text(2), "the agent's own");
    assert_eq!(text(3), "b's mine");
    // The toolset's tool is validated by the engine like any other.
    assert_eq!(results[4].status, ToolStatus::InvalidArguments);
    assert_eq!(a.asked.load(Ordering::SeqCst), 2, "once per model call");
    agent.shutdown().await;
    assert_eq!(a.stopped.load(Ordering::SeqCst), 1);
    assert_eq!(b.stopped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_toolset_whose_tools_change_is_offered_the_new_ones_at_the_next_call() {
    let a = Fake::new("a", vec![echo("first", "1")]);
    let model = ScriptedModel::new([calls(&[("c1", "first", json!({}))]), says("done")]);
    let agent = Agent::builder(model.clone())
        .toolset(Arc::clone(&a))
        .build()
        .unwrap();
    let a2 = Arc::clone(&a);
    // The tools change before the first run asks for them.
    *a2.tools.lock().unwrap() = Ok(tool_box(vec![echo("first", "1"), echo("second", "2")]));
    let r = agent.run("go").await;
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(names(&model, 0), ["first", "second"]);
    *a.tools.lock().unwrap() = Ok(tool_box(vec![echo("second", "2")]));
    model.push(says("again"));
    agent.run("go").await;
    assert_eq!(names(&model, 2), ["second"]);
}

#[tokio::test]
async fn a_toolset_that_cannot_list_its_tools_fails_the_run_before_the_model() {
    let a = Fake::new("a", vec![]);
    *a.tools.lock().unwrap() = Err("could not start: no such program".into());
    let model = ScriptedModel::new([says("never")]);
    let agent = Agent::builder(model.clone()).toolset(a).build().unwrap();
    let r = agent.run("go").await;
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "tools_unavailable");
    assert_eq!(e.message, "fake a: could not start: no such program");
    assert!(model.received().is_empty());
}

#[tokio::test]
async fn an_edit_of_a_toolset_call_is_checked_against_its_schema() {
    let careful = echo("pay", "paid").needs_approval();
    let a = Fake::new("a", vec![careful]);
    let model = ScriptedModel::new([calls(&[("c1", "pay", json!({"n": 1}))]), says("done")]);
    let agent = Agent::builder(model.clone())
        .toolset(Arc::clone(&a))
        .build()
        .unwrap();
    assert_eq!(agent.settings()["toolsets"], json!(["fake a"]));
    let paused = agent.run("go").await;
    assert_eq!(
        paused.status,
        RunStatus::RequiresApproval,
        "{:?}",
        paused.error
    );
    let digest = paused.pending[0].digest.clone();
    let edit = |n: Value| parlance_format::Decision {
        tool_call_id: "c1".into(),
        digest: digest.clone(),
        decision: parlance_format::DecisionKind::Edited,
        arguments: Some(json!({"n": n})),
        reason: None,
        content: None,
    };
    let refused = agent
        .resume(parlance_agent::Resume {
            turns: vec![],
            paused: paused.clone(),
            decisions: vec![edit(json!("x"))],
        })
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("invalid for pay"), "{refused}");
    let r = agent
        .resume(parlance_agent::Resume {
            turns: vec![],
            paused,
            decisions: vec![edit(json!(2))],
        })
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
}
