//! Who carries a run the handlers start: this server ([`ThreadRunner`]),
//! or Temporal's workers (`executor = "temporal"`).
//!
//! Every endpoint and protocol starts, retries and resumes runs through
//! [`Runner`], so each of them works the same on both executors; what a
//! run stores is the same too (the workers write the same store).

use std::ops::Deref;

use parlance_format::{Decision, Message};
use parlance_runtime::{RunHandle, ThreadRunner};
use parlance_store::StoreError;
use parlance_temporal::{Temporal, Work};

/// A runner of one agent on the store's threads.
pub struct Runner {
    local: ThreadRunner,
    temporal: Option<Temporal>,
    /// The agent's name when it is a configured one (the workers know
    /// those alone, by name).
    configured: Option<String>,
}

impl Deref for Runner {
    type Target = ThreadRunner;
    fn deref(&self) -> &ThreadRunner {
        &self.local
    }
}

impl Runner {
    pub(crate) fn new(
        local: ThreadRunner,
        temporal: Option<Temporal>,
        configured: Option<String>,
    ) -> Runner {
        Runner {
            local,
            temporal,
            configured,
        }
    }

    /// The agent's name, if it is one the workers run: Temporal's workers
    /// know the configured agents alone, not one given in a request.
    fn configured(&self) -> Result<&str, StoreError> {
        self.configured.as_deref().ok_or_else(|| {
            StoreError::Unstorable(
                "agent: an agent given in the request cannot run on the Temporal executor (its workers run the configured agents): name a configured agent".into(),
            )
        })
    }

    /// Starts a run on `thread` (see [`ThreadRunner::start`]).
    pub async fn start(
        &self,
        thread: &str,
        input: Vec<Message>,
        stream: bool,
    ) -> Result<RunHandle, StoreError> {
        match &self.temporal {
            None => self.local.start(thread, input, stream).await,
            Some(t) => {
                let name = self.configured()?;
                t.start(name, thread, Work::Run(input), stream).await
            }
        }
    }

    /// Retries the thread's failed run (see [`ThreadRunner::start_retry`]).
    pub async fn start_retry(&self, thread: &str, stream: bool) -> Result<RunHandle, StoreError> {
        match &self.temporal {
            None => self.local.start_retry(thread, stream).await,
            Some(t) => {
                let name = self.configured()?;
                t.start(name, thread, Work::Retry, stream).await
            }
        }
    }

    /// Decides the paused run `run_id` (see [`ThreadRunner::start_resume`]);
    /// on Temporal, by its workflow's Update, whose validator refuses what
    /// the engine refuses.
    pub async fn start_resume(
        &self,
        run_id: &str,
        decisions: Vec<Decision>,
        stream: bool,
    ) -> Result<RunHandle, StoreError> {
        match &self.temporal {
            Some(t) if t.carries(run_id).await? => t.resume(run_id, decisions, stream).await,
            // Paused before the server moved to Temporal: no workflow
            // waits for it, this server resumes it.
            _ => self.local.start_resume(run_id, decisions, stream).await,
        }
    }
}
