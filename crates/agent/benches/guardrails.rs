//! What guardrails cost a run (a model call asking for three tool calls,
//! the three calls, a model call answering): `none` is what an agent
//! without guardrails pays (plain public API: the same case runs on a
//! commit before guardrails, `off` in `benches/telemetry.rs`), `allow_each`
//! has one guardrail at each point that allows (three calls checked, the
//! input and the answer), `redact_each` one regex redaction at each point
//! that finds nothing.
//!
//! Run: `cargo bench -p parlance-agent --bench guardrails`.

mod common;

use divan::Bencher;
use parlance_agent::{GuardPoint, Guardrail, Verdict};
use parlance_model::scripted::ScriptedModel;

fn main() {
    divan::main();
}

fn one_run(b: Bencher, guardrails: Vec<Guardrail>) {
    let model = ScriptedModel::new([]);
    let mut a = common::builder(&model);
    for g in guardrails {
        a = a.guardrail(g);
    }
    common::one_run(b, &model, &a.build().unwrap());
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
