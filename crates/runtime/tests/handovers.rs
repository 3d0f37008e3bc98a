//! How many times a run on a SQLite thread hands work to the database.
//!
//! sqlx runs each SQLite connection on a thread of its own and hands it
//! every command (`BEGIN`, a statement or a script, `COMMIT`, the ping it
//! sends when a connection goes back to its pool) over a channel: each one
//! wakes that thread and puts it back to sleep, two task switches that
//! dominated the server's CPU per run on threads (docs/performance.md,
//! "Issue 22"). This counts them from the kernel's side: the voluntary
//! context switches of sqlx's worker threads (`/proc/self/task/*/status`),
//! around runs shaped like peerbench's task (the input, one answer with
//! three tool calls, their results, the final answer), driven the way
//! `POST /v1/runs` with a thread drives them (the thread read for its owner,
//! then the runner). It prints the figure and fails when it grows past
//! what the store's write path is built for: a count of commands, not a
//! timing, so it holds on a loaded machine.

use parlance_agent::OnToolException;
use parlance_format::{Message, RunStatus};
use parlance_model::scripted::ScriptedModel;
use parlance_runtime::ThreadRunner;
use serde_json::json;

// This suite runs on SQLite alone: the shared `both!` goes unused.
#[allow(unused_imports)]
mod common;
use common::*;

/// Runs measured (after one that opens the pool's connections).
const RUNS: usize = 20;

/// The most hand-overs a run may take, the server's thread read included
/// (measured: 33.9 before the claim and outcome were scripts, 5.8 after).
const MOST_PER_RUN: f64 = 8.0;

/// Voluntary context switches of sqlx's SQLite worker threads so far.
fn worker_switches() -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").expect("/proc/self/task") {
        let dir = task.unwrap().path();
        let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        // The kernel keeps 15 bytes of "sqlx-sqlite-worker-N".
        if !name.starts_with("sqlx-sqlite") {
            continue;
        }
        let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}

/// The count once the connections went back to the pool (sqlx pings each
/// one from a task of its own after the run's last write).
async fn settled_switches() -> u64 {
    let mut last = worker_switches();
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let now = worker_switches();
        if now == last {
            return now;
        }
        last = now;
    }
}

fn peerbench_model(runs: usize) -> ScriptedModel {
    let mut answers = Vec::new();
    for _ in 0..runs {
        answers.push(calls(&[
            ("c1", "lookup", json!({"q": "1"})),
            ("c2", "lookup", json!({"q": "2"})),
            ("c3", "lookup", json!({"q": "3"})),
        ]));
        answers.push(says("Found all three."));
    }
    ScriptedModel::new(answers)
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_a_sqlite_thread_takes_few_hand_overs() {
    let (store, _dir) = sqlite().await;
    let model = peerbench_model(RUNS + 1);
    let runner = ThreadRunner::new(store.clone(), agent(&model, OnToolException::ReturnToModel));
    let mut threads = Vec::new();
    for _ in 0..=RUNS {
        threads.push(store.create_thread(None, json!({})).await.unwrap().id);
    }
    let one_run = |thread: String| {
        let (store, runner) = (store.clone(), runner.clone());
        async move {
            // What the server does first: the thread, for its owner.
            store.thread(&thread).await.unwrap();
            let r = runner
                .run(&thread, vec![Message::user("Find 1, 2 and 3")])
                .await
                .unwrap();
            assert_eq!(r.status, RunStatus::Completed, "{r:?}");
        }
    };
    one_run(threads[0].clone()).await;
    let before = settled_switches().await;
    for thread in &threads[1..] {
        one_run(thread.clone()).await;
    }
    let after = settled_switches().await;
    let per_run = (after - before) as f64 / RUNS as f64;
    println!(
        "hand-overs to SQLite's connection threads per run on a thread: {per_run:.1} ({} over {RUNS} runs)",
        after - before
    );
    for thread in &threads {
        assert_eq!(store.history(thread).await.unwrap().len(), 4);
    }
    assert!(
        per_run <= MOST_PER_RUN,
        "a run took {per_run:.1} hand-overs (at most {MOST_PER_RUN})"
    );
}
