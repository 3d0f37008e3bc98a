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

mod common;

use divan::Bencher;
use parlance_model::scripted::ScriptedModel;

fn main() {
    divan::main();
}

fn one_run(b: Bencher) {
    let model = ScriptedModel::new([]);
    common::one_run(b, &model, &common::builder(&model).build().unwrap());
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
