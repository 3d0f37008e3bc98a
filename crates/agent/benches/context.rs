//! What a context policy costs a run on a thread of 20 exchanges (the
//! run of `common`: three tool calls, then the answer), well under the
//! window: `no_policy` is what every agent pays, `compact_under_trigger`
//! sizes the context before each of the run's two model calls and does
//! nothing else (from the last reported usage; `_estimated`: no answer
//! reported any, all is estimated), `with_a_record` is a thread compacted
//! earlier (what is sent is built apart from what is stored, at each
//! call).
//!
//! Run: `cargo bench -p parlance-agent --bench context`.

mod common;

use divan::Bencher;
use parlance_agent::{ContextPolicy, RunInput};
use parlance_format::{Message, Turn, Usage};
use parlance_model::scripted::ScriptedModel;
use serde_json::json;

fn main() {
    divan::main();
}

/// 20 exchanges of about 100 tokens each; each answer reports its usage,
/// as a provider's does (`reported`), or none.
fn thread(record: bool, reported: bool) -> Vec<Turn> {
    let mut turns: Vec<Turn> = (0..20)
        .map(|i| {
            let mut answer = Message::assistant(format!("answer {i}: {}", "y".repeat(200)));
            if reported {
                answer.usage = Some(Usage {
                    input_tokens: 100 * (2 * i + 1),
                    output_tokens: 50,
                    ..Usage::default()
                });
            }
            Turn {
                messages: vec![
                    Message::user(format!("question {i}: {}", "x".repeat(200))),
                    answer,
                ],
            }
        })
        .collect();
    if record {
        let mut r = Message::user("Summary of the earlier conversation: ten questions answered.");
        r.metadata = Some(serde_json::Map::from_iter([(
            "compaction".to_string(),
            json!({"strategy": "compact", "replaces": 20, "tokens_before": 2000, "tokens_after": 1000}),
        )]));
        turns[10].messages.push(r);
    }
    turns
}

fn bench(b: Bencher, policy: Option<ContextPolicy>, record: bool, reported: bool) {
    let model = ScriptedModel::new([]);
    let mut a = common::builder(&model);
    if let Some(p) = policy {
        a = a.context(p);
    }
    let agent = a.build().unwrap();
    let turns = thread(record, reported);
    {
        // The case is what it says: the run completes, nothing is cut.
        common::script(&model);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let r = rt.block_on(async {
            agent
                .run(RunInput::text("q").with_turns(turns.clone()))
                .await
        });
        assert_eq!(
            r.status,
            parlance_format::RunStatus::Completed,
            "{:?}",
            r.error
        );
        assert_eq!(r.messages.len(), 4, "{:?}", r.messages);
    }
    common::runs(b, &model, &agent, || {
        RunInput::text("where are my orders?").with_turns(turns.clone())
    });
}

#[divan::bench]
fn no_policy(b: Bencher) {
    bench(b, None, false, true);
}

#[divan::bench]
fn compact_under_trigger(b: Bencher) {
    bench(
        b,
        Some(ContextPolicy::compact().window(1_000_000)),
        false,
        true,
    );
}

/// No answer reported usage: the whole context is estimated at each call.
#[divan::bench]
fn compact_under_trigger_estimated(b: Bencher) {
    bench(
        b,
        Some(ContextPolicy::compact().window(1_000_000)),
        false,
        false,
    );
}

#[divan::bench]
fn with_a_record(b: Bencher) {
    bench(b, None, true, true);
}
