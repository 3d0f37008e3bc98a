//! Decisions on Temporal, from Rust: the executor and a worker in this
//! process, a real Temporal dev server (`PARLANCE_TEMPORAL_CLI`), a SQLite
//! store. The Update validator refuses what the engine refuses — a call
//! decided twice, edited arguments that do not fit the tool, a digest that
//! is not the request's — before anything reaches the workflow's history;
//! a valid edit runs the tool with the reviewer's arguments.

use std::sync::{Arc, Mutex};

use parlance_agent::{Agent, Tool, ToolContext, ToolError};
use parlance_format::{Decision, RunStatus};
use parlance_model::scripted::ScriptedModel;
use parlance_runtime::{AgentsByName, ResumeError};
use parlance_temporal::{Settings, Temporal, Work};
use parlance_testkit::store::{calls, says, sqlite};
use parlance_testkit::temporal::DevServer;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_update_validator_refuses_what_the_engine_refuses_and_an_edit_runs() {
    let dir = parlance_testkit::store::tempdir::TempDir::new();
    let Some(temporal) = DevServer::start(dir.path()).await else {
        return;
    };
    let (store, _store_dir) = sqlite().await;
    let refunded: Arc<Mutex<Vec<Value>>> = Default::default();
    let seen = Arc::clone(&refunded);
    let model = ScriptedModel::new([
        calls(&[("call_1", "refund", json!({"amount": 40}))]),
        says("Refunded 25."),
    ]);
    let agent = Agent::builder(Arc::new(model))
        .name("support")
        .tool(
            Tool::new("refund", "Refund an amount.", move |a: Value, _c: ToolContext| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock().unwrap().push(a.clone());
                    Ok::<_, ToolError>(json!({"refunded": a["amount"]}))
                }
            })
            .with_schema(json!({"type": "object", "properties": {"amount": {"type": "number", "maximum": 100}},
                "required": ["amount"], "additionalProperties": false}))
            .needs_approval(),
        )
        .build()
        .unwrap();
    let agents: AgentsByName = {
        let agent = agent.clone();
        Arc::new(move |name: &str| (name == "support").then(|| agent.clone()))
    };
    let settings = Settings {
        address: temporal.address.clone(),
        task_queue: format!("decisions-{}", parlance_format::new_id("q")),
        ..Default::default()
    };
    let executor = Temporal::connect(settings, store.clone()).await.unwrap();
    let worker = executor.worker(agents, 3).unwrap();

    let thread = store.create_thread(None, json!({})).await.unwrap();
    let paused = executor
        .start(
            "support",
            &thread.id,
            Work::Run(vec![parlance_format::Message::user("Refund 40")]),
            false,
        )
        .await
        .unwrap()
        .outcome()
        .await
        .unwrap();
    assert_eq!(paused.status, RunStatus::RequiresApproval);
    let run_id = paused.id.clone().unwrap();
    let request = &paused.pending[0];

    let refused = |decisions: Vec<Decision>| {
        let executor = executor.clone();
        let run_id = run_id.clone();
        async move {
            match executor
                .resume(&run_id, decisions, false)
                .await
                .unwrap()
                .outcome()
                .await
            {
                Err(ResumeError::Decision(e)) => e,
                other => panic!("not refused: {other:?}"),
            }
        }
    };
    let approve = Decision::approve(request);
    let e = refused(vec![approve.clone(), approve.clone()]).await;
    assert_eq!(e.path, "decisions[1].tool_call_id", "{e}");
    let e = refused(vec![Decision::edit(request, json!({"amount": 400}))]).await;
    assert!(e.path.starts_with("decisions[0].arguments"), "{e}");
    let mut forged = Decision::approve(request);
    forged.digest = "sha256:0000".into();
    let e = refused(vec![forged]).await;
    assert_eq!(e.path, "decisions[0].digest", "{e}");
    assert!(refunded.lock().unwrap().is_empty(), "nothing ran");
    assert_eq!(
        store.run(&run_id).await.unwrap().status,
        "requires_approval"
    );
    // Refused Updates never reach the history.
    assert!(
        !temporal.history(&thread.id).contains("UPDATE_ACCEPTED"),
        "{}",
        temporal.history(&thread.id)
    );

    let done = executor
        .resume(
            &run_id,
            vec![Decision::edit(request, json!({"amount": 25}))],
            false,
        )
        .await
        .unwrap()
        .outcome()
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed, "{:?}", done.error);
    assert_eq!(done.output, json!("Refunded 25."));
    assert_eq!(*refunded.lock().unwrap(), vec![json!({"amount": 25})]);
    assert_eq!(
        temporal
            .history(&thread.id)
            .matches("UPDATE_ACCEPTED")
            .count(),
        1
    );
    tokio::task::spawn_blocking(move || worker.stop())
        .await
        .unwrap();
}

/// Two reviewers decide the same pause at once: one decision is applied,
/// the other is refused (it reaches a run no longer waiting), the tool
/// runs once, and the workflow ends well.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_decisions_at_once_one_applies_the_other_is_refused() {
    let dir = parlance_testkit::store::tempdir::TempDir::new();
    let Some(temporal) = DevServer::start(dir.path()).await else {
        return;
    };
    let (store, _store_dir) = sqlite().await;
    let refunded: Arc<Mutex<u32>> = Default::default();
    let seen = Arc::clone(&refunded);
    let model = ScriptedModel::new([
        calls(&[("call_1", "refund", json!({"amount": 40}))]),
        says("Refunded."),
    ]);
    let agent = Agent::builder(Arc::new(model))
        .name("support")
        .tool(
            Tool::new(
                "refund",
                "Refund an amount.",
                move |a: Value, _c: ToolContext| {
                    let seen = Arc::clone(&seen);
                    async move {
                        *seen.lock().unwrap() += 1;
                        // Long enough for the second decision to arrive mid-call.
                        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                        Ok::<_, ToolError>(json!({"refunded": a["amount"]}))
                    }
                },
            )
            .needs_approval(),
        )
        .build()
        .unwrap();
    let agents: AgentsByName = Arc::new(move |_: &str| Some(agent.clone()));
    let settings = Settings {
        address: temporal.address.clone(),
        task_queue: format!("race-{}", parlance_format::new_id("q")),
        ..Default::default()
    };
    let executor = Temporal::connect(settings, store.clone()).await.unwrap();
    let worker = executor.worker(agents, 3).unwrap();
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let paused = executor
        .start(
            "support",
            &thread.id,
            Work::Run(vec![parlance_format::Message::user("Refund 40")]),
            false,
        )
        .await
        .unwrap()
        .outcome()
        .await
        .unwrap();
    let run_id = paused.id.clone().unwrap();
    let decide = || {
        let (executor, run_id) = (executor.clone(), run_id.clone());
        let d = Decision::approve(&paused.pending[0]);
        async move {
            match executor.resume(&run_id, vec![d], false).await {
                Ok(h) => h.outcome().await,
                Err(e) => Err(ResumeError::Store(e)),
            }
        }
    };
    let (a, b) = tokio::join!(decide(), decide());
    let completed = [&a, &b]
        .iter()
        .filter(|r| matches!(r, Ok(r) if r.status == RunStatus::Completed))
        .count();
    assert_eq!(completed, 1, "one decision applies: {a:?} {b:?}");
    assert!(
        a.is_err() || b.is_err(),
        "the other is refused: {a:?} {b:?}"
    );
    assert_eq!(*refunded.lock().unwrap(), 1, "the tool ran once");
    assert_eq!(store.run(&run_id).await.unwrap().status, "completed");
    let history = temporal.history(&thread.id);
    assert!(
        history.contains("WORKFLOW_EXECUTION_COMPLETED"),
        "{history}"
    );
    tokio::task::spawn_blocking(move || worker.stop())
        .await
        .unwrap();
}
