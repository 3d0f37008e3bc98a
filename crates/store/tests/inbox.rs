//! The reads behind the approval inbox (`/ui`), on SQLite and PostgreSQL:
//! waiting runs newest first and by owner, the marker that tells a live
//! page to draw again, the turn a run paused in, recent threads with their
//! last run's status. The runs are written with the store's own calls
//! (`begin_run`, `append`, `finish_run`), as the runner writes them.

use std::time::Duration;

use parlance_format::{Block, Message, Role, ToolResult, ToolStatus};
use parlance_store::{ActiveRun, Store};
use serde_json::json;

use parlance_testkit::both;
use parlance_testkit::store::*;

both!(
    waiting_runs_are_newest_first_by_owner_and_limited,
    the_marker_changes_when_a_run_starts_or_stops_waiting,
    a_paused_turn_is_read_back_with_the_calls_its_results_answer,
    a_turn_that_starts_the_thread_with_results_has_nothing_before_it,
    recent_threads_show_their_last_runs_status,
);

/// A response of `status`, as the runner hands it to `finish_run`.
fn response(status: &str) -> parlance_format::Response {
    serde_json::from_value(json!({"status": status, "messages": [], "output": null, "usage": {"input_tokens": 0, "output_tokens": 0}}))
        .unwrap()
}

/// A run on a new thread of `owner` that asked for a refund and paused.
async fn paused(store: &Store, owner: &str) -> (String, ActiveRun) {
    let thread = store.create_thread(Some(owner), json!({})).await.unwrap();
    let run = store.begin_run(&thread.id, &json!({})).await.unwrap();
    store
        .append(
            &run,
            &[
                Message::user("Refund A-1"),
                calls(&[("c1", "refund", json!({"amount": 30}))]),
            ],
        )
        .await
        .unwrap();
    store
        .finish_run(&run, &response("requires_approval"))
        .await
        .unwrap();
    (thread.id, run)
}

/// The ids of `runs` that are among `mine`, in order (PostgreSQL's
/// database is shared by the suite's tests).
fn only(runs: Vec<parlance_store::WaitingRun>, mine: &[&str]) -> Vec<String> {
    runs.into_iter()
        .map(|w| w.run.id)
        .filter(|id| mine.contains(&id.as_str()))
        .collect()
}

fn owner() -> String {
    format!("owner-{}", rand::random::<u32>())
}

async fn waiting_runs_are_newest_first_by_owner_and_limited(store: Store) {
    let (a, b) = (owner(), owner());
    let (_, first) = paused(&store, &a).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let (_, second) = paused(&store, &a).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let (_, other) = paused(&store, &b).await;
    // One that completed is not waiting.
    let t = store.create_thread(Some(&a), json!({})).await.unwrap();
    let done = store.begin_run(&t.id, &json!({})).await.unwrap();
    store
        .finish_run(&done, &response("completed"))
        .await
        .unwrap();

    let mine = store.waiting_runs(Some(&a), 100).await.unwrap();
    assert_eq!(
        mine.iter().map(|w| w.run.id.as_str()).collect::<Vec<_>>(),
        [second.id.as_str(), first.id.as_str()],
        "only a's waiting runs, the most recently paused first"
    );
    assert!(mine.iter().all(|w| w.owner.as_deref() == Some(a.as_str())));
    assert!(
        mine.iter()
            .all(|w| w.run.status == "requires_approval" && w.run.thread_id != t.id)
    );
    let newest = store.waiting_runs(Some(&a), 1).await.unwrap();
    assert_eq!(newest.len(), 1);
    assert_eq!(newest[0].run.id, second.id);
    // A limit of 0 still lists one (clamped), never everything.
    assert_eq!(store.waiting_runs(Some(&a), 0).await.unwrap().len(), 1);

    let everyone = store.waiting_runs(None, 1000).await.unwrap();
    assert_eq!(
        only(everyone, &[&first.id, &second.id, &other.id]),
        [other.id.clone(), second.id.clone(), first.id.clone()],
        "with no owner, every tenant's"
    );
    assert!(
        store
            .waiting_runs(Some("nobody-at-all"), 100)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn the_marker_changes_when_a_run_starts_or_stops_waiting(store: Store) {
    let (_, run) = paused(&store, &owner()).await;
    let has = |marker: &[(String, i64)], id: &str| marker.iter().any(|(r, _)| r == id);
    let before = store.waiting_marker().await.unwrap();
    assert!(has(&before, &run.id));
    // Taken back to decide (and, here, completed): no longer waiting.
    let claimed = store.claim_paused(&run.id).await.unwrap();
    let after = store.waiting_marker().await.unwrap();
    assert!(!has(&after, &run.id), "a claimed run is not waiting");
    store
        .finish_run(&claimed, &response("completed"))
        .await
        .unwrap();
    assert!(!has(&store.waiting_marker().await.unwrap(), &run.id));
    // A new one appears.
    let (_, again) = paused(&store, &owner()).await;
    assert!(has(&store.waiting_marker().await.unwrap(), &again.id));
}

async fn a_paused_turn_is_read_back_with_the_calls_its_results_answer(store: Store) {
    let (thread, run) = paused(&store, &owner()).await;
    let record = store.run(&run.id).await.unwrap();
    let turn = store.run_turn(&record).await.unwrap();
    let roles: Vec<Role> = turn.iter().map(|m| m.message.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant]);
    assert_eq!(turn[1].message.tool_calls().next().unwrap().id, "c1");

    // A later run whose turn starts with tool results (as a retry writes
    // them): the assistant message they answer comes first.
    let claimed = store.claim_paused(&run.id).await.unwrap();
    store
        .finish_run(&claimed, &response("failed"))
        .await
        .unwrap();
    let retry = store.begin_run(&thread, &json!({})).await.unwrap();
    let result = Message::new(
        Role::Tool,
        vec![Block::tool_result(ToolResult::text(
            "c1",
            ToolStatus::Ok,
            "refunded 30",
        ))],
    );
    store
        .append(&retry, &[result, says("Refunded.")])
        .await
        .unwrap();
    store
        .finish_run(&retry, &response("completed"))
        .await
        .unwrap();
    let turn = store
        .run_turn(&store.run(&retry.id).await.unwrap())
        .await
        .unwrap();
    let seen: Vec<(Role, Option<String>)> = turn
        .iter()
        .map(|m| (m.message.role, m.run_id.clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (Role::Assistant, Some(run.id.clone())),
            (Role::Tool, Some(retry.id.clone())),
            (Role::Assistant, Some(retry.id.clone())),
        ]
    );
}

async fn a_turn_that_starts_the_thread_with_results_has_nothing_before_it(store: Store) {
    // Odd but storable (an imported thread): results at seq 0 are not
    // given an assistant message from before the thread began.
    let thread = store
        .create_thread(Some(&owner()), json!({}))
        .await
        .unwrap();
    let run = store.begin_run(&thread.id, &json!({})).await.unwrap();
    let result = Message::new(
        Role::Tool,
        vec![Block::tool_result(ToolResult::text(
            "c0",
            ToolStatus::Ok,
            "imported",
        ))],
    );
    store.append(&run, &[result]).await.unwrap();
    let turn = store
        .run_turn(&store.run(&run.id).await.unwrap())
        .await
        .unwrap();
    assert_eq!(
        turn.iter().map(|m| m.seq).collect::<Vec<_>>(),
        [0],
        "the turn is its own message, once"
    );
}

async fn recent_threads_show_their_last_runs_status(store: Store) {
    let who = owner();
    let empty = store.create_thread(Some(&who), json!({})).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let (waiting, _) = paused(&store, &who).await;
    store
        .create_thread(Some(&owner()), json!({}))
        .await
        .unwrap();

    let listed = store.recent_threads(Some(&who), 100).await.unwrap();
    let seen: Vec<(String, Option<String>)> = listed
        .into_iter()
        .map(|(t, status)| (t.id, status))
        .collect();
    assert_eq!(
        seen,
        [
            (waiting, Some("requires_approval".to_string())),
            (empty.id, None),
        ],
        "the owner's threads only, the most recently changed first"
    );
}
