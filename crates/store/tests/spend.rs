//! The budgets' ledger: what a counted run's committed steps spent is
//! added to its thread's and its owner's rows, in the step's own write;
//! nothing for a write that lost its lease, nothing twice. And the
//! models cooling down after a 429, shared through the store.

use std::time::Duration;

use parlance_format::{Message, Response, Spend};
use parlance_store::{Store, ThreadSpend};
use serde_json::json;

use parlance_testkit::both;
use parlance_testkit::store::*;

both!(
    committed_steps_count_for_the_thread_and_its_owner,
    a_write_that_lost_its_lease_counts_nothing,
    a_deleted_thread_leaves_its_owners_spending,
    cooldowns_are_shared_extended_and_end,
);

fn priced(mut m: Message, usd: f64) -> Message {
    m.cost = Some(usd);
    m
}

fn done() -> Response {
    serde_json::from_value(json!({"status": "completed", "messages": [], "output": "done", "usage": {"input_tokens": 1, "output_tokens": 1}}))
        .unwrap()
}

async fn committed_steps_count_for_the_thread_and_its_owner(store: Store) {
    let owner = format!("owner-{}", rand::random::<u32>());
    let a = store.create_thread(Some(&owner), json!({})).await.unwrap();
    let b = store.create_thread(Some(&owner), json!({})).await.unwrap();
    let nobody = store.create_thread(None, json!({})).await.unwrap();

    // Thread a: a step with two calls (25 tokens, 0.25 USD), then the
    // final answer with the outcome (13 tokens, 0.125 USD).
    let mut run = store.begin_run(&a.id, &json!({})).await.unwrap();
    run.count_spend = true;
    let step = calls(&[("c1", "t", json!({})), ("c2", "t", json!({}))]);
    store.append(&run, &[priced(step, 0.25)]).await.unwrap();
    store
        .append(&run, &[Message::user("results stand in here")])
        .await
        .unwrap();
    store
        .finish_with(&run, &[priced(says("done"), 0.125)], &done())
        .await
        .unwrap();
    let want_a = Spend {
        tokens: 38,
        cost_nanos: 375_000_000,
        model_calls: 2,
        tool_calls: 2,
    };
    let spent = store.spent(&a.id).await.unwrap();
    assert_eq!(spent.thread, want_a);
    assert_eq!(spent.owner_day, want_a);
    assert_eq!(spent.owner_month, want_a);

    // Thread b, same owner: its own thread row, the owner's rows summed.
    let mut run = store.begin_run(&b.id, &json!({})).await.unwrap();
    run.count_spend = true;
    store
        .finish_with(&run, &[says("hi")], &done())
        .await
        .unwrap();
    let spent = store.spent(&b.id).await.unwrap();
    assert_eq!(spent.thread.tokens, 13);
    assert_eq!(spent.owner_day.tokens, 51);
    assert_eq!(spent.owner_month.model_calls, 3);

    // A run that does not count adds nothing.
    let run = store.begin_run(&b.id, &json!({})).await.unwrap();
    store
        .finish_with(&run, &[says("hi")], &done())
        .await
        .unwrap();
    assert_eq!(store.spent(&b.id).await.unwrap().thread.tokens, 13);

    // A thread without an owner has only its own row.
    let mut run = store.begin_run(&nobody.id, &json!({})).await.unwrap();
    run.count_spend = true;
    store.append(&run, &[says("one")]).await.unwrap();
    let spent = store.spent(&nobody.id).await.unwrap();
    assert_eq!(spent.thread.tokens, 13);
    assert_eq!(
        (spent.owner_day, spent.owner_month),
        (Spend::default(), Spend::default())
    );
    // A thread nothing was counted for.
    let fresh = store.create_thread(None, json!({})).await.unwrap();
    assert_eq!(
        store.spent(&fresh.id).await.unwrap(),
        ThreadSpend::default()
    );
}

async fn a_write_that_lost_its_lease_counts_nothing(store: Store) {
    let store = store.with_lease(Duration::from_millis(150));
    let owner = format!("owner-{}", rand::random::<u32>());
    let t = store.create_thread(Some(&owner), json!({})).await.unwrap();
    let mut run = store.begin_run(&t.id, &json!({})).await.unwrap();
    run.count_spend = true;
    store.append(&run, &[says("kept")]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The lease ran out: neither the message nor its spending is written.
    assert!(store.append(&run, &[says("late")]).await.is_err());
    assert!(
        store
            .finish_with(&run, &[says("late")], &done())
            .await
            .is_err()
    );
    let spent = store.spent(&t.id).await.unwrap();
    assert_eq!((spent.thread.tokens, spent.owner_day.tokens), (13, 13));
}

async fn a_deleted_thread_leaves_its_owners_spending(store: Store) {
    let owner = format!("owner-{}", rand::random::<u32>());
    let t = store.create_thread(Some(&owner), json!({})).await.unwrap();
    let mut run = store.begin_run(&t.id, &json!({})).await.unwrap();
    run.count_spend = true;
    store
        .finish_with(&run, &[says("hi")], &done())
        .await
        .unwrap();
    store.delete_thread(&t.id).await.unwrap();
    // A new thread of the same owner still sees what the first spent.
    let u = store.create_thread(Some(&owner), json!({})).await.unwrap();
    let spent = store.spent(&u.id).await.unwrap();
    assert_eq!((spent.thread.tokens, spent.owner_day.tokens), (0, 13));
    assert_eq!(store.spent(&t.id).await.unwrap().thread, Spend::default());
}

async fn cooldowns_are_shared_extended_and_end(store: Store) {
    let model = format!("anthropic:m-{}", rand::random::<u32>());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert_eq!(store.cooldown(&model).await.unwrap(), None);
    store.cool(&model, now + 60_000).await.unwrap();
    assert_eq!(store.cooldown(&model).await.unwrap(), Some(now + 60_000));
    // A shorter one does not shorten it; a longer one extends it.
    store.cool(&model, now + 10_000).await.unwrap();
    assert_eq!(store.cooldown(&model).await.unwrap(), Some(now + 60_000));
    store.cool(&model, now + 90_000).await.unwrap();
    assert_eq!(store.cooldown(&model).await.unwrap(), Some(now + 90_000));
    // One that has ended is no cooldown.
    let other = format!("{model}-2");
    store.cool(&other, now - 1).await.unwrap();
    assert_eq!(store.cooldown(&other).await.unwrap(), None);
}
