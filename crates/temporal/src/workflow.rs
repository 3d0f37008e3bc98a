//! The workflow of a thread: its run carried from rest to rest by
//! activities, paused runs decided by an Update.
//!
//! ```text
//! start ─► advance ─► completed / failed ─► workflow ends
//!             │
//!             ▼
//!      requires_approval ─► Update `decide` (validated) ─► advance ─► ...
//! ```
//!
//! Workflow code must replay the same way from its history: it holds no
//! clock, no I/O and no agent, only what the activities returned.

use std::time::Duration;

use parlance_format::{Message, Response, RunStatus};
use serde_json::Value;
use temporalio_common::RetryPolicy;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{ActivityOptions, WorkflowContext, WorkflowContextView, WorkflowResult};

use crate::steps::Steps;
use crate::task::{Advance, Begin, Rest, parse_decisions};

/// A thread's workflow (see the module's doc).
#[workflow]
#[derive(Default)]
pub struct ThreadWorkflow {
    begin: Option<Begin>,
    /// Where the run rests since the last activity.
    rest: Option<Rest>,
    /// Decisions accepted by the Update, not yet applied.
    decisions: Option<Value>,
    /// Activities completed.
    advances: u32,
    /// Updates that took decisions, and those that answered: the workflow
    /// ends only once every Update has its answer.
    decided: u32,
    answered: u32,
}

/// What the validator's refusals begin with (the executor tells them from
/// Temporal's own failures by it).
pub(crate) const REFUSED: &str = "decision refused: ";

/// The validator's answer while the workflow has not yet taken in the
/// pause the store already shows (its activity's result is on its way):
/// the executor asks again.
pub(crate) const NOT_YET: &str = "the run's workflow is not waiting for decisions";

#[workflow_methods]
impl ThreadWorkflow {
    /// Carries the run from rest to rest until it ends.
    #[run]
    pub async fn run(ctx: &mut WorkflowContext<Self>, begin: Begin) -> WorkflowResult<Rest> {
        ctx.state_mut(|s| s.begin = Some(begin.clone()));
        let options = activity_options(begin.heartbeat_ms);
        let mut task = Advance {
            agent: begin.agent.clone(),
            thread_id: begin.thread_id.clone(),
            run_id: begin.run_id.clone(),
            work: begin.work.clone(),
            decisions: None,
        };
        loop {
            let rest = ctx
                .execute_activity(Steps::advance, task.clone(), options.clone())
                .await?;
            ctx.state_mut(|s| {
                s.rest = Some(rest.clone());
                s.advances += 1;
            });
            if !rest.paused() {
                ctx.wait_condition(|s| s.answered == s.decided).await?;
                return Ok(rest);
            }
            ctx.wait_condition(|s| s.decisions.is_some()).await?;
            // While they are applied the run rests nowhere: a decision sent
            // meanwhile (a second reviewer's) is not checked against the
            // pause that is being left.
            let decisions = ctx
                .state_mut(|s| {
                    s.rest = None;
                    s.decisions.take()
                })
                .unwrap_or_default();
            let against = rest.waiting.last().cloned().unwrap_or_else(|| {
                // A pause always has its requests; an empty one decides nothing.
                Message::new(parlance_format::Role::Tool, Vec::new())
            });
            task.decisions = Some((decisions, against));
        }
    }

    /// Refuses decisions the engine would refuse — before they reach the
    /// history: no pause, a decision twice, an unknown call, a digest that
    /// does not match the request (forged, or signed by another key),
    /// edited arguments that do not fit the tool.
    #[update_validator(decide)]
    fn check_decisions(
        &self,
        _ctx: &WorkflowContextView,
        decisions: &Value,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let (Some(begin), Some(rest)) = (&self.begin, &self.rest) else {
            return Err(NOT_YET.into());
        };
        if !rest.paused() || self.decisions.is_some() {
            return Err(NOT_YET.into());
        }
        let agent = crate::registry::agent(&begin.queue, &begin.agent).ok_or_else(|| {
            format!(
                "agent {:?} is not configured on this worker: its decisions cannot be checked",
                begin.agent
            )
        })?;
        let decisions = parse_decisions(decisions).map_err(|e| format!("{REFUSED}{e}"))?;
        let paused = Response {
            id: Some(rest.run_id.clone()),
            thread_id: Some(begin.thread_id.clone()),
            status: RunStatus::RequiresApproval,
            messages: rest.waiting.clone(),
            output: Value::Null,
            usage: Default::default(),
            cost: None,
            finish_reason: None,
            pending: Vec::new(),
            error: None,
        };
        agent
            .validate_decisions(&paused, &decisions)
            .map_err(|e| format!("{REFUSED}{e}").into())
    }

    /// Takes decisions on the paused run (checked by the validator above)
    /// and answers once the run rests again: its end, or its next pause.
    #[update]
    pub async fn decide(
        ctx: &mut WorkflowContext<Self>,
        decisions: Value,
    ) -> Result<Rest, Box<dyn std::error::Error + Send + Sync>> {
        // Two reviewers' decisions on one pause may both pass the
        // validator (it runs before either is taken): the first is taken,
        // the second refused — never one overwriting the other.
        let before = ctx.state_mut(|s| {
            if s.decisions.is_some() || !s.rest.as_ref().is_some_and(Rest::paused) {
                return None;
            }
            s.decisions = Some(decisions);
            s.decided += 1;
            Some(s.advances)
        });
        let Some(before) = before else {
            return Err(
                "the run no longer waits: another decision on this pause was taken first".into(),
            );
        };
        // A workflow cancelled meanwhile answers with the rest it had.
        let _ = ctx.wait_condition(|s| s.advances > before).await;
        let rest = ctx.state_mut(|s| {
            s.answered += 1;
            s.rest.clone()
        });
        Ok(rest.unwrap_or_else(|| Rest {
            run_id: String::new(),
            status: "failed".into(),
            waiting: Vec::new(),
        }))
    }
}

/// An advance lives as long as its run's segment, however long its model
/// and tools take; a worker that dies is noticed by the heartbeat. The
/// store gives up on a step that keeps killing its process (a poison
/// step), so the retries end.
fn activity_options(heartbeat_ms: u64) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(24 * 3600))
        .heartbeat_timeout(Duration::from_millis(heartbeat_ms.max(100)))
        .retry_policy(
            RetryPolicy::builder()
                .initial_interval(Duration::from_millis(200))
                .maximum_interval(Duration::from_secs(5))
                .build(),
        )
        .build()
}
