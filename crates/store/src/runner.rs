//! Running an agent on a stored thread.

use std::sync::Arc;

use futures::future::BoxFuture;
use parlance_agent::{Agent, Checkpoint, DecisionError, Resume, RunInput, Step};
use parlance_format::{Decision, Message, Response, RunStatus, Turn};

use crate::store::{ActiveRun, Store, StoreError};

/// Commits each step of a run to the store as it completes.
struct StoreCheckpoint {
    store: Store,
    run: ActiveRun,
}

impl Checkpoint for StoreCheckpoint {
    fn commit<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            match step {
                Step::Append(m) => self
                    .store
                    .append(&self.run, std::slice::from_ref(m))
                    .await
                    .map(drop),
                Step::ReplaceLast(m) => self.store.replace_last(&self.run, m).await,
            }
            .map_err(|e| e.to_string())
        })
    }
}

/// A refused resume: the store's reason, or the decisions'.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResumeError {
    /// The store refused (no such run, not waiting, busy...).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A decision was refused; the run still waits.
    #[error(transparent)]
    Decision(#[from] DecisionError),
}

/// Runs an agent on threads of a store.
#[derive(Clone)]
pub struct ThreadRunner {
    store: Store,
    agent: Agent,
}

impl ThreadRunner {
    /// An agent working on a store's threads.
    pub fn new(store: Store, agent: Agent) -> Self {
        ThreadRunner { store, agent }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Runs on `thread` with new `input`: the history comes from the store
    /// (repaired first if its last run died mid-step); the input and every
    /// step are committed as they complete; the run's outcome is recorded.
    pub async fn run(&self, thread: &str, input: Vec<Message>) -> Result<Response, StoreError> {
        let active = self.store.begin_run(thread, &self.agent.settings()).await?;
        let result = self.run_claimed(&active, input).await;
        if let Err(e) = &result {
            // Leave no run holding the thread after a store failure.
            let failed = failed_response(&active, e);
            let _ = self.store.finish_run(&active, &failed).await;
        }
        result
    }

    async fn run_claimed(
        &self,
        active: &ActiveRun,
        input: Vec<Message>,
    ) -> Result<Response, StoreError> {
        let history = self.store.history(&active.thread_id).await?;
        self.store.append(active, &input).await?;
        let checkpoint = Arc::new(StoreCheckpoint {
            store: self.store.clone(),
            run: active.clone(),
        });
        let run_input = RunInput {
            input,
            turns: vec![Turn { messages: history }],
            run_id: Some(active.id.clone()),
            thread_id: Some(active.thread_id.clone()),
        };
        let response = self.agent.run_with_checkpoint(run_input, checkpoint).await;
        self.store.finish_run(active, &response).await?;
        Ok(response)
    }

    /// [`ThreadRunner::run`] as a stream of events; the last one,
    /// `RunCompleted`, comes after the run's outcome is stored.
    pub async fn run_stream(
        &self,
        thread: &str,
        input: Vec<Message>,
    ) -> Result<impl futures::Stream<Item = parlance_agent::RunEvent> + Send + 'static, StoreError>
    {
        use futures::StreamExt;
        use parlance_agent::RunEvent;
        let active = self.store.begin_run(thread, &self.agent.settings()).await?;
        let prepared = async {
            let history = self.store.history(&active.thread_id).await?;
            self.store.append(&active, &input).await?;
            Ok::<_, StoreError>(history)
        }
        .await;
        let history = match prepared {
            Ok(h) => h,
            Err(e) => {
                let _ = self
                    .store
                    .finish_run(&active, &failed_response(&active, &e))
                    .await;
                return Err(e);
            }
        };
        let checkpoint = Arc::new(StoreCheckpoint {
            store: self.store.clone(),
            run: active.clone(),
        });
        let run_input = RunInput {
            input,
            turns: vec![Turn { messages: history }],
            run_id: Some(active.id.clone()),
            thread_id: Some(active.thread_id.clone()),
        };
        let events = self.agent.run_stream_with_checkpoint(run_input, checkpoint);
        let store = self.store.clone();
        Ok(events.then(move |e| {
            let (store, active) = (store.clone(), active.clone());
            async move {
                if let RunEvent::RunCompleted(r) = &e
                    && let Err(err) = store.finish_run(&active, r).await
                {
                    tracing::error!(run = %active.id, error = %err, "the run's outcome could not be stored");
                }
                e
            }
        }))
    }

    /// Runs `thread` again with no new input (after a failed run: the
    /// history already holds what the model needs).
    pub async fn retry(&self, thread: &str) -> Result<Response, StoreError> {
        self.run(thread, Vec::new()).await
    }

    /// Applies decisions to the run waiting on them — from any process:
    /// everything needed is in the store.
    pub async fn resume(
        &self,
        run_id: &str,
        decisions: Vec<Decision>,
    ) -> Result<Response, ResumeError> {
        let record = self.store.run(run_id).await?;
        if record.status != RunStatus::RequiresApproval.as_str() {
            return Err(StoreError::Conflict(format!(
                "run {run_id} is {}, not waiting for decisions",
                record.status
            ))
            .into());
        }
        let active = self.store.claim_paused(run_id).await?;
        let stored = match self.store.messages(&active.thread_id, 0, 100_000).await {
            Ok(m) => m,
            Err(e) => {
                let _ = self.store.release_paused(&active).await;
                return Err(e.into());
            }
        };
        let split = stored
            .iter()
            .position(|m| m.run_id.as_deref() == Some(run_id))
            .unwrap_or(stored.len());
        let (earlier, this_run) = stored.split_at(split);
        let paused = Response {
            id: Some(run_id.to_string()),
            thread_id: Some(active.thread_id.clone()),
            status: RunStatus::RequiresApproval,
            messages: this_run.iter().map(|m| m.message.clone()).collect(),
            output: serde_json::Value::Null,
            usage: record.usage.unwrap_or_default(),
            finish_reason: None,
            pending: Vec::new(),
            error: None,
        };
        let resume = Resume {
            turns: vec![Turn {
                messages: earlier.iter().map(|m| m.message.clone()).collect(),
            }],
            paused,
            decisions,
        };
        let checkpoint = Arc::new(StoreCheckpoint {
            store: self.store.clone(),
            run: active.clone(),
        });
        match self.agent.resume_with_checkpoint(resume, checkpoint).await {
            Ok(response) => {
                self.store.finish_run(&active, &response).await?;
                Ok(response)
            }
            Err(e) => {
                self.store.release_paused(&active).await?;
                Err(e.into())
            }
        }
    }
}

fn failed_response(active: &ActiveRun, e: &StoreError) -> Response {
    Response {
        id: Some(active.id.clone()),
        thread_id: Some(active.thread_id.clone()),
        status: RunStatus::Failed,
        messages: Vec::new(),
        output: serde_json::Value::Null,
        usage: Default::default(),
        finish_reason: None,
        pending: Vec::new(),
        error: Some(parlance_format::RunError {
            code: "store".into(),
            message: e.to_string(),
            cause: None,
        }),
    }
}
