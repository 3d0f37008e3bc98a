//! Running an agent on a stored thread.
//!
//! A run on a thread is detached from whoever started it: it runs in its
//! own task to its end, whatever the caller does (a web client that hangs
//! up, a future that is dropped), and its outcome is stored. While it
//! runs, a heartbeat renews its lease, so a slow step (a model answer or a
//! tool that takes minutes) never lets another process take the thread.

use std::sync::Arc;

use futures::channel::mpsc;
use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use parlance_agent::{
    Agent, Checkpoint, CheckpointError, DecisionError, Resume, RunEvent, RunStream, Step,
};
use parlance_format::{Decision, Message, Response, RunStatus, Turn};
use tokio::task::JoinHandle;

use parlance_store::{ActiveRun, Store, StoreError};

/// Commits each step of a run to the store as it completes.
struct StoreCheckpoint {
    store: Store,
    run: ActiveRun,
}

impl Checkpoint for StoreCheckpoint {
    fn commit<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move {
            match step {
                Step::Append(m) => self
                    .store
                    .append(&self.run, std::slice::from_ref(m))
                    .await
                    .map(drop),
                Step::ReplaceLast(m) => self.store.replace_last(&self.run, m).await,
            }
            .map_err(CheckpointError::new)
        })
    }
}

/// Renews a run's lease every third of the lease while the run lives;
/// stops when the lease is lost (the run's next write is then refused).
struct Heartbeat(JoinHandle<()>);

impl Heartbeat {
    fn start(store: Store, run: ActiveRun) -> Heartbeat {
        let every = (store.lease() / 3).max(std::time::Duration::from_millis(10));
        Heartbeat(tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                match store.renew(&run).await {
                    Ok(()) => {}
                    Err(e @ StoreError::LeaseLost { .. }) => {
                        tracing::error!(run = %run.id, thread = %run.thread_id, error = %e, "the run lost its thread; it stops before its next write");
                        return;
                    }
                    // A passing database failure: the next beat tries again
                    // (the lease still has two thirds to go).
                    Err(e) => {
                        tracing::warn!(run = %run.id, error = %e, "could not renew the lease")
                    }
                }
            }
        }))
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.0.abort();
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

/// A run that was started on a thread and goes on by itself.
pub struct RunHandle {
    /// The run's id (readable later with [`Store::run`]).
    pub run_id: String,
    /// Its thread.
    pub thread_id: String,
    events: mpsc::UnboundedReceiver<RunEvent>,
    outcome: JoinHandle<Result<Response, ResumeError>>,
}

impl RunHandle {
    /// Waits for the run's end; its outcome is stored by then.
    pub async fn outcome(self) -> Result<Response, ResumeError> {
        self.outcome.await.unwrap_or_else(|e| {
            Err(StoreError::Database(format!("the run's task ended abnormally: {e}")).into())
        })
    }

    /// The run's events (only for runs started to stream); the last is
    /// `RunCompleted`, sent after the outcome is stored. Dropping the
    /// stream does not stop the run.
    pub fn events(self) -> impl Stream<Item = RunEvent> + Send + 'static {
        self.events
    }
}

/// Runs an agent on threads of a store.
#[derive(Clone)]
pub struct ThreadRunner {
    store: Store,
    agent: Agent,
}

/// What a spawned run does once its thread is claimed.
enum Work {
    Run(Vec<Message>),
    Retry,
    Resume {
        earlier: Vec<Message>,
        paused: Box<Response>,
        decisions: Vec<Decision>,
    },
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
    /// The run goes on to its end even if this future is dropped.
    pub async fn run(&self, thread: &str, input: Vec<Message>) -> Result<Response, StoreError> {
        match self.start(thread, input, false).await?.outcome().await {
            Ok(r) => Ok(r),
            Err(ResumeError::Store(e)) => Err(e),
            Err(ResumeError::Decision(e)) => unreachable!("a new run takes no decisions: {e}"),
        }
    }

    /// Claims `thread` and starts a run on it in its own task (detached:
    /// it ends and stores its outcome whatever the caller does). With
    /// `stream`, the handle's events report its progress.
    pub async fn start(
        &self,
        thread: &str,
        input: Vec<Message>,
        stream: bool,
    ) -> Result<RunHandle, StoreError> {
        let (store, settings, thread) = (
            self.store.clone(),
            self.agent.settings(),
            thread.to_string(),
        );
        let claim = async move {
            let active = store.begin_run(&thread, &settings).await?;
            Ok((active, Work::Run(input)))
        };
        self.spawn(claim, stream).await
    }

    /// [`ThreadRunner::run`] as a stream of events; the last one,
    /// `RunCompleted`, comes after the run's outcome is stored.
    pub async fn run_stream(
        &self,
        thread: &str,
        input: Vec<Message>,
    ) -> Result<impl Stream<Item = RunEvent> + Send + 'static, StoreError> {
        Ok(self.start(thread, input, true).await?.events())
    }

    /// Retries the thread's last run, which must have failed: its failed
    /// calls run again (their new results replace the failed ones, so the
    /// model never reads the failure), calls that succeeded keep their
    /// results, and the run goes on; with no failed call (a model error,
    /// a limit), the model is called again. A new run, detached like any.
    pub async fn retry(&self, thread: &str) -> Result<Response, StoreError> {
        match self.start_retry(thread, false).await?.outcome().await {
            Ok(r) => Ok(r),
            Err(ResumeError::Store(e)) => Err(e),
            Err(ResumeError::Decision(e)) => unreachable!("a retry takes no decisions: {e}"),
        }
    }

    /// Starts [`ThreadRunner::retry`] in its own task.
    pub async fn start_retry(&self, thread: &str, stream: bool) -> Result<RunHandle, StoreError> {
        let (store, settings, thread) = (
            self.store.clone(),
            self.agent.settings(),
            thread.to_string(),
        );
        self.spawn(
            async move {
                check_retry(&store, &thread).await?;
                let active = store.begin_run(&thread, &settings).await?;
                Ok((active, Work::Retry))
            },
            stream,
        )
        .await
    }

    /// Applies decisions to the run waiting on them — from any process:
    /// everything needed is in the store. The resumed run is detached like
    /// a new one.
    pub async fn resume(
        &self,
        run_id: &str,
        decisions: Vec<Decision>,
    ) -> Result<Response, ResumeError> {
        self.start_resume(run_id, decisions, false)
            .await?
            .outcome()
            .await
    }

    /// Claims a paused run and resumes it in its own task. Refused
    /// decisions come back from the handle's outcome (the run still waits).
    pub async fn start_resume(
        &self,
        run_id: &str,
        decisions: Vec<Decision>,
        stream: bool,
    ) -> Result<RunHandle, StoreError> {
        let (store, run_id) = (self.store.clone(), run_id.to_string());
        self.spawn(
            async move {
                let (active, work) = claim_paused(&store, &run_id, decisions).await?;
                Ok((active, work))
            },
            stream,
        )
        .await
    }

    /// Runs `claim` and then the run's work in one task: a caller that
    /// leaves mid-claim (a client hanging up) can neither leave a claim
    /// half made nor a claimed run that nobody runs. Returns once the
    /// thread is claimed (or refused).
    async fn spawn(
        &self,
        claim: impl Future<Output = Result<(ActiveRun, Work), StoreError>> + Send + 'static,
        stream: bool,
    ) -> Result<RunHandle, StoreError> {
        let (tx, events) = mpsc::unbounded();
        let tx = stream.then_some(tx);
        let (claimed, on_claim) = tokio::sync::oneshot::channel();
        let (store, agent) = (self.store.clone(), self.agent.clone());
        let outcome = tokio::spawn(async move {
            let (run, work) = match claim.await {
                Ok((run, work)) => {
                    let _ = claimed.send(Ok(run.clone()));
                    (run, work)
                }
                Err(e) => {
                    let _ = claimed.send(Err(e.clone()));
                    return Err(e.into());
                }
            };
            let _beat = Heartbeat::start(store.clone(), run.clone());
            let result = execute(&store, &agent, &run, work, tx.as_ref()).await;
            let response = match &result {
                Ok(r) => r.clone(),
                Err(ResumeError::Decision(_)) => {
                    // Nothing ran: the run waits again.
                    if let Err(e) = store.release_paused(&run).await {
                        tracing::error!(run = %run.id, error = %e, "a refused resume could not put the run back to waiting");
                    }
                    return result;
                }
                Err(ResumeError::Store(e)) => {
                    if !matches!(e, StoreError::LeaseLost { .. }) {
                        // Leave no run holding the thread after a store failure.
                        let _ = store.finish_run(&run, &failed_response(&run, e)).await;
                    }
                    failed_response(&run, e)
                }
            };
            if let Some(tx) = &tx {
                let _ = tx.unbounded_send(RunEvent::RunCompleted(response));
            }
            result
        });
        let active = on_claim.await.map_err(|_| {
            StoreError::Database("the run's task ended before it claimed its thread".into())
        })??;
        Ok(RunHandle {
            run_id: active.id,
            thread_id: active.thread_id,
            events,
            outcome,
        })
    }
}

/// Only a thread whose last run failed can be retried.
async fn check_retry(store: &Store, thread: &str) -> Result<(), StoreError> {
    let last = store.runs(thread).await?.pop();
    match last {
        Some(r) if r.status == RunStatus::Failed.as_str() => {}
        Some(r) => {
            return Err(StoreError::Conflict(format!(
                "thread {thread}: nothing to retry: its last run {} is {}",
                r.id, r.status
            )));
        }
        None => {
            return Err(StoreError::Conflict(format!(
                "thread {thread}: nothing to retry: it has no run"
            )));
        }
    }
    Ok(())
}

/// Takes a paused run back into `running` and rebuilds its paused state
/// from the store.
async fn claim_paused(
    store: &Store,
    run_id: &str,
    decisions: Vec<Decision>,
) -> Result<(ActiveRun, Work), StoreError> {
    let record = store.run(run_id).await?;
    if record.status != RunStatus::RequiresApproval.as_str() {
        return Err(StoreError::Conflict(format!(
            "run {run_id} is {}, not waiting for decisions",
            record.status
        )));
    }
    let active = store.claim_paused(run_id).await?;
    let stored = match store.all_messages(&active.thread_id).await {
        Ok(m) => m,
        Err(e) => {
            let _ = store.release_paused(&active).await;
            return Err(e);
        }
    };
    let mut split = stored
        .iter()
        .position(|m| m.run_id.as_deref() == Some(run_id))
        .unwrap_or(stored.len());
    // A retry that paused owns the tool message it rewrote, not the
    // assistant message whose calls it holds: take that one too.
    if stored
        .get(split)
        .is_some_and(|m| m.message.role == parlance_format::Role::Tool)
        && split > 0
    {
        split -= 1;
    }
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
    let work = Work::Resume {
        earlier: earlier.iter().map(|m| m.message.clone()).collect(),
        paused: Box::new(paused),
        decisions,
    };
    Ok((active, work))
}

/// The body of a spawned run: the agent's work, then its outcome stored.
async fn execute(
    store: &Store,
    agent: &Agent,
    run: &ActiveRun,
    work: Work,
    tx: Option<&mpsc::UnboundedSender<RunEvent>>,
) -> Result<Response, ResumeError> {
    let checkpoint: Arc<dyn Checkpoint> = Arc::new(StoreCheckpoint {
        store: store.clone(),
        run: run.clone(),
    });
    let response = match work {
        Work::Run(input) => {
            let history = store.history(&run.thread_id).await?;
            store.append(run, &input).await?;
            let run = agent
                .run(input)
                .turns([Turn { messages: history }])
                .id(&run.id)
                .thread(&run.thread_id)
                .checkpoint(checkpoint);
            match tx {
                None => run.await,
                Some(tx) => forward(run.stream(), tx).await?,
            }
        }
        Work::Retry => {
            let history = store.history(&run.thread_id).await?;
            let retry = agent
                .retry([Turn { messages: history }])
                .id(&run.id)
                .thread(&run.thread_id)
                .checkpoint(checkpoint);
            match tx {
                None => retry.await,
                Some(tx) => forward(retry.stream(), tx).await?,
            }
        }
        Work::Resume {
            earlier,
            paused,
            decisions,
        } => {
            let resume = agent
                .resume(Resume {
                    turns: vec![Turn { messages: earlier }],
                    paused: *paused,
                    decisions,
                })
                .checkpoint(checkpoint);
            match tx {
                None => resume.await?,
                Some(tx) => forward(resume.stream()?, tx).await?,
            }
        }
    };
    store.finish_run(run, &response).await?;
    Ok(response)
}

/// Passes a run's events on (to nobody, once the listener is gone) and
/// keeps its final response back: `RunCompleted` is sent once stored.
async fn forward(
    mut events: RunStream,
    tx: &mpsc::UnboundedSender<RunEvent>,
) -> Result<Response, StoreError> {
    while let Some(e) = events.next().await {
        match e {
            RunEvent::RunCompleted(r) => return Ok(r),
            other => {
                let _ = tx.unbounded_send(other);
            }
        }
    }
    Err(StoreError::Database(
        "the run ended without an outcome".into(),
    ))
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
        error: Some(parlance_format::RunError::new("store", e.to_string())),
    }
}
