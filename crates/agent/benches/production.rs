//! What a run pays for what production needs around it (issue 31): a
//! fallback, costs, budgets. The run of `common` (a model call asking for
//! three tool calls, the three calls, a model call answering), each case
//! adding one thing:
//!
//! - `none`: the plain agent;
//! - `fallback`: its model first of a two-model `Fallback` (it answers:
//!   the bookkeeping of a list that did not need to move on);
//! - `priced`: each answer carries usage of a model the price table knows
//!   (`openai:gpt-4o-mini`): each message's cost looked up and summed;
//! - `run_limits`: a budget of the run's four measures, checked before
//!   each of the two calls;
//! - `store_limits`: run, thread and owner limits, what a store counted
//!   read through the checkpoint (a checkpoint in memory: the store's own
//!   cost is `cargo bench -p parlance-store --bench store`: `counted_step`,
//!   `spent`);
//! - `all`: fallback, prices and every limit together.
//!
//! Run: `cargo bench -p parlance-agent --bench production`.

mod common;

use std::sync::Arc;

use divan::Bencher;
use futures::future::BoxFuture;
use parlance_agent::{Budget, Caps, Checkpoint, CheckpointError, RunInput, Step, ThreadSpend};
use parlance_format::{Message, Usage};
use parlance_model::scripted::ScriptedModel;
use parlance_model::{Fallback, IntoModel, Model};

fn main() {
    divan::main();
}

/// Keeps nothing; has counted nothing.
struct Counted;

impl Checkpoint for Counted {
    fn commit<'a>(&'a self, _step: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async { Ok(()) })
    }

    fn spent(&self) -> BoxFuture<'_, Result<Option<ThreadSpend>, CheckpointError>> {
        Box::pin(async { Ok(Some(ThreadSpend::default())) })
    }
}

fn limits() -> Caps {
    Caps::new()
        .tokens(1_000_000)
        .cost(100.0)
        .model_calls(1000)
        .tool_calls(1000)
}

fn every_limit() -> Budget {
    Budget::new()
        .run(limits())
        .thread(limits())
        .owner_day(limits())
        .owner_month(limits())
}

/// The two answers of `common::script`, with a priced model's usage.
fn script_priced(model: &ScriptedModel) {
    common::script_with(model, |m: &mut Message| {
        m.usage = Some(Usage {
            input_tokens: 1200,
            output_tokens: 40,
            ..Usage::default()
        });
        m.provider = Some("openai".into());
        m.model = Some("gpt-4o-mini".into());
    });
}

#[derive(Clone, Copy)]
struct Case {
    fallback: bool,
    priced: bool,
    budget: Option<fn() -> Budget>,
}

fn bench(b: Bencher, case: Case) {
    let model = ScriptedModel::new([]);
    let mut a = if case.fallback {
        let spare = ScriptedModel::new([]);
        let list: Vec<Arc<dyn Model>> = vec![model.clone().into_model(), spare.into_model()];
        common::builder_on(Arc::new(Fallback::new(list).unwrap()))
    } else {
        common::builder(&model)
    };
    if let Some(budget) = case.budget {
        a = a.budget(budget());
    }
    let agent = a.build().unwrap();
    let checkpoint: Arc<dyn Checkpoint> = Arc::new(Counted);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    b.bench_local(|| {
        if case.priced {
            script_priced(&model);
        } else {
            common::script(&model);
        }
        let r = rt.block_on(async {
            agent
                .run(RunInput::text("where are my orders?"))
                .checkpoint(Arc::clone(&checkpoint))
                .await
        });
        assert_eq!(r.status, parlance_format::RunStatus::Completed);
        assert_eq!(r.cost.is_some(), case.priced);
        r
    });
}

const PLAIN: Case = Case {
    fallback: false,
    priced: false,
    budget: None,
};

#[divan::bench]
fn none(b: Bencher) {
    bench(b, PLAIN);
}

#[divan::bench]
fn fallback(b: Bencher) {
    bench(
        b,
        Case {
            fallback: true,
            ..PLAIN
        },
    );
}

#[divan::bench]
fn priced(b: Bencher) {
    bench(
        b,
        Case {
            priced: true,
            ..PLAIN
        },
    );
}

#[divan::bench]
fn run_limits(b: Bencher) {
    bench(
        b,
        Case {
            budget: Some(|| Budget::new().run(limits())),
            ..PLAIN
        },
    );
}

#[divan::bench]
fn store_limits(b: Bencher) {
    bench(
        b,
        Case {
            budget: Some(every_limit),
            ..PLAIN
        },
    );
}

#[divan::bench]
fn all(b: Bencher) {
    bench(
        b,
        Case {
            fallback: true,
            priced: true,
            budget: Some(every_limit),
        },
    );
}
