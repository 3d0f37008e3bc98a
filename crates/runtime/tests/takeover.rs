//! Runs that finish on their own after their process died, on real stores
//! (SQLite file and PostgreSQL). A death is left as a process would leave
//! it: the run's claim and committed steps written, nothing after, the
//! lease left to run out. The `Resumer` then carries the run on: a model
//! step that had not committed is asked again, calls that had not
//! committed run again (once, with the same idempotency key), committed
//! results are kept, a run that keeps dying at one step is given up, a run
//! that died after its decisions waits for them again, and a server's
//! previous incarnation's runs are taken at once.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use parlance_agent::{Agent, Tool, ToolContext, ToolError};
use parlance_format::{Message, Role, RunStatus, ToolResult, ToolStatus};
use parlance_model::scripted::ScriptedModel;
use parlance_runtime::{NotResumed, Resumer, TakenOver, ThreadRunner};
use parlance_store::{Store, Takeover};
use serde_json::{Value, json};

mod common;
use common::*;

const LEASE: Duration = Duration::from_millis(300);

/// Keys each call of `charge` ran with.
type Seen = Arc<Mutex<Vec<String>>>;

/// An agent of a name of its own: the PostgreSQL suites share one
/// database, and a resumer takes the dead runs of its agents only.
fn agent(model: ScriptedModel, seen: &Seen) -> Agent {
    let seen = Arc::clone(seen);
    Agent::builder(Arc::new(model))
        .name(parlance_format::new_id("support"))
        .tool(
            Tool::new(
                "refund",
                "Refund.",
                |a: Value, _c: ToolContext| async move {
                    Ok::<_, ToolError>(format!("refunded {}", a["amount"]))
                },
            )
            .needs_approval(),
        )
        .tool(Tool::new(
            "charge",
            "Charge a card.",
            move |a: Value, c: ToolContext| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock().unwrap().push(c.idempotency_key());
                    Ok::<_, ToolError>(json!({"charged": a["amount"]}))
                }
            },
        ))
        .build()
        .unwrap()
}

/// A run left as if its process died after committing `steps` (the input
/// first): returns the thread and the run's id.
async fn died_after(store: &Store, agent: &Agent, steps: &[Message]) -> (String, String) {
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let claim = store
        .claim_thread(
            &thread,
            &agent.settings(),
            &[Message::user("charge me")],
            false,
        )
        .await
        .unwrap();
    if !steps.is_empty() {
        store.append(&claim.run, steps).await.unwrap();
    }
    tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    (thread, claim.run.id)
}

async fn wait_ended(store: &Store, run: &str) -> parlance_store::RunRecord {
    for _ in 0..100 {
        let r = store.run(run).await.unwrap();
        if r.status != "running" {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("run {run} never ended");
}

fn outcome_of<'a>(resumed: &'a [parlance_runtime::Resumed], run: &str) -> Option<&'a NotResumed> {
    resumed
        .iter()
        .find(|r| r.run_id == run)
        .expect("the run was found dead")
        .outcome
        .as_ref()
        .err()
}

fn results(m: &Message) -> Vec<&ToolResult> {
    m.content
        .iter()
        .filter_map(|b| b.as_tool_result())
        .collect()
}

async fn a_model_step_that_did_not_commit_is_asked_again(store: Store) {
    let store = store.with_lease(LEASE).with_resume_grace(LEASE * 10);
    let seen = Seen::default();
    let a = agent(ScriptedModel::new([says("Done.")]), &seen);
    let (thread, run) = died_after(&store, &a, &[]).await;
    // Touching the thread within the grace leaves the run to the resumer.
    assert_eq!(store.runs(&thread).await.unwrap()[0].status, "running");
    let resumed = Resumer::new(store.clone(), [a])
        .resume_dead(false)
        .await
        .unwrap();
    let ours: Vec<_> = resumed.iter().filter(|r| r.outcome.is_ok()).collect();
    assert_eq!(ours.len(), 1);
    assert_eq!(ours[0].run_id, run);
    let record = wait_ended(&store, &run).await;
    assert_eq!(record.status, "completed", "{:?}", record.error);
    assert_eq!(record.output, json!("Done."));
    let history = store.history(&thread).await.unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1].text(), "Done.");
    // Nothing is left to resume.
    assert!(
        store
            .dead_runs(false)
            .await
            .unwrap()
            .iter()
            .all(|r| r.id != run)
    );
}

async fn calls_that_did_not_commit_run_again_once(store: Store) {
    let store = store.with_lease(LEASE).with_resume_grace(LEASE * 10);
    let seen = Seen::default();
    let a = agent(ScriptedModel::new([says("Charged twice.")]), &seen);
    let step = calls(&[
        ("c1", "charge", json!({"amount": 5})),
        ("c2", "charge", json!({"amount": 7})),
    ]);
    let (thread, run) = died_after(&store, &a, &[step]).await;
    Resumer::new(store.clone(), [a])
        .resume_dead(false)
        .await
        .unwrap();
    let record = wait_ended(&store, &run).await;
    assert_eq!(record.status, "completed", "{:?}", record.error);
    let mut keys = seen.lock().unwrap().clone();
    keys.sort();
    assert_eq!(keys, [format!("{thread}/c1"), format!("{thread}/c2")]);
    let history = store.history(&thread).await.unwrap();
    assert_eq!(history.len(), 4, "{history:#?}");
    assert_eq!(history[2].role, Role::Tool);
    let statuses: Vec<ToolStatus> = results(&history[2]).iter().map(|r| r.status).collect();
    assert_eq!(statuses, [ToolStatus::Ok, ToolStatus::Ok]);
    assert!(
        history[2].metadata.is_none(),
        "the repair was replaced by the real results: {:?}",
        history[2].metadata
    );
    assert_eq!(history[3].text(), "Charged twice.");
}

async fn committed_results_are_kept_even_failed_ones(store: Store) {
    let store = store.with_lease(LEASE).with_resume_grace(LEASE * 10);
    let seen = Seen::default();
    let a = agent(ScriptedModel::new([says("It failed; I told them.")]), &seen);
    // Committed, not a repair: a failure, and a call that was stopped.
    let failed = Message::new(
        Role::Tool,
        vec![
            parlance_format::Block::tool_result(ToolResult::text(
                "c1",
                ToolStatus::ToolFailed,
                "charge failed: card declined",
            )),
            parlance_format::Block::tool_result(ToolResult::text(
                "c2",
                ToolStatus::Interrupted,
                "charge was interrupted",
            )),
        ],
    );
    let step = calls(&[
        ("c1", "charge", json!({"amount": 5})),
        ("c2", "charge", json!({"amount": 6})),
    ]);
    let (thread, run) = died_after(&store, &a, &[step, failed]).await;
    Resumer::new(store.clone(), [a])
        .resume_dead(false)
        .await
        .unwrap();
    let record = wait_ended(&store, &run).await;
    assert_eq!(record.status, "completed", "{:?}", record.error);
    assert!(
        seen.lock().unwrap().is_empty(),
        "a committed call ran again"
    );
    let history = store.history(&thread).await.unwrap();
    let kept: Vec<ToolStatus> = results(&history[2]).iter().map(|r| r.status).collect();
    assert_eq!(kept, [ToolStatus::ToolFailed, ToolStatus::Interrupted]);
    assert_eq!(history[3].text(), "It failed; I told them.");
}

async fn a_run_that_keeps_dying_is_given_up(store: Store) {
    let store = store.with_lease(LEASE).with_resume_grace(LEASE * 10);
    let seen = Seen::default();
    let a = agent(ScriptedModel::new([]), &seen);
    let step = calls(&[("c1", "charge", json!({"amount": 5}))]);
    let (thread, run) = died_after(&store, &a, &[step]).await;
    for attempt in 1..=2 {
        match store.take_over(&run, false, 2).await.unwrap() {
            Takeover::Claimed {
                attempt: n,
                history,
                ..
            } => {
                assert_eq!(n, attempt);
                // The repair is stored once, not once per attempt.
                assert_eq!(history.len(), 3, "{history:#?}");
            }
            other => panic!("attempt {attempt}: {other:?}"),
        }
        // Alive now: nobody else takes it.
        assert_eq!(
            store.take_over(&run, false, 2).await.unwrap(),
            Takeover::Gone
        );
        tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    }
    let resumed = Resumer::new(store.clone(), [a.clone()])
        .max_attempts(2)
        .resume_dead(false)
        .await
        .unwrap();
    assert_eq!(
        outcome_of(&resumed, &run),
        Some(&NotResumed::TakenOver(TakenOver::GaveUp { attempts: 3 }))
    );
    let record = store.run(&run).await.unwrap();
    assert_eq!(record.status, "failed");
    let error = record.error.unwrap();
    assert_eq!(error["code"], "interrupted");
    assert_eq!(error["cause"]["attempts"], 3);
    assert!(
        error["message"].as_str().unwrap().contains("3 times"),
        "{error}"
    );
    // The thread is free: a new run goes.
    let next = ThreadRunner::new(
        store.clone(),
        agent(ScriptedModel::new([says("Hi.")]), &seen),
    )
    .run(&thread, vec![Message::user("again")])
    .await
    .unwrap();
    assert_eq!(next.status, RunStatus::Completed, "{:?}", next.error);
}

async fn a_step_that_commits_resets_the_count(store: Store) {
    let store = store.with_lease(LEASE).with_resume_grace(LEASE * 10);
    let seen = Seen::default();
    let a = agent(ScriptedModel::new([]), &seen);
    let (_thread, run) = died_after(&store, &a, &[]).await;
    for _ in 0..3 {
        let Takeover::Claimed {
            run: active,
            attempt,
            ..
        } = store.take_over(&run, false, 2).await.unwrap()
        else {
            panic!("not claimed")
        };
        assert_eq!(attempt, 1, "a step committed since the last takeover");
        store.append(&active, &[says("thinking...")]).await.unwrap();
        tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    }
}

/// The calls a takeover runs again replace their repair in place (the
/// thread's length does not change): that is progress too, and the next
/// death starts the count again.
async fn calls_run_again_in_place_count_as_progress(store: Store) {
    let store = store.with_lease(LEASE).with_resume_grace(LEASE * 10);
    let seen = Seen::default();
    let a = agent(ScriptedModel::new([]), &seen);
    let step = calls(&[("c1", "charge", json!({"amount": 5}))]);
    let (_thread, run) = died_after(&store, &a, &[step]).await;
    let Takeover::Claimed {
        run: active,
        attempt: 1,
        history,
    } = store.take_over(&run, false, 2).await.unwrap()
    else {
        panic!("not claimed")
    };
    // The call ran and committed over its repair, then the run died again.
    let mut done = history.last().unwrap().clone();
    done.metadata = None;
    done.content = vec![parlance_format::Block::tool_result(ToolResult::text(
        "c1",
        ToolStatus::Ok,
        "charged 5",
    ))];
    store.replace_last(&active, &done).await.unwrap();
    tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    match store.take_over(&run, false, 2).await.unwrap() {
        Takeover::Claimed {
            attempt, history, ..
        } => {
            assert_eq!(attempt, 1, "the call's commit was progress");
            assert_eq!(history.len(), 3, "no second repair: {history:#?}");
        }
        other => panic!("{other:?}"),
    }
}

async fn a_run_that_died_after_its_decisions_waits_again(store: Store) {
    let store = store.with_lease(LEASE).with_resume_grace(LEASE * 10);
    let seen = Seen::default();
    let model = ScriptedModel::new([calls(&[("r1", "refund", json!({"amount": 9}))])]);
    let a = agent(model, &seen);
    let runner = ThreadRunner::new(store.clone(), a.clone());
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let paused = runner
        .run(&thread, vec![Message::user("refund")])
        .await
        .unwrap();
    assert_eq!(paused.status, RunStatus::RequiresApproval);
    let run = paused.id.clone().unwrap();
    // The decision was taken (the run claimed back), then the process died.
    store.claim_paused(&run).await.unwrap();
    tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    let resumed = Resumer::new(store.clone(), [a])
        .resume_dead(false)
        .await
        .unwrap();
    assert_eq!(
        outcome_of(&resumed, &run),
        Some(&NotResumed::TakenOver(TakenOver::Waiting))
    );
    assert_eq!(store.run(&run).await.unwrap().status, "requires_approval");
    let waiting = store.waiting_runs(None, 1000).await.unwrap();
    assert!(waiting.iter().any(|w| w.run.id == run), "not in the inbox");
}

async fn a_previous_incarnations_runs_are_taken_at_once(store: Store) {
    let me = format!("server-{}", parlance_format::new_id("t"));
    let store = store
        .with_lease(Duration::from_secs(30))
        .with_resume_grace(Duration::from_secs(30))
        .with_holder(&me);
    let seen = Seen::default();
    let a = agent(ScriptedModel::new([says("Back.")]), &seen);
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let claim = store
        .claim_thread(&thread, &a.settings(), &[Message::user("hi")], false)
        .await
        .unwrap();
    // Its lease has 30 s to go: only its own holder may call it dead.
    assert!(
        store
            .dead_runs(false)
            .await
            .unwrap()
            .iter()
            .all(|r| r.id != claim.run.id)
    );
    let other = store.clone().with_holder("someone-else");
    assert!(
        other
            .dead_runs(true)
            .await
            .unwrap()
            .iter()
            .all(|r| r.id != claim.run.id)
    );
    assert_eq!(
        other.take_over(&claim.run.id, true, 3).await.unwrap(),
        Takeover::Gone
    );
    // The same holder, restarted: it is its previous incarnation's.
    let restarted = store.clone().with_holder(&me);
    let resumed = Resumer::new(restarted.clone(), [a])
        .resume_dead(true)
        .await
        .unwrap();
    let mine: Vec<_> = resumed
        .iter()
        .filter(|r| r.run_id == claim.run.id)
        .collect();
    assert_eq!(mine.len(), 1);
    let record = wait_ended(&restarted, &claim.run.id).await;
    assert_eq!(record.status, "completed", "{:?}", record.error);
    assert_eq!(record.output, json!("Back."));
}

async fn a_run_no_agent_here_made_is_ended_only_if_mine(store: Store) {
    let me = format!("server-{}", parlance_format::new_id("t"));
    let store = store
        .with_lease(LEASE)
        .with_resume_grace(LEASE * 10)
        .with_holder(&me);
    let seen = Seen::default();
    let a = agent(ScriptedModel::new([]), &seen);
    let (thread, run) = died_after(&store, &a, &[]).await;
    let nobody = Resumer::new(store.clone(), Vec::<Agent>::new());
    let from_another = Resumer::new(store.clone().with_holder("another"), Vec::<Agent>::new());
    let r = from_another.resume_dead(true).await.unwrap();
    let r: Vec<_> = r.iter().filter(|r| r.run_id == run).collect();
    assert_eq!(
        r[0].outcome.as_ref().err(),
        Some(&NotResumed::NoAgent { ended: false })
    );
    assert_eq!(store.runs(&thread).await.unwrap()[0].status, "running");
    let r = nobody.resume_dead(true).await.unwrap();
    let r: Vec<_> = r.iter().filter(|r| r.run_id == run).collect();
    assert_eq!(
        r[0].outcome.as_ref().err(),
        Some(&NotResumed::NoAgent { ended: true })
    );
    let record = store.run(&run).await.unwrap();
    assert_eq!(record.status, "failed");
    assert_eq!(record.error.unwrap()["code"], "interrupted");
}

async fn past_the_grace_a_touch_interrupts_as_before(store: Store) {
    let store = store
        .with_lease(LEASE)
        .with_resume_grace(Duration::from_millis(200));
    let seen = Seen::default();
    let a = agent(ScriptedModel::new([]), &seen);
    let (thread, run) = died_after(&store, &a, &[]).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(store.runs(&thread).await.unwrap()[0].status, "failed");
    assert_eq!(
        store.take_over(&run, false, 3).await.unwrap(),
        Takeover::Gone
    );
}

both!(
    a_model_step_that_did_not_commit_is_asked_again,
    calls_that_did_not_commit_run_again_once,
    committed_results_are_kept_even_failed_ones,
    a_run_that_keeps_dying_is_given_up,
    a_step_that_commits_resets_the_count,
    calls_run_again_in_place_count_as_progress,
    a_run_that_died_after_its_decisions_waits_again,
    a_previous_incarnations_runs_are_taken_at_once,
    a_run_no_agent_here_made_is_ended_only_if_mine,
    past_the_grace_a_touch_interrupts_as_before,
);
