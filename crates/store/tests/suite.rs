//! The store's own suite, two backends: every test runs on a real SQLite file and on a
//! real PostgreSQL server (`PARLANCE_TEST_POSTGRES_URL`; `.ci/run` starts
//! one, and with `PARLANCE_REQUIRE_POSTGRES=1` its absence is a failure).

use parlance_format::{Block, Message, Role, ToolResult, ToolStatus};
use parlance_store::{MAX_PAGE, Store, StoreError};
use serde_json::json;

use parlance_testkit::both;
use parlance_testkit::store::*;

both!(
    threads_are_created_listed_paged_and_deleted,
    migrations_are_versioned_and_idempotent,
    nothing_is_written_that_cannot_be_read_back,
    ended_sessions_are_refused_and_later_ones_are_not,
    a_runs_log_numbers_every_write_of_its_messages,
    a_sub_agents_thread_is_made_once_per_call,
);

/// An agent used as a tool: one thread per call of the parent's run, found
/// again when the call is made again (by any process), listed with its
/// parent, with the parent's owner.
async fn a_sub_agents_thread_is_made_once_per_call(store: Store) {
    let parent = store.create_thread(Some("ada"), json!({})).await.unwrap();
    let run = store.begin_run(&parent.id, &json!({})).await.unwrap();
    let first = store
        .child_thread(&run.id, "c1", Some("ada"))
        .await
        .unwrap();
    assert_eq!(first.parent_run_id.as_deref(), Some(run.id.as_str()));
    assert_eq!(first.parent_call_id.as_deref(), Some("c1"));
    assert_eq!(first.owner.as_deref(), Some("ada"));
    let again = store
        .child_thread(&run.id, "c1", Some("ada"))
        .await
        .unwrap();
    assert_eq!(again.id, first.id);
    let other = store
        .child_thread(&run.id, "c2", Some("ada"))
        .await
        .unwrap();
    assert_ne!(other.id, first.id);
    // Two at once: one thread.
    let (a, b) = tokio::join!(
        store.child_thread(&run.id, "c3", None),
        store.child_thread(&run.id, "c3", None)
    );
    assert_eq!(a.unwrap().id, b.unwrap().id);
    let mut children: Vec<String> = store
        .child_threads(&run.id)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.parent_call_id.unwrap())
        .collect();
    children.sort();
    assert_eq!(children, ["c1", "c2", "c3"]);
    assert_eq!(store.thread(&first.id).await.unwrap(), first);
    assert!(
        store
            .thread(&parent.id)
            .await
            .unwrap()
            .parent_run_id
            .is_none()
    );
    assert!(store.child_threads("run_none").await.unwrap().is_empty());
    assert_eq!(store.child_threads_of(&parent.id).await.unwrap().len(), 3);
    assert!(store.child_threads_of(&first.id).await.unwrap().is_empty());
}

/// A run's log (what a reconnecting stream reads): one position per
/// write, a rewrite in place included; a later run that rewrites an
/// earlier run's message counts it from its own first position.
async fn a_runs_log_numbers_every_write_of_its_messages(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let run = store.begin_run(&thread.id, &json!({})).await.unwrap();
    assert_eq!(store.log_position(&thread.id, &run.id).await.unwrap(), 0);
    store
        .append(&run, &[Message::user("hi"), says("calling")])
        .await
        .unwrap();
    store.append(&run, &[says("waiting")]).await.unwrap();
    store.replace_last(&run, &says("decided")).await.unwrap();
    store
        .replace_last(&run, &says("decided again"))
        .await
        .unwrap();
    assert_eq!(store.log_position(&thread.id, &run.id).await.unwrap(), 5);
    let text = |m: &parlance_store::LoggedMessage| m.message.text();
    let log = store.log_after(&thread.id, &run.id, 0).await.unwrap();
    let positions: Vec<(u64, String)> = log.iter().map(|m| (m.position, text(m))).collect();
    assert_eq!(
        positions,
        [
            (1, "hi".into()),
            (2, "calling".into()),
            (5, "decided again".into())
        ]
    );
    // A client that saw the first rewrite (position 4) gets the second.
    let log = store.log_after(&thread.id, &run.id, 4).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].position, log[0].seq), (5, 2));
    assert!(
        store
            .log_after(&thread.id, &run.id, 5)
            .await
            .unwrap()
            .is_empty()
    );

    let failed = parlance_format::Response {
        id: Some(run.id.clone()),
        thread_id: Some(thread.id.clone()),
        status: parlance_format::RunStatus::Failed,
        messages: Vec::new(),
        output: serde_json::Value::Null,
        usage: Default::default(),
        cost: None,
        finish_reason: None,
        pending: Vec::new(),
        error: Some(parlance_format::RunError::new("tool_failed", "it failed")),
    };
    store.finish_run(&run, &failed).await.unwrap();
    let retry = store.begin_run(&thread.id, &json!({})).await.unwrap();
    store.replace_last(&retry, &says("retried")).await.unwrap();
    let log = store.log_after(&thread.id, &retry.id, 0).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!((log[0].position, text(&log[0])), (1, "retried".into()));
    assert_eq!(store.log_position(&thread.id, &retry.id).await.unwrap(), 1);
    // The first run's log no longer holds the message it lost.
    assert_eq!(store.log_position(&thread.id, &run.id).await.unwrap(), 2);
}

/// `levels` nested arrays around `1`.
fn nested(levels: usize) -> serde_json::Value {
    (0..levels).fold(json!(1), |v, _| json!([v]))
}

/// Values deeper than the format's limit are refused by every write (the
/// reader would refuse them: the thread could never be read again);
/// values at the limit are written and read back.
async fn nothing_is_written_that_cannot_be_read_back(store: Store) {
    let limit = parlance_format::MAX_VALUE_DEPTH;
    let e = store
        .create_thread(None, json!({"k": nested(limit)}))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, StoreError::Unstorable(m) if m.contains("metadata") && m.contains("nested deeper than 100 levels")),
        "{e}"
    );
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let run = store.begin_run(&thread.id, &json!({})).await.unwrap();
    let call = |depth| {
        Message::new(
            Role::Assistant,
            vec![Block::tool_call("c1", "t", json!({"a": nested(depth - 1)}))],
        )
    };
    let e = store.append(&run, &[call(limit + 1)]).await.unwrap_err();
    assert!(
        matches!(&e, StoreError::Unstorable(m) if m.contains("arguments") && m.contains("nested deeper than 100 levels")),
        "{e}"
    );
    let e = store
        .replace_last(&run, &call(limit + 1))
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::Unstorable(_)), "{e}");
    store.append(&run, &[call(limit)]).await.unwrap();
    let back = store.all_messages(&thread.id).await.unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].message, call(limit));
}

/// On SQLite only: writing 100,000 messages to PostgreSQL one insert at a
/// time outlasts the run's lease (the query read back is the same on both).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_longer_than_a_page_is_read_whole_on_sqlite() {
    let (store, _dir) = sqlite().await;
    a_thread_longer_than_a_page_is_read_whole(store).await;
}

async fn threads_are_created_listed_paged_and_deleted(store: Store) {
    let owner = format!("owner-{}", rand::random::<u32>());
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(
            store
                .create_thread(Some(&owner), json!({"n": i}))
                .await
                .unwrap()
                .id,
        );
    }
    let t = store.thread(&ids[2]).await.unwrap();
    assert_eq!(t.metadata, json!({"n": 2}));
    assert_eq!(t.owner.as_deref(), Some(owner.as_str()));
    let page1 = store.list_threads(Some(&owner), None, 2).await.unwrap();
    let page2 = store
        .list_threads(Some(&owner), page1.next.as_deref(), 2)
        .await
        .unwrap();
    let page3 = store
        .list_threads(Some(&owner), page2.next.as_deref(), 2)
        .await
        .unwrap();
    let listed: Vec<String> = [page1.items, page2.items, page3.items]
        .concat()
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(listed, ids);
    assert_eq!(page3.next, None);
    assert!(
        store
            .list_threads(Some("nobody"), None, 10)
            .await
            .unwrap()
            .items
            .is_empty()
    );

    store.delete_thread(&ids[0]).await.unwrap();
    assert!(matches!(
        store.thread(&ids[0]).await,
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.delete_thread(&ids[0]).await,
        Err(StoreError::NotFound(_))
    ));
}

/// A thread longer than a page is read whole: a run's history, the
/// artifacts and `all_messages` never stop at [`MAX_PAGE`] (they once read
/// one page of 100,000 and silently dropped the rest); a page is cut to it.
async fn a_thread_longer_than_a_page_is_read_whole(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let run = store.begin_run(&thread.id, &json!({})).await.unwrap();
    let total = MAX_PAGE as usize + 2;
    let mut messages: Vec<Message> = (0..total - 1)
        .map(|i| Message::user(format!("m{i}")))
        .collect();
    messages.push(calls(&[("c1", "lookup", json!({}))]));
    store.append(&run, &messages).await.unwrap();
    let mut answer = ToolResult::text("c1", ToolStatus::Ok, "found");
    answer.artifact = Some(json!({"file": "last.csv"}));
    let result = Message::new(
        Role::Tool,
        vec![Block::ToolResult {
            tool_result: answer,
        }],
    );
    store.append(&run, &[result]).await.unwrap();

    let history = store.history(&thread.id).await.unwrap();
    assert_eq!(history.len(), total + 1);
    assert_eq!(history[0].text(), "m0");
    assert_eq!(history[total - 2].text(), format!("m{}", total - 2));
    assert_eq!(history[total].role, Role::Tool);
    let all = store.all_messages(&thread.id).await.unwrap();
    assert_eq!(all.len(), total + 1);
    assert!(all.windows(2).all(|w| w[0].seq < w[1].seq));
    let artifacts = store.artifacts(&thread.id).await.unwrap();
    assert_eq!(artifacts.len(), 1, "the artifact past the first page");
    assert_eq!(artifacts[0].artifact, json!({"file": "last.csv"}));
    let page = store.messages(&thread.id, 0, u32::MAX).await.unwrap();
    assert_eq!(page.len(), MAX_PAGE as usize, "a page is cut to MAX_PAGE");
    let rest = store
        .messages(&thread.id, page.last().unwrap().seq + 1, u32::MAX)
        .await
        .unwrap();
    assert_eq!(rest.len(), 3);
    assert!(matches!(
        store.all_messages("thr_nope").await,
        Err(StoreError::NotFound(_))
    ));
}

async fn migrations_are_versioned_and_idempotent(store: Store) {
    assert_eq!(store.schema_version().await.unwrap(), 9);
}

/// A logout ends that session only; ending a subject's sessions ends every
/// one issued up to then, not later ones nor another subject's; an
/// earlier "up to" never shortens a later one; expired records go.
async fn ended_sessions_are_refused_and_later_ones_are_not(store: Store) {
    let who = format!("alice-{}", rand::random::<u32>());
    let other = format!("bob-{}", rand::random::<u32>());
    // When the sessions would expire anyway: never, for this test.
    let day = i64::MAX;
    assert!(!store.session_ended(&who, "s1", 1_000).await.unwrap());
    store.end_session(&who, "s1", day).await.unwrap();
    assert!(store.session_ended(&who, "s1", 1_000).await.unwrap());
    assert!(!store.session_ended(&who, "s2", 1_000).await.unwrap());
    assert!(!store.session_ended(&other, "s1", 1_000).await.unwrap());
    // Logging out twice is no error.
    store.end_session(&who, "s1", day).await.unwrap();

    store.end_sessions_of(&who, 5_000, day).await.unwrap();
    for (issued, ended) in [(4_999, true), (5_000, true), (5_001, false)] {
        assert_eq!(
            store.session_ended(&who, "s9", issued).await.unwrap(),
            ended,
            "issued at {issued}"
        );
    }
    assert!(!store.session_ended(&other, "s9", 10).await.unwrap());
    store.end_sessions_of(&who, 3_000, day).await.unwrap();
    assert!(
        store.session_ended(&who, "s9", 4_000).await.unwrap(),
        "kept the later time"
    );
    store.end_sessions_of(&who, 8_000, day).await.unwrap();
    assert!(
        store.session_ended(&who, "s9", 7_000).await.unwrap(),
        "moved to the later time"
    );
    assert!(!store.session_ended(&who, "s9", 8_001).await.unwrap());

    // Records of sessions expired anyway are dropped by the next write.
    store.end_session(&other, "old", 1).await.unwrap();
    assert!(store.session_ended(&other, "old", 0).await.unwrap());
    store.end_session(&other, "new", day).await.unwrap();
    assert!(
        !store.session_ended(&other, "old", 0).await.unwrap(),
        "expired record gone"
    );
    assert!(store.session_ended(&other, "new", 0).await.unwrap());
}

/// `sqlite::memory:` (documented by both packages for tests) is one
/// database shared by the pool's connections, and two stores opened on it
/// are two databases.
#[tokio::test]
async fn an_in_memory_store_is_one_database_per_store() {
    for url in ["sqlite::memory:", "sqlite://:memory:"] {
        let store = Store::open(url).await.unwrap();
        let thread = store.create_thread(None, json!({"n": 1})).await.unwrap();
        // More reads at once than the pool has connections: each sees it.
        let reads = (0..8).map(|_| store.thread(&thread.id));
        for t in futures::future::join_all(reads).await {
            assert_eq!(t.unwrap().metadata, json!({"n": 1}));
        }
        let other = Store::open(url).await.unwrap();
        assert!(
            other.thread(&thread.id).await.is_err(),
            "{url}: shared between stores"
        );
    }
}
