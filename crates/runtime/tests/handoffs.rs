//! Handoffs on a store, on both backends: the run records the agent it
//! handed the conversation to (`parlance_runs.handoff`); the thread's next
//! run, asked of the first agent by a fresh runner, is the new agent's.

use std::sync::Arc;

use parlance_agent::Agent;
use parlance_format::{Message, RunStatus};
use parlance_model::scripted::ScriptedModel;
use parlance_runtime::ThreadRunner;
use parlance_store::Store;
use serde_json::json;

mod common;
use common::*;

both!(a_handoff_is_recorded_and_the_thread_stays_with_the_new_agent);

fn agents(front: &ScriptedModel, back: &ScriptedModel) -> Agent {
    let billing = Agent::builder(Arc::new(back.clone()))
        .name("billing")
        .instructions("You handle billing.")
        .build()
        .unwrap();
    Agent::builder(Arc::new(front.clone()))
        .name("support")
        .handoff(billing)
        .build()
        .unwrap()
}

async fn a_handoff_is_recorded_and_the_thread_stays_with_the_new_agent(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let front = ScriptedModel::new([calls(&[("h1", "transfer_to_billing", json!({}))])]);
    let back = ScriptedModel::new([says("Billing here.")]);
    let r = ThreadRunner::new(store.clone(), agents(&front, &back))
        .run(&thread.id, vec![Message::user("A refund, please")])
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.text(), "Billing here.");
    let record = store.run(r.id.as_deref().unwrap()).await.unwrap();
    assert_eq!(record.handoff.as_deref(), Some("billing"));
    assert_eq!(record.settings["name"], "support");

    // Another process asks support again: billing answers.
    let front = ScriptedModel::new(Vec::<Message>::new());
    let back = ScriptedModel::new([says("Still billing.")]);
    let next = ThreadRunner::new(store.clone(), agents(&front, &back))
        .run(&thread.id, vec![Message::user("And the invoice?")])
        .await
        .unwrap();
    assert_eq!(next.text(), "Still billing.");
    assert!(front.received().is_empty());
    let sent = &back.received()[0].messages;
    assert_eq!(sent[0], Message::system("You handle billing."));
    assert_eq!(sent.len(), 6, "the whole thread: {sent:?}");
    // A run that did not hand over records none.
    let again = store.run(next.id.as_deref().unwrap()).await.unwrap();
    assert_eq!(again.handoff, None);
}
