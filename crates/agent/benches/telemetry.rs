//! What the run's telemetry costs: one run (a model call asking for three
//! tool calls, the three calls, a model call answering) with nobody
//! listening (`off`: what every run pays), with a subscriber that wants
//! the GenAI spans (`spans_on`: spans built and their fields recorded,
//! before any exporter), and with metrics switched on (`with_metrics_on`, no
//! recorder installed: the label building alone).
//!
//! Run: `cargo bench -p parlance-agent --bench telemetry`. Before/after:
//! the `off` case is plain public API, so the same file runs on a commit
//! without telemetry (docs/performance.md).

use divan::Bencher;
use parlance_agent::{Agent, Tool, ToolError};
use parlance_format::{Block, FinishReason, Message, Role};
use parlance_model::scripted::ScriptedModel;
use serde_json::{Value, json};

fn main() {
    divan::main();
}

fn script(model: &ScriptedModel) {
    let mut calls = Message::new(
        Role::Assistant,
        (1..=3)
            .map(|i| Block::tool_call(format!("c{i}"), "lookup", json!({"id": format!("A-{i}")})))
            .collect(),
    );
    calls.finish_reason = Some(FinishReason::ToolCalls);
    let mut done = Message::assistant("done");
    done.finish_reason = Some(FinishReason::Stop);
    model.push(calls);
    model.push(done);
}

fn agent(model: &ScriptedModel) -> Agent {
    let lookup = Tool::new("lookup", "Look up an order.", |args: Value| async move {
        Ok::<_, ToolError>(format!("order {} shipped", args["id"]))
    })
    .with_schema(
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
    );
    Agent::builder(model.clone())
        .name("bench")
        .tool(lookup)
        .build()
        .unwrap()
}

fn one_run(b: Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let model = ScriptedModel::new([]);
    let agent = agent(&model);
    b.bench_local(|| {
        script(&model);
        rt.block_on(async { agent.run("where are my orders?").await })
    });
}

#[divan::bench]
fn off(b: Bencher) {
    one_run(b);
}

#[divan::bench]
fn spans_on(b: Bencher) {
    use tracing_subscriber::prelude::*;
    let subscriber = tracing_subscriber::registry().with(
        tracing_subscriber::filter::Targets::new()
            .with_target("parlance::genai", tracing::Level::INFO),
    );
    tracing::subscriber::with_default(subscriber, || one_run(b));
}

#[divan::bench]
fn with_metrics_on(b: Bencher) {
    parlance_agent::telemetry::enable_metrics();
    one_run(b);
}
