//! A run's claim and its outcome, each one transaction, on SQLite and
//! PostgreSQL: the claim writes the run's input and reads the thread's
//! history with the run row (or nothing at all when refused), concurrent
//! claims have one winner, a dead run found by the claim is interrupted
//! and its thread repaired first, a run whose lease was taken between its
//! claim and its first step writes nothing more, and the final answer is
//! written with the outcome or not at all.

use std::time::Duration;

use parlance_format::{Block, Message, Response, Role, ToolStatus};
use parlance_store::{Store, StoreError};
use serde_json::json;

use parlance_testkit::both;
use parlance_testkit::store::*;

both!(
    a_claim_writes_the_input_and_reads_the_history,
    a_refused_claim_writes_nothing,
    a_claim_of_a_missing_thread_writes_nothing,
    concurrent_claims_have_one_winner,
    a_claim_interrupts_a_dead_run_and_repairs_its_thread_first,
    a_long_input_is_written_whole_with_the_claim,
    a_run_whose_lease_was_taken_after_its_claim_writes_nothing,
    the_final_answer_is_written_with_the_outcome_or_not_at_all,
    a_claim_takes_the_run_id_it_is_given_once,
);

fn response(status: &str, text: &str) -> Response {
    serde_json::from_value(json!({
        "status": status,
        "messages": [],
        "output": text,
        "usage": {"input_tokens": 1, "output_tokens": 2},
        "finish_reason": "stop",
    }))
    .unwrap()
}

fn texts(history: &[Message]) -> Vec<String> {
    history.iter().map(Message::text).collect()
}

async fn a_claim_writes_the_input_and_reads_the_history(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let first = store
        .claim_thread(&thread.id, &json!({"n": 1}), &[Message::user("one")], true)
        .await
        .unwrap();
    assert_eq!(first.history, Vec::<Message>::new(), "a new thread");
    assert_eq!(first.input_seqs, [0]);
    store
        .finish_with(
            &first.run,
            &[says("first answer")],
            &response("completed", "x"),
        )
        .await
        .unwrap();

    let second = store
        .claim_thread(&thread.id, &json!({"n": 2}), &[Message::user("two")], true)
        .await
        .unwrap();
    assert_eq!(texts(&second.history), ["one", "first answer"]);
    assert_eq!(second.input_seqs, [2]);
    let stored = store.all_messages(&thread.id).await.unwrap();
    assert_eq!(stored[2].message.text(), "two");
    assert_eq!(stored[2].run_id.as_deref(), Some(second.run.id.as_str()));
    let run = store.run(&second.run.id).await.unwrap();
    assert_eq!(
        (run.status.as_str(), run.settings.clone()),
        ("running", json!({"n": 2}))
    );
    assert!(
        store.thread(&thread.id).await.unwrap().updated_at >= run.created_at,
        "the input moved the thread's updated_at"
    );

    // Without the history, the claim reads none.
    store
        .finish_run(&second.run, &response("completed", "y"))
        .await
        .unwrap();
    let third = store
        .claim_thread(&thread.id, &json!({}), &[], false)
        .await
        .unwrap();
    assert!(third.history.is_empty() && third.input_seqs.is_empty());
}

async fn a_refused_claim_writes_nothing(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let holder = store
        .claim_thread(&thread.id, &json!({}), &[Message::user("mine")], true)
        .await
        .unwrap();
    let before = store.thread(&thread.id).await.unwrap();
    match store
        .claim_thread(&thread.id, &json!({}), &[Message::user("intruder")], true)
        .await
    {
        Err(StoreError::Busy { run, status, .. }) => {
            assert_eq!((run, status.as_str()), (holder.run.id.clone(), "running"));
        }
        other => panic!("expected busy, got {other:?}"),
    }
    assert_eq!(texts(&store.history(&thread.id).await.unwrap()), ["mine"]);
    assert_eq!(store.runs(&thread.id).await.unwrap().len(), 1);
    assert_eq!(store.thread(&thread.id).await.unwrap(), before);
}

async fn a_claim_of_a_missing_thread_writes_nothing(store: Store) {
    let e = store
        .claim_thread("thr_missing", &json!({}), &[Message::user("hi")], true)
        .await
        .unwrap_err();
    assert_eq!(e, StoreError::NotFound("thread thr_missing".into()));
    assert!(store.runs("thr_missing").await.unwrap().is_empty());
}

/// Eight claims at once on one thread: one wins, seven are told it is
/// busy, and the thread holds the winner's input alone.
async fn concurrent_claims_have_one_winner(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let claims = (0..8).map(|i| {
        let (store, thread) = (store.clone(), thread.clone());
        tokio::spawn(async move {
            store
                .claim_thread(
                    &thread,
                    &json!({}),
                    &[Message::user(format!("claim {i}"))],
                    true,
                )
                .await
        })
    });
    let results: Vec<_> = futures::future::join_all(claims)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let won: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(won.len(), 1, "{results:?}");
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| matches!(e, StoreError::Busy { .. })),
        "{results:?}"
    );
    let history = store.history(&thread).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        store.all_messages(&thread).await.unwrap()[0]
            .run_id
            .as_deref(),
        Some(won[0].run.id.as_str())
    );
}

async fn a_claim_interrupts_a_dead_run_and_repairs_its_thread_first(store: Store) {
    let store = store.with_lease(Duration::from_millis(200));
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let dead = store
        .claim_thread(&thread, &json!({}), &[Message::user("go")], true)
        .await
        .unwrap();
    store
        .append(&dead.run, &[calls(&[("c1", "lookup", json!({}))])])
        .await
        .unwrap();
    // Its process "died": the lease runs out.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let next = store
        .claim_thread(&thread, &json!({}), &[Message::user("again")], true)
        .await
        .unwrap();
    assert_eq!(next.history.len(), 3, "{:?}", next.history);
    let repair = &next.history[2];
    assert_eq!(repair.role, Role::Tool);
    let Block::ToolResult { tool_result } = &repair.content[0] else {
        panic!("{repair:?}")
    };
    assert_eq!(
        (tool_result.tool_call_id.as_str(), tool_result.status),
        ("c1", ToolStatus::Interrupted)
    );
    assert_eq!(next.input_seqs, [3]);
    let old = store.run(&dead.run.id).await.unwrap();
    assert_eq!(old.status, "failed");
    assert_eq!(old.error.unwrap()["code"], "interrupted");
    assert_eq!(store.history(&thread).await.unwrap()[3].text(), "again");
}

async fn a_long_input_is_written_whole_with_the_claim(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let input: Vec<Message> = (0..75).map(|i| Message::user(format!("m{i}"))).collect();
    let claim = store
        .claim_thread(&thread, &json!({}), &input, true)
        .await
        .unwrap();
    assert_eq!(claim.input_seqs, (0..75).collect::<Vec<i64>>());
    assert_eq!(store.history(&thread).await.unwrap(), input);
}

/// Claimed, then "stalled" past its lease while another process took the
/// thread over: its first step, its final answer and its outcome are all
/// refused, and none of them is written.
async fn a_run_whose_lease_was_taken_after_its_claim_writes_nothing(store: Store) {
    let store = store.with_lease(Duration::from_millis(200));
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let stalled = store
        .claim_thread(&thread, &json!({}), &[Message::user("first")], true)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let taker = store
        .clone()
        .with_lease(Duration::from_secs(30))
        .claim_thread(&thread, &json!({}), &[Message::user("second")], true)
        .await
        .unwrap();
    assert_eq!(texts(&taker.history), ["first"]);
    let lost = |e: StoreError| matches!(e, StoreError::LeaseLost { .. });
    assert!(lost(
        store
            .append(&stalled.run, &[says("late step")])
            .await
            .unwrap_err()
    ));
    assert!(lost(
        store
            .finish_with(
                &stalled.run,
                &[says("late answer")],
                &response("completed", "late")
            )
            .await
            .unwrap_err()
    ));
    assert_eq!(
        texts(&store.history(&thread).await.unwrap()),
        ["first", "second"]
    );
    let old = store.run(&stalled.run.id).await.unwrap();
    assert_eq!(old.error.unwrap()["code"], "interrupted");
    assert_eq!(store.run(&taker.run.id).await.unwrap().status, "running");
}

async fn the_final_answer_is_written_with_the_outcome_or_not_at_all(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let claim = store
        .claim_thread(&thread, &json!({}), &[Message::user("hi")], true)
        .await
        .unwrap();
    let seqs = store
        .finish_with(
            &claim.run,
            &[says("hello")],
            &response("completed", "hello"),
        )
        .await
        .unwrap();
    assert_eq!(seqs, [1]);
    let run = store.run(&claim.run.id).await.unwrap();
    assert_eq!(
        (
            run.status.as_str(),
            run.output.clone(),
            run.finish_reason.as_deref()
        ),
        ("completed", json!("hello"), Some("stop"))
    );
    assert_eq!(
        texts(&store.history(&thread).await.unwrap()),
        ["hi", "hello"]
    );
    // Once the outcome is recorded the run holds nothing: a second
    // outcome with an answer is refused whole.
    assert!(matches!(
        store
            .finish_with(
                &claim.run,
                &[says("again")],
                &response("completed", "again")
            )
            .await,
        Err(StoreError::LeaseLost { .. })
    ));
    assert_eq!(store.history(&thread).await.unwrap().len(), 2);

    // A lease that ran out: neither the answer nor the outcome.
    let short = store.clone().with_lease(Duration::from_millis(100));
    let claim = short
        .claim_thread(&thread, &json!({}), &[Message::user("more")], true)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(matches!(
        short
            .finish_with(
                &claim.run,
                &[says("too late")],
                &response("completed", "late")
            )
            .await,
        Err(StoreError::LeaseLost { .. })
    ));
    assert_eq!(
        texts(&store.history(&thread).await.unwrap()),
        ["hi", "hello", "more"]
    );
    assert_eq!(store.run(&claim.run.id).await.unwrap().status, "failed");
}

/// The Python and Node packages drop a store on their own thread (the
/// garbage collector's), outside the runtime it was opened on: the
/// connection kept for run writes goes back without a runtime to run on,
/// and without a panic, whether that runtime still runs or has stopped.
#[test]
fn a_store_dropped_outside_its_runtime_does_not_panic() {
    for stop_runtime_first in [false, true] {
        let dir = tempdir::TempDir::new();
        let path = dir.path().join("t.db");
        let rt = tokio::runtime::Runtime::new().unwrap();
        let store = rt.block_on(async {
            let store = Store::open(path.to_str().unwrap()).await.unwrap();
            let thread = store.create_thread(None, json!({})).await.unwrap();
            let claim = store
                .claim_thread(&thread.id, &json!({}), &[Message::user("hi")], true)
                .await
                .unwrap();
            store
                .finish_with(&claim.run, &[says("done")], &response("completed", "done"))
                .await
                .unwrap();
            store
        });
        if stop_runtime_first {
            drop(rt);
            drop(store);
        } else {
            drop(store);
            // What was written is there for the next opening.
            rt.block_on(async {
                let again = Store::open(path.to_str().unwrap()).await.unwrap();
                let threads = again.list_threads(None, None, 10).await.unwrap();
                assert_eq!(threads.items.len(), 1);
            });
        }
    }
}

/// Runs waiting on a slow model keep their threads by renewing their
/// leases (the runtime's heartbeat), and get their turn to write, however
/// busy the store is with other runs writing back to back. On SQLite the
/// runs' writes queue for one connection: with a lock that lets a newcomer
/// barge in (`futures`' mutex, before), the busy runs took the connection
/// again and again and the others waited without end; in the server bench
/// at 1,000 runs in flight some lost their threads so. The queue is fair
/// now (tokio's mutex).
#[test]
fn leases_are_renewed_while_other_runs_write_without_a_pause() {
    // On a thread of its own: a starved run hangs its runtime's tasks, and
    // the test says so instead of hanging with them.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(busy_store_with_waiting_runs());
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(120)) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("the waiting runs did not get their turn to write within two minutes")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("see the panic above"),
    }
}

async fn busy_store_with_waiting_runs() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let (store, _dir) = sqlite().await;
    let lease = Duration::from_millis(900);
    let store = store.with_lease(lease);
    let claim = |text: &'static str| {
        let store = store.clone();
        async move {
            let thread = store.create_thread(None, json!({})).await.unwrap();
            store
                .claim_thread(&thread.id, &json!({}), &[Message::user(text)], true)
                .await
                .unwrap()
                .run
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for _ in 0..24 {
        let (store, stop, run) = (store.clone(), Arc::clone(&stop), claim("busy").await);
        writers.push(tokio::spawn(async move {
            let mut steps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                store.append(&run, &[says("a step")]).await.unwrap();
                steps += 1;
            }
            steps
        }));
    }
    let mut waiting = Vec::new();
    for _ in 0..256 {
        let (store, run) = (store.clone(), claim("slow").await);
        waiting.push(tokio::spawn(async move {
            // The heartbeat's pace: a third of the lease, for 3.6 s.
            for beat in 0..12 {
                tokio::time::sleep(lease / 3).await;
                if let Err(e) = store.renew(&run).await {
                    panic!("beat {beat} of {}: {e}", run.id);
                }
            }
            // The run still holds its thread: its answer goes in.
            store.append(&run, &[says("answer")]).await.unwrap();
        }));
    }
    for w in waiting {
        w.await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let mut steps = 0;
    for w in writers {
        steps += w.await.unwrap();
    }
    assert!(steps > 100, "the other runs wrote {steps} steps");
}

/// An executor that names its run before it starts (a Temporal workflow)
/// gets that id; the same id again is refused and writes nothing, on both
/// paths of the claim (a new thread, and one with a history).
async fn a_claim_takes_the_run_id_it_is_given_once(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let id = parlance_format::new_id("run");
    let claim = store
        .claim_thread_as(
            Some(&id),
            &thread.id,
            &json!({}),
            &[Message::user("one")],
            true,
        )
        .await
        .unwrap();
    assert_eq!(claim.run.id, id);
    store
        .finish_with(&claim.run, &[says("done")], &response("completed", "done"))
        .await
        .unwrap();
    let again = store
        .claim_thread_as(
            Some(&id),
            &thread.id,
            &json!({}),
            &[Message::user("two")],
            true,
        )
        .await;
    assert!(
        matches!(&again, Err(StoreError::Conflict(m)) if m.contains(&id)),
        "{again:?}"
    );
    assert_eq!(
        store.messages(&thread.id, 0, 100).await.unwrap().len(),
        2,
        "nothing written"
    );
    let other = store
        .claim_thread_as(
            None,
            &thread.id,
            &json!({}),
            &[Message::user("three")],
            true,
        )
        .await
        .unwrap();
    assert_ne!(other.run.id, id);
}
