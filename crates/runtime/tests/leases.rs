//! Leases on real stores (SQLite file and PostgreSQL): a healthy run keeps
//! its thread through steps longer than its lease (the heartbeat), a run
//! whose lease really ran out writes nothing more, dead runs are swept the
//! moment their thread is touched, and a run whose caller went away still
//! ends and stores its outcome.
//!
//! Leases here are 2 s and slow steps 5 s (the figures), so each
//! test takes a few seconds, never minutes.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use parlance_agent::{Agent, Tool, ToolContext, ToolError};
use parlance_format::{Message, RunStatus, ToolStatus};
use parlance_model::scripted::ScriptedModel;
use parlance_model::{EventStream, Model, ModelError, ModelRequest};
use parlance_runtime::ThreadRunner;
use parlance_store::{Store, StoreError};
use serde_json::{Value, json};

mod common;
use common::*;

const LEASE: Duration = Duration::from_secs(2);
const SLOW: Duration = Duration::from_secs(5);

/// A scripted model whose answers take `delay`.
struct Slow(ScriptedModel, Duration);

impl Model for Slow {
    fn provider(&self) -> &str {
        "scripted"
    }
    fn model_id(&self) -> &str {
        "slow"
    }
    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(async move {
            tokio::time::sleep(self.1).await;
            self.0.generate(request).await
        })
    }
    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        Box::pin(async move {
            tokio::time::sleep(self.1).await;
            self.0.stream(request).await
        })
    }
}

fn slow_agent(model: ScriptedModel, model_delay: Duration) -> Agent {
    Agent::builder(Arc::new(Slow(model, model_delay)))
        .tool(Tool::new(
            "slow_tool",
            "Takes a while.",
            |_: Value, _c: ToolContext| async move {
                tokio::time::sleep(SLOW).await;
                Ok::<_, ToolError>("done slowly")
            },
        ))
        .build()
        .unwrap()
}

/// While the first run's long step is in flight, a second run on the same
/// thread must be refused; the first must end `completed` with its answer.
async fn second_run_is_refused_during(store: Store, first: ThreadRunner) -> String {
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let t = thread.clone();
    let running = tokio::spawn(async move { first.run(&t, vec![Message::user("go")]).await });
    // Past the lease, mid-step.
    tokio::time::sleep(LEASE + Duration::from_millis(1500)).await;
    let intruder = ThreadRunner::new(
        store.clone(),
        slow_agent(ScriptedModel::new([says("I took over.")]), Duration::ZERO),
    );
    match intruder.run(&thread, vec![Message::user("me too")]).await {
        Err(StoreError::Busy { status, .. }) => assert_eq!(status, "running"),
        other => panic!("a healthy run's thread was taken: {other:?}"),
    }
    let r = running.await.unwrap().unwrap();
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let runs = store.runs(&thread).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "completed");
    assert_eq!(
        store.history(&thread).await.unwrap().last().unwrap().text(),
        r.output.as_str().unwrap()
    );
    thread
}

async fn a_slow_model_answer_keeps_the_thread(store: Store) {
    let store = store.with_lease(LEASE);
    let runner = ThreadRunner::new(
        store.clone(),
        slow_agent(ScriptedModel::new([says("Slow but sure.")]), SLOW),
    );
    second_run_is_refused_during(store, runner).await;
}

async fn a_slow_tool_keeps_the_thread(store: Store) {
    let store = store.with_lease(LEASE);
    let model = ScriptedModel::new([
        calls(&[("c1", "slow_tool", json!({}))]),
        says("The tool finished."),
    ]);
    let runner = ThreadRunner::new(store.clone(), slow_agent(model, Duration::ZERO));
    let thread = second_run_is_refused_during(store.clone(), runner).await;
    // The tool's result is stored as it ran, not as `interrupted`.
    let history = store.history(&thread).await.unwrap();
    let result = history[2].content[0].as_tool_result().unwrap();
    assert_eq!(result.status, ToolStatus::Ok);
}

async fn an_expired_lease_stops_the_holder_before_it_writes(store: Store) {
    let store = store.with_lease(Duration::from_millis(300));
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let run = store.begin_run(&thread, &json!({})).await.unwrap();
    store.append(&run, &[Message::user("first")]).await.unwrap();
    store.renew(&run).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Nobody took the thread, yet the lease ran out: no more writes.
    for e in [
        store
            .append(&run, &[says("late")])
            .await
            .map(drop)
            .unwrap_err(),
        store.renew(&run).await.unwrap_err(),
        store.replace_last(&run, &says("late")).await.unwrap_err(),
    ] {
        assert!(matches!(e, StoreError::LeaseLost { .. }), "{e:?}");
    }
    let late = parlance_format::Response {
        id: Some(run.id.clone()),
        thread_id: Some(thread.clone()),
        status: RunStatus::Completed,
        messages: vec![],
        output: json!("late"),
        usage: Default::default(),
        cost: None,
        finish_reason: None,
        pending: vec![],
        error: None,
    };
    assert!(matches!(
        store.finish_run(&run, &late).await,
        Err(StoreError::LeaseLost { .. })
    ));
    assert_eq!(store.history(&thread).await.unwrap().len(), 1);
    let record = store.run(&run.id).await.unwrap();
    assert_eq!(record.status, "failed");
    assert_eq!(record.error.unwrap()["code"], "interrupted");
}

async fn dead_runs_are_swept_when_their_thread_is_touched(store: Store) {
    let store = store.with_lease(Duration::from_millis(300));
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let dead = store.begin_run(&thread, &json!({})).await.unwrap();
    store.append(&dead, &[Message::user("go")]).await.unwrap();
    store
        .append(&dead, &[calls(&[("c1", "lookup", json!({"q": 1}))])])
        .await
        .unwrap();
    assert!(matches!(
        store.delete_thread(&thread).await,
        Err(StoreError::Busy { .. })
    ));
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Reading the thread's runs shows it interrupted, at once.
    let runs = store.runs(&thread).await.unwrap();
    assert_eq!(runs[0].status, "failed");
    assert_eq!(runs[0].error.as_ref().unwrap()["code"], "interrupted");
    let history = store.history(&thread).await.unwrap();
    assert_eq!(
        history[2].content[0].as_tool_result().unwrap().status,
        ToolStatus::Interrupted,
        "the thread was repaired"
    );
    // And the thread can be deleted.
    store.delete_thread(&thread).await.unwrap();

    // The store-wide sweep (at start-up) finds the others.
    let other = store.create_thread(None, json!({})).await.unwrap().id;
    let dead = store.begin_run(&other, &json!({})).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let swept = store.sweep_expired().await.unwrap();
    assert!(swept.contains(&dead.id), "{swept:?}");
    // A DELETE right away works too.
    let third = store.create_thread(None, json!({})).await.unwrap().id;
    store.begin_run(&third, &json!({})).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    store.delete_thread(&third).await.unwrap();
}

async fn a_run_whose_caller_left_still_stores_its_outcome(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let runner = ThreadRunner::new(
        store.clone(),
        slow_agent(
            ScriptedModel::new([says("Nobody waited for me.")]),
            Duration::from_millis(800),
        ),
    );
    // The caller gives up once the run has started (its future is dropped).
    let t = thread.clone();
    let caller = tokio::spawn(async move { runner.run(&t, vec![Message::user("hello?")]).await });
    while store.runs(&thread).await.unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    caller.abort();
    assert!(caller.await.unwrap_err().is_cancelled());
    let mut record = None;
    for _ in 0..50 {
        let runs = store.runs(&thread).await.unwrap();
        if runs[0].status != "running" {
            record = Some(runs[0].clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let record = record.expect("the run never ended");
    assert_eq!(record.status, "completed");
    assert_eq!(record.output, json!("Nobody waited for me."));
    assert_eq!(record.usage.unwrap().output_tokens, 3);
    // The same for a streamed run whose listener is dropped at once.
    let runner = ThreadRunner::new(
        store.clone(),
        slow_agent(
            ScriptedModel::new([says("Streamed to nobody.")]),
            Duration::from_millis(300),
        ),
    );
    drop(
        runner
            .run_stream(&thread, vec![Message::user("again")])
            .await
            .unwrap(),
    );
    let mut done = false;
    for _ in 0..50 {
        let runs = store.runs(&thread).await.unwrap();
        if runs[1].status == "completed" {
            assert_eq!(runs[1].output, json!("Streamed to nobody."));
            done = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(done, "the streamed run's outcome was never stored");
}

both!(
    a_slow_model_answer_keeps_the_thread,
    a_slow_tool_keeps_the_thread,
    an_expired_lease_stops_the_holder_before_it_writes,
    dead_runs_are_swept_when_their_thread_is_touched,
    a_run_whose_caller_left_still_stores_its_outcome,
);
