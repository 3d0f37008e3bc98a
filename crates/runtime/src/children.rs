//! Agents used as tools, on a store (see `parlance_agent`'s `subagent`):
//! a sub-agent's run is kept on a thread of its own, made once per call of
//! its parent's run ([`Store::child_thread`]); its approvals are listed in
//! the parent's place; deciding them resumes the sub-agent, then — once
//! it has finished — its parent, from any process.
//!
//! - [`child_run`]: the run a call makes, or the one it made before, as it
//!   stands (what `Checkpoint::run_child` answers on a store);
//! - [`stored_response`]: a run as the store keeps it, as a [`Response`],
//!   its pending list expanded ([`pending`]);
//! - [`pending`]: a run's waiting calls, a call that waits on a sub-agent
//!   replaced by the sub-agent's (each naming its run);
//! - `ThreadRunner::resume` routes decisions on a sub-agent's calls to it;
//! - [`resume_parent`]: a finished sub-agent's parent goes on.

use std::collections::HashMap;
use std::time::Duration;

use futures::future::BoxFuture;
use parlance_agent::{Agent, ChildRun};
use parlance_format::{ApprovalRequest, Block, Decision, Message, Response, RunStatus};
use parlance_store::{ActiveRun, RunRecord, Store, StoreError};

use crate::{ResumeError, ThreadRunner};

/// How often a call whose sub-agent runs elsewhere (another process, a
/// takeover) looks for its end.
const POLL: Duration = Duration::from_millis(250);

/// How deep sub-agents may nest before a pending list stops looking.
const MAX_DEPTH: usize = 16;

/// The sub-agent's run for `child`'s call of run `parent`: a new one on
/// the call's own thread, or the one the call made before — awaited while
/// it runs elsewhere, as it stands once finished or waiting.
pub async fn child_run(
    store: &Store,
    parent: &ActiveRun,
    child: ChildRun<'_>,
) -> Result<Response, StoreError> {
    let owner = store.thread(&parent.thread_id).await?.owner;
    let thread = store
        .child_thread(&parent.id, child.call_id, owner.as_deref())
        .await?;
    loop {
        match store.runs(&thread.id).await?.pop() {
            None => {
                let runner = ThreadRunner::new(store.clone(), child.agent.clone());
                match runner.run(&thread.id, child.input.clone()).await {
                    // Another process started it first: read it again.
                    Err(StoreError::Busy { .. }) => {}
                    other => return other,
                }
            }
            Some(r) if r.status == "running" => {}
            Some(r) => return stored_response(store, &r).await,
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            _ = child.cancel.cancelled() => {
                return Err(StoreError::Conflict(format!(
                    "the call stopped while its sub-agent's run on thread {} was running elsewhere",
                    thread.id
                )));
            }
        }
    }
}

/// A run as the store keeps it, as a [`Response`]: its own messages, its
/// outcome, and — while it waits — its pending list, expanded.
pub async fn stored_response(store: &Store, record: &RunRecord) -> Result<Response, StoreError> {
    let messages: Vec<Message> = store
        .run_turn(record)
        .await?
        .into_iter()
        .map(|m| m.message)
        .collect();
    let status = match record.status.as_str() {
        "completed" => RunStatus::Completed,
        "requires_approval" => RunStatus::RequiresApproval,
        _ => RunStatus::Failed,
    };
    let mut v = serde_json::json!({
        "id": record.id,
        "thread_id": record.thread_id,
        "status": status.as_str(),
        "messages": messages,
        "output": record.output,
        "usage": record.usage.unwrap_or_default(),
        "finish_reason": record.finish_reason,
        "error": record.error,
    });
    if record.error.is_none() && status == RunStatus::Failed {
        v["error"] = serde_json::json!({"code": record.status, "message": format!("the run is {}", record.status)});
    }
    let mut r = Response::from_value(&v).map_err(|e| StoreError::Unstorable(e.to_string()))?;
    r.cost = parlance_format::total_cost(&r.messages);
    if status == RunStatus::RequiresApproval {
        r.pending = pending(store, &r.messages).await?;
    }
    Ok(r)
}

/// The waiting calls of a run whose messages are `messages`: the approval
/// requests of its last message, each that waits on a sub-agent's run
/// replaced by that run's own (each naming its run). A sub-agent that is
/// no longer waiting leaves its parent's request as it is (its parent goes
/// on once that request is approved).
pub async fn pending(
    store: &Store,
    messages: &[Message],
) -> Result<Vec<ApprovalRequest>, StoreError> {
    Ok(routes(store, messages, 0)
        .await?
        .into_iter()
        .map(|(request, _)| request)
        .collect())
}

/// A waiting call, and the request of the run's own it is reached through
/// (`None`: it is the run's own).
type Route = (ApprovalRequest, Option<ApprovalRequest>);

/// Each waiting call (expanded as [`pending`] does) with the parent's
/// request it is reached through.
fn routes<'a>(
    store: &'a Store,
    messages: &'a [Message],
    depth: usize,
) -> BoxFuture<'a, Result<Vec<Route>, StoreError>> {
    Box::pin(async move {
        let Some(last) = messages.last() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for b in &last.content {
            let Block::ApprovalRequest { approval_request } = b else {
                continue;
            };
            let child = match &approval_request.run_id {
                Some(run) if depth < MAX_DEPTH => Some(store.run(run).await?),
                _ => None,
            };
            match child {
                Some(record) if record.status == RunStatus::RequiresApproval.as_str() => {
                    let turn: Vec<Message> = store
                        .run_turn(&record)
                        .await?
                        .into_iter()
                        .map(|m| m.message)
                        .collect();
                    for (mut request, _) in routes(store, &turn, depth + 1).await? {
                        request.run_id.get_or_insert_with(|| record.id.clone());
                        out.push((request, Some(approval_request.clone())));
                    }
                }
                _ => out.push((approval_request.clone(), None)),
            }
        }
        Ok(out)
    })
}

impl ThreadRunner {
    /// [`ThreadRunner::resume`] for a run some of whose calls wait on
    /// sub-agents: decisions on a sub-agent's calls resume it (its own
    /// agent, found by the tool's name); each sub-agent that has finished
    /// then has its parent's call approved, and the parent goes on with
    /// those and its own decisions. `None`: no decision names a
    /// sub-agent's call (the plain resume applies).
    pub(crate) async fn resume_children(
        &self,
        run_id: &str,
        decisions: &[Decision],
    ) -> Result<Option<Response>, ResumeError> {
        let record = self.store().run(run_id).await?;
        if record.status != RunStatus::RequiresApproval.as_str() {
            return Ok(None);
        }
        let turn: Vec<Message> = self
            .store()
            .run_turn(&record)
            .await?
            .into_iter()
            .map(|m| m.message)
            .collect();
        let routes = routes(self.store(), &turn, 0).await?;
        // Which of this run's calls each decision goes through, by the
        // call's id and digest (a digest is bound to its run: two runs'
        // calls of the same id are told apart).
        let via: HashMap<(&str, &str), &ApprovalRequest> = routes
            .iter()
            .filter_map(|(r, via)| {
                via.as_ref()
                    .map(|v| ((r.tool_call_id.as_str(), r.digest.as_str()), v))
            })
            .collect();
        let routed = |d: &Decision| {
            via.get(&(d.tool_call_id.as_str(), d.digest.as_str()))
                .copied()
        };
        if !decisions.iter().any(|d| routed(d).is_some()) {
            return Ok(None);
        }
        let mut own = Vec::new();
        let mut by_child: Vec<(&ApprovalRequest, Vec<Decision>)> = Vec::new();
        for d in decisions {
            match routed(d) {
                None => own.push(d.clone()),
                Some(parent_call) => {
                    match by_child
                        .iter_mut()
                        .find(|(c, _)| c.tool_call_id == parent_call.tool_call_id)
                    {
                        Some((_, ds)) => ds.push(d.clone()),
                        None => by_child.push((parent_call, vec![d.clone()])),
                    }
                }
            }
        }
        for (parent_call, ds) in by_child {
            let Some(run) = parent_call.run_id.as_deref() else {
                continue;
            };
            let agent = self.sub_agent(&parent_call.name)?;
            // Boxed: a sub-agent's resume may route to its own.
            let child = ThreadRunner::new(self.store().clone(), agent);
            Box::pin(child.resume(run, ds)).await?;
        }
        // Calls whose sub-agent has finished: approved, so that the call
        // reads the finished run's output.
        own.extend(self.finished_children(&turn).await?);
        if own.is_empty() {
            return Ok(Some(
                stored_response(self.store(), &self.store().run(run_id).await?).await?,
            ));
        }
        self.resume_own(run_id, own).await.map(Some)
    }

    /// Approvals of this run's calls whose sub-agent is no longer waiting.
    async fn finished_children(&self, turn: &[Message]) -> Result<Vec<Decision>, StoreError> {
        let mut out = Vec::new();
        let Some(last) = turn.last() else {
            return Ok(out);
        };
        for b in &last.content {
            if let Block::ApprovalRequest { approval_request } = b
                && let Some(run) = &approval_request.run_id
                && self.store().run(run).await?.status != RunStatus::RequiresApproval.as_str()
            {
                out.push(Decision::approve(approval_request));
            }
        }
        Ok(out)
    }

    /// The agent behind this runner's tool `name`.
    fn sub_agent(&self, name: &str) -> Result<Agent, ResumeError> {
        self.agent().sub_agent(name).ok_or_else(|| {
            ResumeError::Store(StoreError::Conflict(format!(
                "a call waits on a sub-agent's run through tool {name}, which is not an agent of this one (agents used as tools are resumed through the agent that calls them)"
            )))
        })
    }
}

/// The parent of a sub-agent's thread `thread`, when it waits on it:
/// its run, to be resumed by its own agent ([`resume_parent`]).
pub async fn waiting_parent(store: &Store, thread: &str) -> Result<Option<RunRecord>, StoreError> {
    let t = store.thread(thread).await?;
    let Some(parent) = t.parent_run_id else {
        return Ok(None);
    };
    let record = store.run(&parent).await?;
    Ok((record.status == RunStatus::RequiresApproval.as_str()).then_some(record))
}

/// A sub-agent's run on `thread` was decided apart from its parent (in
/// the inbox, through its own run): once it no longer waits, its parent —
/// run by `parent_agent` — goes on. `None`: nothing to do (no parent
/// waiting, or the sub-agent still waits).
///
/// (A boxed future: a parent's resume may carry its own parent on.)
pub fn resume_parent<'a>(
    store: &'a Store,
    thread: &'a str,
    parent_agent: &'a Agent,
) -> BoxFuture<'a, Result<Option<Response>, ResumeError>> {
    carry_on_parent(
        ThreadRunner::new(store.clone(), parent_agent.clone()),
        thread,
    )
}

/// [`resume_parent`] with the parent's runner (and its agents by name,
/// when it has them: a grandparent goes on in turn).
pub(crate) fn carry_on_parent(
    runner: ThreadRunner,
    thread: &str,
) -> BoxFuture<'_, Result<Option<Response>, ResumeError>> {
    Box::pin(async move {
        let store = runner.store().clone();
        let Some(parent) = waiting_parent(&store, thread).await? else {
            return Ok(None);
        };
        let turn: Vec<Message> = store
            .run_turn(&parent)
            .await?
            .into_iter()
            .map(|m| m.message)
            .collect();
        let approvals = runner.finished_children(&turn).await?;
        if approvals.is_empty() {
            return Ok(None);
        }
        runner.resume_own(&parent.id, approvals).await.map(Some)
    })
}
