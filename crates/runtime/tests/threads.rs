//! Runs on threads, on both backends: every test runs on a real SQLite
//! file and on a real PostgreSQL server (`PARLANCE_TEST_POSTGRES_URL`; `.ci/run` starts
//! one, and with `PARLANCE_REQUIRE_POSTGRES=1` its absence is a failure).

use std::time::Duration;

use parlance_agent::OnToolException;
use parlance_format::{Block, Decision, DecisionKind, Message, Role, RunStatus, ToolStatus, Usage};
use parlance_model::scripted::ScriptedModel;
use parlance_runtime::ThreadRunner;
use parlance_store::{Store, StoreError, repair};
use serde_json::json;

mod common;
use common::*;

both!(
    a_run_stores_every_message_in_order,
    two_runs_on_one_thread_are_refused,
    approvals_wait_in_the_store_and_resume_from_a_fresh_runner,
    a_failed_run_is_retried,
    a_dead_run_is_taken_over_and_its_thread_repaired,
    artifacts_are_stored_but_never_sent,
    a_panicking_model_step_is_a_stored_failed_run,
);

async fn a_run_stores_every_message_in_order(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "lookup", json!({"q": "a"})),
            ("c2", "lookup", json!({"q": "b"})),
        ]),
        says("Found both."),
        says("Second answer."),
    ]);
    let runner = ThreadRunner::new(store.clone(), agent(&model, OnToolException::ReturnToModel));
    let r = runner
        .run(&thread.id, vec![Message::user("Find a and b")])
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed);
    let stored = store.messages(&thread.id, 0, 100).await.unwrap();
    let seqs: Vec<i64> = stored.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [0, 1, 2, 3]);
    let roles: Vec<Role> = stored.iter().map(|m| m.message.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
    );
    assert_eq!(
        stored.iter().map(|m| m.message.clone()).collect::<Vec<_>>(),
        r.messages,
        "the store holds exactly the run's messages"
    );
    let runs = store.runs(&thread.id).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "completed");
    assert_eq!(
        runs[0].usage,
        Some(Usage {
            input_tokens: 30,
            output_tokens: 8,
            ..Usage::default()
        })
    );
    assert_eq!(
        runs[0].settings["tools"],
        json!(["lookup", "refund", "charge"])
    );

    // The next run sees the stored history first.
    let r2 = runner
        .run(&thread.id, vec![Message::user("Again?")])
        .await
        .unwrap();
    let sent = &model.received()[2].messages;
    assert_eq!(sent[1..5].to_vec(), r.messages);
    assert_eq!(sent[5], Message::user("Again?"));
    assert_eq!(store.messages(&thread.id, 4, 100).await.unwrap().len(), 2);
    assert_eq!(r2.messages.len(), 2);
}

async fn two_runs_on_one_thread_are_refused(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let first = store.begin_run(&thread.id, &json!({})).await.unwrap();
    match store.begin_run(&thread.id, &json!({})).await {
        Err(StoreError::Busy { run, status, .. }) => {
            assert_eq!(run, first.id);
            assert_eq!(status, "running");
        }
        other => panic!("expected Busy, got {other:?}"),
    }
    let e = store.begin_run(&thread.id, &json!({})).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("thread {} is busy: run {} is running", thread.id, first.id)
    );
    assert!(matches!(
        store.delete_thread(&thread.id).await,
        Err(StoreError::Busy { .. })
    ));
}

async fn approvals_wait_in_the_store_and_resume_from_a_fresh_runner(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "refund", json!({"amount": 30})),
            ("c2", "lookup", json!({"q": "x"})),
        ]),
        says("Refunded."),
    ]);
    let paused = ThreadRunner::new(store.clone(), agent(&model, OnToolException::ReturnToModel))
        .run(&thread.id, vec![Message::user("Refund please")])
        .await
        .unwrap();
    assert_eq!(paused.status, RunStatus::RequiresApproval);
    let run_id = paused.id.clone().unwrap();
    assert_eq!(
        store.run(&run_id).await.unwrap().status,
        "requires_approval"
    );
    // The thread is held while it waits.
    assert!(
        matches!(store.begin_run(&thread.id, &json!({})).await, Err(StoreError::Busy { status, .. }) if status == "requires_approval")
    );

    // A fresh runner, as in another process, with only the store.
    let digest = {
        let last = store.history(&thread.id).await.unwrap().pop().unwrap();
        match &last.content[0] {
            Block::ApprovalRequest { approval_request } => approval_request.digest.clone(),
            other => panic!("{other:?}"),
        }
    };
    let fresh = ThreadRunner::new(store.clone(), agent(&model, OnToolException::ReturnToModel));
    let bad = Decision {
        tool_call_id: "c1".into(),
        digest: "sha256:00".into(),
        decision: DecisionKind::Approved,
        arguments: None,
        reason: None,
        content: None,
    };
    assert!(fresh.resume(&run_id, vec![bad]).await.is_err());
    assert_eq!(
        store.run(&run_id).await.unwrap().status,
        "requires_approval",
        "a refused decision leaves the run waiting"
    );
    let ok = Decision {
        tool_call_id: "c1".into(),
        digest,
        decision: DecisionKind::Approved,
        arguments: None,
        reason: None,
        content: None,
    };
    let done = fresh.resume(&run_id, vec![ok]).await.unwrap();
    assert_eq!(done.status, RunStatus::Completed);
    let history = store.history(&thread.id).await.unwrap();
    assert_eq!(history.len(), 4);
    let results: Vec<ToolStatus> = history[2]
        .content
        .iter()
        .map(|b| b.as_tool_result().unwrap().status)
        .collect();
    assert_eq!(
        results,
        [ToolStatus::Ok, ToolStatus::Ok],
        "the approval request was replaced by its result, in place"
    );
    assert_eq!(store.run(&run_id).await.unwrap().status, "completed");
    assert!(
        store.begin_run(&thread.id, &json!({})).await.is_ok(),
        "the thread is free again"
    );
}

async fn a_failed_run_is_retried(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let model = ScriptedModel::new([
        calls(&[("c1", "charge", json!({}))]),
        says("The card was declined; try another."),
    ]);
    let runner = ThreadRunner::new(store.clone(), agent(&model, OnToolException::Fail));
    let failed = runner
        .run(&thread.id, vec![Message::user("Charge me")])
        .await
        .unwrap();
    assert_eq!(failed.status, RunStatus::Failed);
    let record = store.run(failed.id.as_deref().unwrap()).await.unwrap();
    assert_eq!(record.status, "failed");
    assert_eq!(record.error.as_ref().unwrap()["code"], "tool_failed");
    assert_eq!(
        record.error.as_ref().unwrap()["cause"]["message"],
        "card 4111-1111 declined"
    );
    // The retry runs the failing call again (it fails again): its result
    // replaces the first one; nothing is appended.
    let retried = runner.retry(&thread.id).await.unwrap();
    assert_eq!(retried.status, RunStatus::Failed);
    assert_eq!(retried.error.unwrap().code, "tool_failed");
    assert_eq!(store.runs(&thread.id).await.unwrap().len(), 2);
    assert_eq!(store.history(&thread.id).await.unwrap().len(), 3);
    assert_eq!(model.received().len(), 1, "the model was not called again");
}

async fn a_dead_run_is_taken_over_and_its_thread_repaired(store: Store) {
    // Long enough that a loaded machine still finds it holding below.
    let store = store.with_lease(Duration::from_millis(1500));
    let thread = store.create_thread(None, json!({})).await.unwrap();
    // A run that wrote its input and an assistant message with calls, then died.
    let dead = store.begin_run(&thread.id, &json!({})).await.unwrap();
    store.append(&dead, &[Message::user("go")]).await.unwrap();
    store
        .append(
            &dead,
            &[calls(&[
                ("c1", "lookup", json!({"q": 1})),
                ("c2", "lookup", json!({"q": 2})),
            ])],
        )
        .await
        .unwrap();
    assert!(
        matches!(
            store.begin_run(&thread.id, &json!({})).await,
            Err(StoreError::Busy { .. })
        ),
        "its lease still holds"
    );
    tokio::time::sleep(Duration::from_millis(1700)).await;

    let model = ScriptedModel::new([says("Recovered.")]);
    let r = ThreadRunner::new(store.clone(), agent(&model, OnToolException::ReturnToModel))
        .run(&thread.id, vec![Message::user("continue")])
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed);
    let history = store.history(&thread.id).await.unwrap();
    let repair_msg = &history[2];
    assert_eq!(repair_msg.role, Role::Tool);
    assert!(
        repair_msg
            .content
            .iter()
            .all(|b| b.as_tool_result().unwrap().status == ToolStatus::Interrupted)
    );
    assert_eq!(
        repair_msg.metadata.as_ref().unwrap()["parlance_repair"],
        json!(true),
        "the repair is visible"
    );
    assert_eq!(repair(&history), None);
    let old = store.run(&dead.id).await.unwrap();
    assert_eq!(
        (old.status.as_str(), &old.error.unwrap()["code"]),
        ("failed", &json!("interrupted"))
    );
    // The dead run can no longer write.
    assert!(matches!(
        store.append(&dead, &[says("late")]).await,
        Err(StoreError::LeaseLost { .. })
    ));
}

async fn artifacts_are_stored_but_never_sent(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let model = ScriptedModel::new([
        calls(&[("c1", "charge", json!({}))]),
        says("Sorry."),
        says("Anything else?"),
    ]);
    let runner = ThreadRunner::new(store.clone(), agent(&model, OnToolException::ReturnGeneric));
    runner
        .run(&thread.id, vec![Message::user("Charge")])
        .await
        .unwrap();
    let artifacts = store.artifacts(&thread.id).await.unwrap();
    assert_eq!(artifacts.len(), 1);
    assert!(artifacts[0].artifact.to_string().contains("4111-1111"));
    // A later run reloads the thread from the store: the model still never sees it.
    let fresh = ThreadRunner::new(store.clone(), agent(&model, OnToolException::ReturnGeneric));
    fresh
        .run(&thread.id, vec![Message::user("Hello?")])
        .await
        .unwrap();
    for (i, req) in model.received().iter().enumerate() {
        let sent = format!("{:?}", req.messages);
        assert!(
            !sent.contains("4111-1111"),
            "request {i} carried the artifact"
        );
    }
    assert_eq!(model.received().len(), 3);
}

/// Issue 39: a model step that panics on a stored thread: the run is
/// stored `failed` with the panic's message (awaited and streamed), what
/// it did before is kept, and the thread is free for the next run.
async fn a_panicking_model_step_is_a_stored_failed_run(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let model = ScriptedModel::new([calls(&[("c1", "lookup", json!({"q": "a"}))])]);
    for _ in 0..2 {
        model.push_step(Box::new(|_| panic!("decoder bug")));
    }
    model.push(says("Found it."));
    let runner = ThreadRunner::new(store.clone(), agent(&model, OnToolException::ReturnToModel));
    let failed = runner
        .run(&thread.id, vec![Message::user("Find a")])
        .await
        .unwrap();
    assert_eq!(failed.status, RunStatus::Failed);
    let record = store.run(failed.id.as_deref().unwrap()).await.unwrap();
    assert_eq!(record.status, "failed");
    let error = record.error.unwrap();
    assert_eq!(error["code"], "model_error");
    assert_eq!(error["message"], "the model panicked: decoder bug");
    assert_eq!(error["cause"]["kind"], "panic");
    assert_eq!(
        store.messages(&thread.id, 0, 100).await.unwrap().len(),
        3,
        "the input, the call and its result are kept"
    );

    let streamed = runner
        .start(&thread.id, vec![Message::user("Again")], true)
        .await
        .unwrap();
    let id = streamed.run_id.clone();
    let events: Vec<parlance_agent::RunEvent> =
        futures::StreamExt::collect(streamed.events()).await;
    let Some(parlance_agent::RunEvent::RunCompleted(r)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(r.status, RunStatus::Failed);
    let record = store.run(&id).await.unwrap();
    assert_eq!(record.status, "failed");
    assert_eq!(
        record.error.unwrap()["message"],
        "the model panicked: decoder bug"
    );

    // The thread is free: the next run takes it and completes.
    let ok = runner
        .run(&thread.id, vec![Message::user("Once more")])
        .await
        .unwrap();
    assert_eq!(ok.status, RunStatus::Completed, "{:?}", ok.error);
    assert_eq!(store.runs(&thread.id).await.unwrap().len(), 3);
}
