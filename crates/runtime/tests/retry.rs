//! Retry and `fail` on real stores: a retry runs again only the calls
//! that failed, a run stopped by `fail` while a call waits for approval
//! leaves a thread that works, and the failure's text never reaches the
//! model on retry.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parlance_agent::{Agent, Limits, OnToolException, Tool, ToolContext, ToolError};
use parlance_format::{Block, Decision, DecisionKind, Message, RunStatus, ToolStatus};
use parlance_model::scripted::ScriptedModel;
use parlance_runtime::ThreadRunner;
use parlance_store::Store;
use serde_json::{Value, json};

mod common;
use common::*;

/// `lookup` always works; `flaky` fails unexpectedly the first time only;
/// `refund` needs approval. The counters say how often each ran.
fn retry_agent(model: &ScriptedModel, runs: &[Arc<AtomicUsize>; 2]) -> Agent {
    let (l, f) = (runs[0].clone(), runs[1].clone());
    Agent::builder(Arc::new(model.clone()))
        .limits(Limits {
            on_tool_exception: OnToolException::Fail,
            ..Limits::default()
        })
        .tool(Tool::new(
            "lookup",
            "Look up.",
            move |_: Value, _c: ToolContext| {
                let l = l.clone();
                async move {
                    l.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, ToolError>(json!({"found": true}))
                }
            },
        ))
        .tool(Tool::new(
            "flaky",
            "Fails once.",
            move |_: Value, _c: ToolContext| {
                let f = f.clone();
                async move {
                    if f.fetch_add(1, Ordering::SeqCst) == 0 {
                        let _: u32 = "twelve".parse()?;
                    }
                    Ok::<_, parlance_agent::ToolFailure>(Value::String("flaky worked".into()))
                }
            },
        ))
        .tool(
            Tool::new(
                "refund",
                "Refund.",
                |_: Value, _c: ToolContext| async move { Ok::<_, ToolError>("refunded") },
            )
            .needs_approval(),
        )
        .build()
        .unwrap()
}

async fn a_retry_reruns_only_the_failed_calls(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let model = ScriptedModel::new([
        calls(&[("c1", "lookup", json!({})), ("c2", "flaky", json!({}))]),
        says("Both worked."),
    ]);
    let counts = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
    let runner = ThreadRunner::new(store.clone(), retry_agent(&model, &counts));
    let failed = runner
        .run(&thread, vec![Message::user("go")])
        .await
        .unwrap();
    assert_eq!(failed.status, RunStatus::Failed);
    assert_eq!(failed.error.as_ref().unwrap().code, "tool_failed");
    let retried = runner.retry(&thread).await.unwrap();
    assert_eq!(retried.status, RunStatus::Completed, "{:?}", retried.error);
    assert_eq!(retried.output, json!("Both worked."));
    assert_eq!(
        counts[0].load(Ordering::SeqCst),
        1,
        "the call that succeeded did not run again"
    );
    assert_eq!(counts[1].load(Ordering::SeqCst), 2);
    // The model never read the failure.
    let sent = format!("{:?}", model.received()[1].messages);
    assert!(
        !sent.contains("ParseIntError") && !sent.contains("failed"),
        "{sent}"
    );
    let history = store.history(&thread).await.unwrap();
    let statuses: Vec<ToolStatus> = history[2]
        .content
        .iter()
        .map(|b| b.as_tool_result().unwrap().status)
        .collect();
    assert_eq!(statuses, [ToolStatus::Ok, ToolStatus::Ok]);
    assert_eq!(history.len(), 4);
    let runs = store.runs(&thread).await.unwrap();
    assert_eq!(
        runs.iter().map(|r| r.status.as_str()).collect::<Vec<_>>(),
        ["failed", "completed"]
    );
    // Nothing to retry after a completed run.
    assert!(runner.retry(&thread).await.is_err());
}

async fn fail_with_a_pending_approval_leaves_a_usable_thread(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let model = ScriptedModel::new([
        calls(&[("c1", "refund", json!({})), ("c2", "flaky", json!({}))]),
        says("Refunded, and flaky worked."),
    ]);
    let counts = [Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0))];
    let runner = ThreadRunner::new(store.clone(), retry_agent(&model, &counts));
    let failed = runner
        .run(&thread, vec![Message::user("go")])
        .await
        .unwrap();
    assert_eq!(failed.status, RunStatus::Failed);
    assert!(failed.pending.is_empty());
    let no_requests = |messages: &[Message]| {
        !messages
            .iter()
            .flat_map(|m| &m.content)
            .any(|b| matches!(b, Block::ApprovalRequest { .. }))
    };
    assert!(no_requests(&failed.messages), "{:?}", failed.messages);
    let history = store.history(&thread).await.unwrap();
    assert!(no_requests(&history));
    assert_eq!(
        history[2].content[0].as_tool_result().unwrap().status,
        ToolStatus::Interrupted
    );
    // Retry: flaky runs again, the refund waits for a decision again.
    let paused = runner.retry(&thread).await.unwrap();
    assert_eq!(
        paused.status,
        RunStatus::RequiresApproval,
        "{:?}",
        paused.error
    );
    assert_eq!(paused.pending.len(), 1);
    assert_eq!(counts[1].load(Ordering::SeqCst), 2);
    let d = Decision {
        tool_call_id: "c1".into(),
        digest: paused.pending[0].digest.clone(),
        decision: DecisionKind::Approved,
        arguments: None,
        reason: None,
        content: None,
    };
    let done = runner
        .resume(paused.id.as_deref().unwrap(), vec![d])
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed, "{:?}", done.error);
    let history = store.history(&thread).await.unwrap();
    assert!(no_requests(&history));
    assert_eq!(
        history.last().unwrap().text(),
        "Refunded, and flaky worked."
    );
}

both!(
    a_retry_reruns_only_the_failed_calls,
    fail_with_a_pending_approval_leaves_a_usable_thread,
);
