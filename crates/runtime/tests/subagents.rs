//! Agents used as tools on a store, on both backends: the sub-agent's run
//! is kept on a thread of its own linked to the parent's call; its
//! approvals are listed in the parent's place and decided through the
//! parent (or through its own run, then its parent goes on), by runners
//! that hold nothing from the runs they resume; a forged decision is
//! refused and nothing runs; a call made again finds the run it made.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use parlance_agent::{Agent, Tool, ToolContext, ToolError};
use parlance_format::{Block, Decision, Message, Role, RunStatus, ToolStatus};
use parlance_model::scripted::ScriptedModel;
use parlance_runtime::{ResumeError, ThreadRunner, children};
use parlance_store::Store;
use serde_json::{Value, json};

mod common;
use common::*;

both!(
    a_sub_agents_run_is_kept_on_its_own_thread,
    a_sub_agents_approval_is_decided_through_its_parent,
    a_sub_agent_decided_on_its_own_run_lets_its_parent_go_on,
    a_forged_decision_on_a_sub_agents_call_is_refused,
    a_call_made_again_finds_the_run_it_made,
    a_callers_call_and_a_sub_agents_of_the_same_id_are_told_apart,
);

/// The researcher: refunds (with approval), counting what really ran.
fn researcher(model: &ScriptedModel, refunds: &Arc<AtomicU32>) -> Agent {
    let refunds = Arc::clone(refunds);
    Agent::builder(Arc::new(model.clone()))
        .name("researcher")
        .tool(
            Tool::new("refund", "Refund.", move |a: Value, _c: ToolContext| {
                let refunds = Arc::clone(&refunds);
                async move {
                    refunds.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, ToolError>(format!("refunded {}", a["amount"]))
                }
            })
            .needs_approval(),
        )
        .build()
        .unwrap()
}

fn support(model: &ScriptedModel, child: &Agent) -> Agent {
    Agent::builder(Arc::new(model.clone()))
        .name("support")
        .tool(child.as_tool("research", "Looks orders up and refunds."))
        .build()
        .unwrap()
}

/// An owner of this test's own (the PostgreSQL database is shared).
fn owner() -> String {
    parlance_format::new_id("ada")
}

fn delegates(task: &str) -> Message {
    calls(&[("p1", "research", json!({"input": task}))])
}

/// A parent paused on its sub-agent's refund, with fresh models for the
/// rest of the story (what a second process would build).
async fn paused(store: &Store) -> (String, parlance_format::Response, Arc<AtomicU32>) {
    let thread = store
        .create_thread(Some(&owner()), json!({}))
        .await
        .unwrap();
    let refunds = Arc::new(AtomicU32::new(0));
    let child = researcher(
        &ScriptedModel::new([calls(&[("r1", "refund", json!({"amount": 20}))])]),
        &refunds,
    );
    let parent = support(&ScriptedModel::new([delegates("refund order 7")]), &child);
    let r = ThreadRunner::new(store.clone(), parent)
        .run(&thread.id, vec![Message::user("Refund order 7")])
        .await
        .unwrap();
    (thread.id, r, refunds)
}

async fn a_sub_agents_run_is_kept_on_its_own_thread(store: Store) {
    let ada = owner();
    let thread = store.create_thread(Some(&ada), json!({})).await.unwrap();
    let child_model = ScriptedModel::new([says("Order 7 shipped.")]);
    let child = researcher(&child_model, &Arc::default());
    let parent = support(
        &ScriptedModel::new([delegates("order 7?"), says("It shipped.")]),
        &child,
    );
    let r = ThreadRunner::new(store.clone(), parent)
        .run(&thread.id, vec![Message::user("Where is order 7?")])
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let run = r.id.clone().unwrap();
    let kids = store.child_threads(&run).await.unwrap();
    assert_eq!(kids.len(), 1);
    assert_eq!(kids[0].parent_call_id.as_deref(), Some("p1"));
    assert_eq!(kids[0].owner.as_deref(), Some(ada.as_str()));
    let steps: Vec<String> = store
        .history(&kids[0].id)
        .await
        .unwrap()
        .iter()
        .map(Message::text)
        .collect();
    assert_eq!(steps, ["order 7?", "Order 7 shipped."]);
    assert_eq!(
        store.runs(&kids[0].id).await.unwrap()[0].settings["name"],
        "researcher"
    );
    // The parent's tool message carries what the sub-agent spent (its
    // answer's 10 + 3 tokens), and the parent's usage counts it.
    let tool = &store.history(&thread.id).await.unwrap()[2];
    assert_eq!(tool.role, Role::Tool);
    assert_eq!(tool.usage.map(|u| u.input_tokens), Some(10));
    assert_eq!(r.usage.input_tokens, 20 + 10 + 10);
    assert_eq!(
        store.run(&run).await.unwrap().usage.unwrap().input_tokens,
        40
    );
}

async fn a_sub_agents_approval_is_decided_through_its_parent(store: Store) {
    let (thread, r, refunds) = paused(&store).await;
    assert_eq!(r.status, RunStatus::RequiresApproval, "{:?}", r.error);
    // The parent lists the sub-agent's call, naming its run.
    assert_eq!(r.pending.len(), 1, "{:?}", r.pending);
    let request = r.pending[0].clone();
    assert_eq!(
        (request.tool_call_id.as_str(), request.name.as_str()),
        ("r1", "refund")
    );
    let child_thread = &store.child_threads(r.id.as_deref().unwrap()).await.unwrap()[0];
    let child_run = &store.runs(&child_thread.id).await.unwrap()[0];
    assert_eq!(request.run_id.as_deref(), Some(child_run.id.as_str()));
    assert_eq!(child_run.status, "requires_approval");
    // What the store says of the parent says the same.
    let stored =
        children::stored_response(&store, &store.run(r.id.as_deref().unwrap()).await.unwrap())
            .await
            .unwrap();
    assert_eq!(stored.pending, r.pending);
    // Both runs wait, each in the inbox.
    let ada = store.thread(&thread).await.unwrap().owner;
    assert_eq!(
        store.waiting_runs(ada.as_deref(), 10).await.unwrap().len(),
        2
    );

    // Another process: fresh agents, nothing in memory but the store.
    let child = researcher(&ScriptedModel::new([says("Refunded 20.")]), &refunds);
    let parent_model = ScriptedModel::new([says("Your refund is done.")]);
    let parent = support(&parent_model, &child);
    let done = ThreadRunner::new(store.clone(), parent)
        .resume(r.id.as_deref().unwrap(), vec![Decision::approve(&request)])
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Completed, "{:?}", done.error);
    assert_eq!(done.text(), "Your refund is done.");
    assert_eq!(refunds.load(Ordering::SeqCst), 1, "the refund ran once");
    // The parent's model read the sub-agent's answer as the call's result.
    let sent = &parent_model.received()[0].messages;
    let result = sent
        .iter()
        .flat_map(|m| &m.content)
        .find_map(Block::as_tool_result)
        .unwrap();
    assert_eq!(
        (result.status, result.content.clone()),
        (ToolStatus::Ok, vec![Block::text("Refunded 20.")])
    );
    assert_eq!(store.run(&child_run.id).await.unwrap().status, "completed");
    assert!(
        store
            .waiting_runs(ada.as_deref(), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.runs(&thread).await.unwrap().len(), 1);
}

async fn a_sub_agent_decided_on_its_own_run_lets_its_parent_go_on(store: Store) {
    let (thread, r, refunds) = paused(&store).await;
    let request = r.pending[0].clone();
    let child_run = request.run_id.clone().unwrap();
    // The inbox decides the sub-agent's run, with the sub-agent alone.
    let child = researcher(&ScriptedModel::new([says("Refunded 20.")]), &refunds);
    let c = ThreadRunner::new(store.clone(), child.clone())
        .resume(&child_run, vec![Decision::approve(&request)])
        .await
        .unwrap();
    assert_eq!(c.status, RunStatus::Completed);
    // The parent still waits, on a sub-agent that has finished...
    let child_thread = store.run(&child_run).await.unwrap().thread_id;
    let parent_run = children::waiting_parent(&store, &child_thread)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(Some(parent_run.id.clone()), r.id);
    // ...until its own agent carries it on.
    let parent = support(&ScriptedModel::new([says("Done.")]), &child);
    let done = children::resume_parent(&store, &child_thread, &parent)
        .await
        .unwrap()
        .expect("the parent went on");
    assert_eq!(done.status, RunStatus::Completed, "{:?}", done.error);
    assert_eq!(refunds.load(Ordering::SeqCst), 1);
    assert_eq!(store.runs(&thread).await.unwrap()[0].status, "completed");
    // Nothing more to do.
    assert!(
        children::resume_parent(&store, &child_thread, &parent)
            .await
            .unwrap()
            .is_none()
    );
}

async fn a_forged_decision_on_a_sub_agents_call_is_refused(store: Store) {
    let (_thread, r, refunds) = paused(&store).await;
    let mut forged = Decision::approve(&r.pending[0]);
    forged.digest = "sha256:00".into();
    let child = researcher(&ScriptedModel::new([says("Refunded.")]), &refunds);
    let parent = support(&ScriptedModel::new([says("Done.")]), &child);
    let e = ThreadRunner::new(store.clone(), parent)
        .resume(r.id.as_deref().unwrap(), vec![forged])
        .await
        .unwrap_err();
    assert!(matches!(e, ResumeError::Decision(_)), "{e:?}");
    assert_eq!(refunds.load(Ordering::SeqCst), 0);
    assert_eq!(
        store.run(r.id.as_deref().unwrap()).await.unwrap().status,
        "requires_approval"
    );
    assert_eq!(
        store
            .run(r.pending[0].run_id.as_deref().unwrap())
            .await
            .unwrap()
            .status,
        "requires_approval"
    );
}

async fn a_call_made_again_finds_the_run_it_made(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let child_model = ScriptedModel::new([says("Once.")]);
    let child = researcher(&child_model, &Arc::default());
    let parent = store.begin_run(&thread.id, &json!({})).await.unwrap();
    for _ in 0..2 {
        let r = children::child_run(
            &store,
            &parent,
            parlance_agent::ChildRun {
                agent: &child,
                tool: "research",
                parent_run_id: &parent.id,
                parent_thread_id: Some(&parent.thread_id),
                call_id: "p1",
                input: vec![Message::user("go")],
                cancel: Default::default(),
            },
        )
        .await
        .unwrap();
        assert_eq!(r.text(), "Once.");
        assert_eq!(r.status, RunStatus::Completed);
    }
    assert_eq!(child_model.received().len(), 1, "the sub-agent ran once");
}

/// The caller waits on a call of its own and on its sub-agent's, both
/// named `r1` (ids are only unique within a run): each decision goes where
/// its digest belongs.
async fn a_callers_call_and_a_sub_agents_of_the_same_id_are_told_apart(store: Store) {
    let thread = store.create_thread(None, json!({})).await.unwrap();
    let refunds = Arc::new(AtomicU32::new(0));
    let escalations = Arc::new(AtomicU32::new(0));
    // Each process builds its agents afresh: `child` is what the
    // researcher's model answers from there on.
    let caller = |model: &ScriptedModel, child: Vec<Message>, refunds: &Arc<AtomicU32>| {
        let escalations = Arc::clone(&escalations);
        Agent::builder(Arc::new(model.clone()))
            .name("support")
            .tool(researcher(&ScriptedModel::new(child), refunds).as_tool("research", "Refunds."))
            .tool(
                Tool::new("escalate", "Escalate.", move |_: Value, _c: ToolContext| {
                    let escalations = Arc::clone(&escalations);
                    async move {
                        escalations.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, ToolError>("escalated")
                    }
                })
                .needs_approval(),
            )
            .build()
            .unwrap()
    };
    let model = ScriptedModel::new([calls(&[
        ("r1", "escalate", json!({})),
        ("p1", "research", json!({"input": "refund 20"})),
    ])]);
    let paused = ThreadRunner::new(
        store.clone(),
        caller(
            &model,
            vec![calls(&[("r1", "refund", json!({"amount": 20}))])],
            &refunds,
        ),
    )
    .run(&thread.id, vec![Message::user("Refund and escalate")])
    .await
    .unwrap();
    assert_eq!(
        paused.status,
        RunStatus::RequiresApproval,
        "{:?}",
        paused.error
    );
    assert_eq!(paused.pending.len(), 2, "{:?}", paused.pending);
    let own = paused
        .pending
        .iter()
        .find(|p| p.name == "escalate")
        .unwrap()
        .clone();
    let sub = paused
        .pending
        .iter()
        .find(|p| p.name == "refund")
        .unwrap()
        .clone();
    assert_eq!(
        (own.tool_call_id.as_str(), sub.tool_call_id.as_str()),
        ("r1", "r1")
    );
    assert!(own.run_id.is_none() && sub.run_id.is_some());
    // The caller's own escalation first, while the sub-agent still waits:
    // it runs, and the refund waits on.
    let r = ThreadRunner::new(store.clone(), caller(&model, Vec::new(), &refunds))
        .resume(paused.id.as_deref().unwrap(), vec![Decision::approve(&own)])
        .await
        .unwrap();
    assert_eq!(escalations.load(Ordering::SeqCst), 1);
    assert_eq!(refunds.load(Ordering::SeqCst), 0);
    assert_eq!(r.status, RunStatus::RequiresApproval, "{:?}", r.error);
    assert_eq!(r.pending, vec![sub.clone()]);
    // Then the sub-agent's: it runs, and the caller finishes.
    let model = ScriptedModel::new([says("Done.")]);
    let done = ThreadRunner::new(
        store.clone(),
        caller(&model, vec![says("Refunded.")], &refunds),
    )
    .resume(paused.id.as_deref().unwrap(), vec![Decision::approve(&sub)])
    .await
    .unwrap();
    assert_eq!(done.status, RunStatus::Completed, "{:?}", done.error);
    assert_eq!(done.text(), "Done.");
    assert_eq!(escalations.load(Ordering::SeqCst), 1);
    assert_eq!(refunds.load(Ordering::SeqCst), 1);
}
