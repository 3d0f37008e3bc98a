//! What a budget costs a run (the run of `common`: a model call asking
//! for three tool calls, the three calls, a model call answering): `none`
//! is what every agent pays; `run_limits` checks the run's four measures
//! before each of the two model calls (a sum over the run's messages);
//! `store_limits` also asks the checkpoint for what a store counted (here
//! a checkpoint in memory: the store's own cost, its upserts and read, is
//! `cargo bench -p parlance-store --bench store`: `counted_step`,
//! `spent`).
//!
//! Run: `cargo bench -p parlance-agent --bench budget`.

mod common;

use std::sync::Arc;

use divan::Bencher;
use futures::future::BoxFuture;
use parlance_agent::{Budget, Caps, Checkpoint, CheckpointError, RunInput, Step, StoredSpend};
use parlance_model::scripted::ScriptedModel;

fn main() {
    divan::main();
}

/// Keeps nothing; has counted nothing.
struct Counted;

impl Checkpoint for Counted {
    fn commit<'a>(&'a self, _step: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async { Ok(()) })
    }

    fn spent(&self) -> BoxFuture<'_, Result<Option<StoredSpend>, CheckpointError>> {
        Box::pin(async { Ok(Some(StoredSpend::default())) })
    }
}

fn limits() -> Caps {
    Caps::new()
        .tokens(1_000_000)
        .cost(100.0)
        .model_calls(1000)
        .tool_calls(1000)
}

fn bench(b: Bencher, budget: Option<Budget>) {
    let model = ScriptedModel::new([]);
    let mut a = common::builder(&model);
    if let Some(budget) = budget {
        a = a.budget(budget);
    }
    let agent = a.build().unwrap();
    let checkpoint: Arc<dyn Checkpoint> = Arc::new(Counted);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    b.bench_local(|| {
        common::script(&model);
        let r = rt.block_on(async {
            agent
                .run(RunInput::text("where are my orders?"))
                .checkpoint(Arc::clone(&checkpoint))
                .await
        });
        assert_eq!(r.status, parlance_format::RunStatus::Completed);
        r
    });
}

#[divan::bench]
fn none(b: Bencher) {
    bench(b, None);
}

#[divan::bench]
fn run_limits(b: Bencher) {
    bench(b, Some(Budget::new().run(limits())));
}

#[divan::bench]
fn store_limits(b: Bencher) {
    bench(
        b,
        Some(
            Budget::new()
                .run(limits())
                .thread(limits())
                .owner_day(limits())
                .owner_month(limits()),
        ),
    );
}
