//! The run every agent bench measures: a model call asking for three tool
//! calls, the three calls, a model call answering. Scripted, so that only
//! the run loop's own work is timed.
#![allow(dead_code)] // each bench uses its part

use divan::Bencher;
use parlance_agent::{Agent, AgentBuilder, RunInput, Tool, ToolError};
use parlance_format::{Block, FinishReason, Message, Role};
use parlance_model::scripted::ScriptedModel;
use serde_json::{Value, json};

/// The two answers of one run (what the model kept of the last run's
/// requests is let go: the heap stays the size of one run).
pub fn script(model: &ScriptedModel) {
    script_with(model, |_| {});
}

/// [`script`], each answer changed by `edit` first (usage, names...).
pub fn script_with(model: &ScriptedModel, edit: impl Fn(&mut Message)) {
    model.forget_received();
    let mut calls = Message::new(
        Role::Assistant,
        (1..=3)
            .map(|i| Block::tool_call(format!("c{i}"), "lookup", json!({"id": format!("A-{i}")})))
            .collect(),
    );
    calls.finish_reason = Some(FinishReason::ToolCalls);
    let mut done = Message::assistant("done");
    done.finish_reason = Some(FinishReason::Stop);
    edit(&mut calls);
    edit(&mut done);
    model.push(calls);
    model.push(done);
}

/// An agent named `bench` with the `lookup` tool, before its settings.
pub fn builder(model: &ScriptedModel) -> AgentBuilder {
    builder_on(model.clone())
}

/// [`builder`] on any model (a fallback around the scripted one...).
pub fn builder_on(model: impl parlance_model::IntoModel) -> AgentBuilder {
    let lookup = Tool::new("lookup", "Look up an order.", |args: Value| async move {
        Ok::<_, ToolError>(format!("order {} shipped", args["id"]))
    })
    .with_schema(
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
    );
    Agent::builder(model).name("bench").tool(lookup)
}

/// Times one run of `agent` (made on `model`) on `input` per iteration.
pub fn runs(b: Bencher, model: &ScriptedModel, agent: &Agent, input: impl Fn() -> RunInput) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    b.bench_local(|| {
        script(model);
        rt.block_on(async { agent.run(input()).await })
    });
}

/// [`runs`] of the question every bench asks.
pub fn one_run(b: Bencher, model: &ScriptedModel, agent: &Agent) {
    runs(b, model, agent, || RunInput::text("where are my orders?"));
}
