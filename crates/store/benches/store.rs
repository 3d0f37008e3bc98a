//! Store costs on both backends: appending one message (one transaction,
//! lease renewed) and loading a 1,000-message thread.
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
        let thread = store.create_thread(None, json!({})).await.unwrap();
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
