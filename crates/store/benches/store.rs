//! Store costs on both backends: appending one message (one transaction,
//! lease renewed) and loading a 1,000-message thread; what the budgets'
//! ledger adds to a step (`counted` against `uncounted`: the same model
//! step, with and without its spending added to the thread's and the
//! owner's rows) and its read before a model call (`spent`).
//!
//! Run: `cargo bench -p parlance-store --bench store` (PostgreSQL too when
//! `PARLANCE_TEST_POSTGRES_URL` is set, e.g. from `scripts/postgres-start`).

use divan::Bencher;
use parlance_format::{Block, Message, Role};
use parlance_store::{ActiveRun, Store};
use serde_json::json;

fn main() {
    divan::main();
}

fn backends() -> Vec<&'static str> {
    let mut v = vec!["sqlite"];
    if std::env::var("PARLANCE_TEST_POSTGRES_URL").is_ok() {
        v.push("postgres");
    }
    v
}

fn message(i: usize) -> Message {
    if i.is_multiple_of(2) {
        Message::user(format!(
            "question {i}: what is the status of order A-{i:04}?"
        ))
    } else {
        Message::new(
            Role::Assistant,
            vec![
                Block::text(format!(
                    "Order A-{i:04} shipped yesterday and arrives on Friday."
                )),
                Block::json(json!({"order": i, "eta": "friday"})),
            ],
        )
    }
}

/// A store with a thread of `n` messages, and the run holding it.
fn setup(rt: &tokio::runtime::Runtime, backend: &str, n: usize) -> (Store, ActiveRun) {
    rt.block_on(async {
        let url = match backend {
            "postgres" => std::env::var("PARLANCE_TEST_POSTGRES_URL").unwrap(),
            _ => {
                let dir = std::env::temp_dir().join(format!(
                    "parlance-bench-{}-{}",
                    std::process::id(),
                    rand::random::<u32>()
                ));
                dir.join("bench.db").to_string_lossy().to_string()
            }
        };
        let store = Store::open(&url).await.unwrap();
        let thread = store.create_thread(Some("bench"), json!({})).await.unwrap();
        let run = store.begin_run(&thread.id, &json!({})).await.unwrap();
        let msgs: Vec<Message> = (0..n).map(message).collect();
        for chunk in msgs.chunks(100) {
            store.append(&run, chunk).await.unwrap();
        }
        (store, run)
    })
}

#[divan::bench(args = backends(), sample_count = 50)]
fn append_one_message(b: Bencher, backend: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (store, run) = setup(&rt, backend, 10);
    let m = message(1);
    b.bench_local(|| {
        rt.block_on(store.append(&run, std::slice::from_ref(&m)))
            .unwrap()
    });
}

#[divan::bench(args = backends(), sample_count = 20)]
fn load_a_1000_message_thread(b: Bencher, backend: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (store, run) = setup(&rt, backend, 1000);
    b.bench_local(|| {
        let h = rt.block_on(store.history(&run.thread_id)).unwrap();
        assert_eq!(h.len(), 1000);
        h
    });
}

/// A model's step: a tool call, with usage and cost.
fn step() -> Message {
    let mut m = Message::new(
        Role::Assistant,
        vec![Block::tool_call("c1", "lookup", json!({"id": "A-1"}))],
    );
    m.usage = Some(parlance_format::Usage {
        input_tokens: 1200,
        output_tokens: 40,
        ..Default::default()
    });
    m.cost = Some(0.0042);
    m
}

fn append_step(b: Bencher, backend: &str, counted: bool) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (store, mut run) = setup(&rt, backend, 10);
    run.count_spend = counted;
    let m = step();
    b.bench_local(|| {
        rt.block_on(store.append(&run, std::slice::from_ref(&m)))
            .unwrap()
    });
}

#[divan::bench(args = backends(), sample_count = 50)]
fn uncounted_step(b: Bencher, backend: &str) {
    append_step(b, backend, false);
}

#[divan::bench(args = backends(), sample_count = 50)]
fn counted_step(b: Bencher, backend: &str) {
    append_step(b, backend, true);
}

#[divan::bench(args = backends(), sample_count = 50)]
fn spent(b: Bencher, backend: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (store, mut run) = setup(&rt, backend, 10);
    run.count_spend = true;
    rt.block_on(store.append(&run, &[step()])).unwrap();
    b.bench_local(|| rt.block_on(store.spent(&run.thread_id)).unwrap());
}
