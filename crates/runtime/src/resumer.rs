//! Runs that finish on their own after their process died.
//!
//! A [`Resumer`] finds the store's dead runs (`running`, their lease run
//! out; at start-up also those its own holder held: its previous
//! incarnation's) and carries each on from its last committed step with
//! the agent that made it ([`ThreadRunner::take_over`]). Nothing that
//! committed runs twice: a model step that did not commit is asked again,
//! a tool call that did not commit runs again (with the same idempotency
//! key, `{thread}/{call id}`, so a tool can make its effect at most once).
//! A run that keeps dying at the same step stops after
//! [`Resumer::max_attempts`] takeovers, failed, its thread free.
//!
//! ```no_run
//! # async fn f(store: parlance_store::Store, agent: parlance_agent::Agent) -> Result<(), parlance_store::StoreError> {
//! use parlance_runtime::Resumer;
//! // Give dead runs a lease's time to be taken over before a touch of
//! // their thread marks them interrupted.
//! let lease = store.lease();
//! let store = store.with_resume_grace(lease);
//! let resumer = Resumer::new(store, [agent]);
//! resumer.resume_dead(false).await?; // once, now
//! let _forever = resumer.spawn(parlance_runtime::log_resumed); // and every third of a lease
//! # Ok(()) }
//! ```

use parlance_agent::Agent;
use parlance_store::{DeadRun, Store, StoreError};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::runner::{RunHandle, TakenOver, ThreadRunner};

/// How many times in a row a run is taken over at the same step before it
/// is given up (failed, `interrupted`).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// Carries on the runs of a store whose process died.
#[derive(Clone)]
pub struct Resumer {
    store: Store,
    agents: Vec<Agent>,
    max_attempts: u32,
}

/// What became of one dead run.
pub struct Resumed {
    /// The run.
    pub run_id: String,
    /// Its thread.
    pub thread_id: String,
    /// Carried on (`Ok`: its handle; it goes on detached), or not.
    pub outcome: Result<RunHandle, NotResumed>,
}

/// Why a dead run was not carried on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotResumed {
    /// What its takeover came to.
    TakenOver(TakenOver),
    /// None of the resumer's agents made it; a run of this holder's
    /// previous incarnation is marked interrupted at once (nothing else
    /// will take it), any other is left to a resumer that has its agent
    /// (and, past the store's resume grace, to the sweep).
    NoAgent {
        /// Whether it was marked interrupted.
        ended: bool,
    },
}

impl Resumer {
    /// A resumer of runs made by `agents` (a run goes to the agent of its
    /// name; a run of an unnamed agent, to one whose settings are the
    /// same).
    pub fn new(store: Store, agents: impl IntoIterator<Item = Agent>) -> Resumer {
        Resumer {
            store,
            agents: agents.into_iter().collect(),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
        }
    }

    /// Takeovers at the same step before a run is given up (default
    /// [`DEFAULT_MAX_ATTEMPTS`]; at least 1).
    pub fn max_attempts(mut self, n: u32) -> Resumer {
        self.max_attempts = n.max(1);
        self
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The agent that made a run with these settings.
    fn agent_for(&self, settings: &Value) -> Option<&Agent> {
        match settings.get("name").and_then(Value::as_str) {
            Some(name) => self.agents.iter().find(|a| a.name() == Some(name)),
            None => self.agents.iter().find(|a| a.settings() == *settings),
        }
    }

    /// Takes over every dead run of the store now (see the module's doc);
    /// `mine` as for [`Store::dead_runs`]: only before this holder runs
    /// anything. Each run taken over goes on in its own task.
    pub async fn resume_dead(&self, mine: bool) -> Result<Vec<Resumed>, StoreError> {
        let mut out = Vec::new();
        for DeadRun {
            id,
            thread_id,
            settings,
        } in self.store.dead_runs(mine).await?
        {
            let outcome = match self.agent_for(&settings) {
                Some(agent) => ThreadRunner::new(self.store.clone(), agent.clone())
                    .take_over(&id, mine, self.max_attempts, false)
                    .await?
                    .map_err(NotResumed::TakenOver),
                None => {
                    let ended = mine && self.store.end_dead_run(&id, true).await?;
                    Err(NotResumed::NoAgent { ended })
                }
            };
            out.push(Resumed {
                run_id: id,
                thread_id,
                outcome,
            });
        }
        Ok(out)
    }

    /// Looks for dead runs every third of the store's lease, forever,
    /// telling `report` what each pass did ([`log`] logs it); a passing
    /// store failure is logged, and the next pass tries again.
    pub fn spawn(self, report: impl Fn(&[Resumed]) + Send + 'static) -> JoinHandle<()> {
        tokio::spawn(async move {
            let every = (self.store.lease() / 3).max(std::time::Duration::from_millis(50));
            loop {
                tokio::time::sleep(every).await;
                match self.resume_dead(false).await {
                    Ok(done) => report(&done),
                    Err(e) => tracing::warn!(error = %e, "looking for dead runs to resume failed"),
                }
            }
        })
    }
}

/// Logs what a pass did.
pub fn log(done: &[Resumed]) {
    for r in done {
        match &r.outcome {
            Ok(_) => {
                tracing::warn!(run = %r.run_id, thread = %r.thread_id, "a run whose process died goes on here")
            }
            // Nothing happened: another process has it, or will (or the
            // sweep, past the grace); said at every pass, it would be noise.
            Err(NotResumed::TakenOver(TakenOver::Gone) | NotResumed::NoAgent { ended: false }) => {
                tracing::debug!(run = %r.run_id, thread = %r.thread_id, "a dead run was left to another process")
            }
            Err(why) => {
                tracing::warn!(run = %r.run_id, thread = %r.thread_id, ?why, "a run whose process died was not carried on")
            }
        }
    }
}
