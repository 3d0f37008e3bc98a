//! The activity: a run carried from where the store says it stands to its
//! next rest.
//!
//! It is safe to run again, which is what Temporal does when a worker
//! dies: what the store holds decides what is left to do.
//!
//! | the store says            | the activity                                   |
//! |---------------------------|------------------------------------------------|
//! | no such run               | starts it (its id chosen by the workflow)      |
//! | `running`, carried here   | waits for it                                   |
//! | `running`, dead           | takes it over from its last committed step     |
//! | `running`, alive elsewhere| waits (its lease runs out if its process died) |
//! | `requires_approval`       | applies the decisions, if they are for this pause |
//! | `completed`, `failed`     | reports it                                     |

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use parlance_format::{Message, Role};
use parlance_runtime::{AgentsByName, ResumeError, RunHandle, TakenOver, ThreadRunner};
use parlance_store::{RunRecord, Store, StoreError};
use temporalio_macros::activities;
use temporalio_sdk::ApplicationFailure;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use crate::task::{Advance, Rest, Work, parse_decisions};

/// The activities of a worker: its store and its agents.
pub struct Steps {
    store: Store,
    agents: AgentsByName,
    max_attempts: u32,
    /// Runs this process carries now: a retried activity waits for them
    /// rather than take them over (this process holds their lease).
    carrying: Mutex<HashSet<String>>,
}

/// How often a waiting activity looks at the store and heartbeats.
const LOOK_EVERY: Duration = Duration::from_millis(100);

impl Steps {
    /// Activities on `store` running `agents`; a run that dies
    /// `max_attempts` times at the same step is given up as failed.
    pub fn new(store: Store, agents: AgentsByName, max_attempts: u32) -> Steps {
        Steps {
            store,
            agents,
            max_attempts,
            carrying: Default::default(),
        }
    }

    fn runner(&self, agent: &str, run_id: &str) -> Result<ThreadRunner, ActivityError> {
        let agent = (self.agents)(agent).ok_or_else(|| {
            fatal(format!(
                "agent {agent:?} is not configured on this worker (its task queue is served by workers with other agents?)"
            ))
        })?;
        Ok(ThreadRunner::new(self.store.clone(), agent)
            .with_agents(Arc::clone(&self.agents))
            .with_run_id(run_id))
    }

    /// Waits for a started run's rest, heartbeating.
    async fn carry(
        &self,
        ctx: &ActivityContext,
        run_id: &str,
        handle: RunHandle,
    ) -> Result<Rest, ActivityError> {
        let outcome = handle.outcome();
        tokio::pin!(outcome);
        // Three beats per heartbeat timeout: one lost still leaves two.
        let beat = ctx
            .info()
            .heartbeat_timeout
            .map_or(Duration::from_secs(1), |t| t / 3)
            .max(LOOK_EVERY);
        let result = loop {
            tokio::select! {
                r = &mut outcome => break r,
                _ = tokio::time::sleep(beat) => { let _ = ctx.record_heartbeat(()).await; }
            }
        };
        self.carrying
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(run_id);
        match result {
            Ok(_) => self.rest(run_id).await,
            Err(ResumeError::Decision(e)) => Err(fatal(format!("decisions refused: {e}"))),
            Err(ResumeError::Store(e)) => Err(retry(e)),
        }
    }

    /// The run's rest as the store has it.
    async fn rest(&self, run_id: &str) -> Result<Rest, ActivityError> {
        let record = self.store.run(run_id).await.map_err(retry)?;
        rest_of(&self.store, &record).await.map_err(retry)
    }

    /// Marks the run as carried here before it is claimed, so that a retry
    /// of this activity in this process never takes it over meanwhile.
    fn mark(&self, run_id: &str) {
        self.carrying
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(run_id.to_string());
    }

    fn unmark(&self, run_id: &str) {
        self.carrying
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(run_id);
    }

    fn carried_here(&self, run_id: &str) -> bool {
        self.carrying
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(run_id)
    }
}

#[activities]
impl Steps {
    /// Carries the run to its next rest (see the module's doc).
    #[activity]
    pub async fn advance(
        self: Arc<Self>,
        ctx: ActivityContext,
        task: Advance,
    ) -> Result<Rest, ActivityError> {
        let run_id = task.run_id.as_str();
        loop {
            let record = match self.store.run(run_id).await {
                Ok(r) => Some(r),
                Err(StoreError::NotFound(_)) => None,
                Err(e) => return Err(retry(e)),
            };
            let Some(record) = record else {
                let runner = self.runner(&task.agent, run_id)?;
                self.mark(run_id);
                let started = match &task.work {
                    Work::Run(input) => runner.start(&task.thread_id, input.clone(), false).await,
                    Work::Retry => runner.start_retry(&task.thread_id, false).await,
                };
                match started {
                    Ok(handle) => return self.carry(&ctx, run_id, handle).await,
                    Err(e) => {
                        self.unmark(run_id);
                        // Refused (the thread busy, deleted, a retry of a
                        // run that did not fail): the run never starts.
                        return Err(match e {
                            StoreError::Database(_) => retry(e),
                            _ => fatal(e.to_string()),
                        });
                    }
                }
            };
            match record.status.as_str() {
                "requires_approval" => {
                    let Some((decisions, against)) = &task.decisions else {
                        return rest_of(&self.store, &record).await.map_err(retry);
                    };
                    let rest = rest_of(&self.store, &record).await.map_err(retry)?;
                    // Paused again, on other requests: the decisions were
                    // applied by an earlier attempt.
                    if rest.waiting.last() != Some(against) {
                        return Ok(rest);
                    }
                    let decisions = parse_decisions(decisions).map_err(|e| fatal(e.to_string()))?;
                    self.mark(run_id);
                    let runner = self.runner(&task.agent, run_id)?;
                    match runner.start_resume(run_id, decisions, false).await {
                        Ok(handle) => return self.carry(&ctx, run_id, handle).await,
                        Err(e) => {
                            self.unmark(run_id);
                            return Err(retry(e));
                        }
                    }
                }
                "running" if self.carried_here(run_id) => {}
                "running" => {
                    let runner = self.runner(&task.agent, run_id)?;
                    self.mark(run_id);
                    match runner
                        .take_over(run_id, true, self.max_attempts, false)
                        .await
                    {
                        Ok(Ok(handle)) => {
                            tracing::info!(run = run_id, "a run whose worker died was taken over");
                            return self.carry(&ctx, run_id, handle).await;
                        }
                        // Alive elsewhere, waiting again, given up: the
                        // store says what next on the next look.
                        Ok(Err(
                            TakenOver::Gone | TakenOver::Waiting | TakenOver::GaveUp { .. },
                        )) => self.unmark(run_id),
                        Err(e) => {
                            self.unmark(run_id);
                            return Err(retry(e));
                        }
                    }
                }
                _ => return rest_of(&self.store, &record).await.map_err(retry),
            }
            let _ = ctx.record_heartbeat(()).await;
            tokio::time::sleep(LOOK_EVERY).await;
        }
    }
}

/// A run's rest, from its record: a pause carries its last two messages.
pub(crate) async fn rest_of(store: &Store, record: &RunRecord) -> Result<Rest, StoreError> {
    let mut waiting = Vec::new();
    if record.status == "requires_approval" {
        let turn: Vec<Message> = store
            .run_turn(record)
            .await?
            .into_iter()
            .map(|m| m.message)
            .collect();
        let n = turn.len();
        if n >= 2 && turn[n - 1].role == Role::Tool {
            waiting = turn[n - 2..].to_vec();
        }
    }
    Ok(Rest {
        run_id: record.id.clone(),
        status: record.status.clone(),
        waiting,
    })
}

/// A failure Temporal retries (the store unreachable, a conflict that
/// passes).
fn retry(e: impl std::fmt::Display) -> ActivityError {
    ActivityError::application(ApplicationFailure::new(e.to_string()))
}

/// A failure no retry mends: the workflow fails with it.
fn fatal(message: String) -> ActivityError {
    ActivityError::application(ApplicationFailure::non_retryable(message))
}
