//! What guardrails cost a run (a model call asking for three tool calls,
//! the three calls, a model call answering): `none` is what an agent
//! without guardrails pays (plain public API: the same case runs on a
//! commit before guardrails, `off` in `benches/telemetry.rs`), `allow_each`
//! has one guardrail at each point that allows (three calls checked, the
//! input and the answer), `redact_each` one regex redaction at each point
//! that finds nothing.
//!
//! Run: `cargo bench -p parlance-agent --bench guardrails`.

use divan::Bencher;
use parlance_agent::{Agent, GuardPoint, Guardrail, Tool, ToolError, Verdict};
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

fn agent(model: &ScriptedModel, guardrails: Vec<Guardrail>) -> Agent {
    let lookup = Tool::new("lookup", "Look up an order.", |args: Value| async move {
        Ok::<_, ToolError>(format!("order {} shipped", args["id"]))
    })
    .with_schema(
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
    );
    let mut b = Agent::builder(model.clone()).name("bench").tool(lookup);
    for g in guardrails {
        b = b.guardrail(g);
    }
    b.build().unwrap()
}

fn one_run(b: Bencher, guardrails: Vec<Guardrail>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let model = ScriptedModel::new([]);
    let agent = agent(&model, guardrails);
    b.bench_local(|| {
        script(&model);
        rt.block_on(async { agent.run("where are my orders?").await })
    });
}

#[divan::bench]
fn none(b: Bencher) {
    one_run(b, Vec::new());
}

#[divan::bench]
fn allow_each(b: Bencher) {
    let allow = |p| Guardrail::new("allow", p, |_| async { Ok(Verdict::Allow) });
    one_run(b, GuardPoint::ALL.into_iter().map(allow).collect());
}

#[divan::bench]
fn redact_each(b: Bencher) {
    let cards = regex::Regex::new(r"\d{4}-\d{4}-\d{4}-\d{4}").unwrap();
    let redact = |p| Guardrail::redact_pattern("cards", p, cards.clone(), "[card]");
    one_run(b, GuardPoint::ALL.into_iter().map(redact).collect());
}
