//! The executor as a server uses it: runs started and decided through
//! Temporal, their progress read from the store; and the worker.

use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt, Shared};
use futures::stream::{self, Stream};
use parlance_agent::{DecisionError, RunEvent};
use parlance_format::{Decision, Message, Response, RunStatus};
use parlance_runtime::{AgentsByName, ResumeError, RunHandle};
use parlance_store::{Store, StoreError};
use temporalio_client::errors::{WorkflowStartError, WorkflowUpdateError};
use temporalio_client::{
    Client, ClientOptions, Connection, ConnectionOptions, WorkflowExecuteUpdateOptions,
    WorkflowGetResultOptions, WorkflowStartOptions,
};
use temporalio_sdk::{Runtime, WorkerOptions};

use crate::steps::Steps;
use crate::task::{Begin, Rest, Work};
use crate::workflow::ThreadWorkflow;

/// The largest run input sent to Temporal, in bytes of JSON: its payload
/// limit is 2 MiB, and the workflow's start carries more than the input.
pub const MAX_INPUT_BYTES: usize = 1_900_000;

/// Where Temporal is and how runs use it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// The frontend's `host:port` (a URL is accepted too).
    pub address: String,
    /// The namespace (`default` on a dev server).
    pub namespace: String,
    /// The task queue of Parlance's workflows and activities.
    pub task_queue: String,
    /// An activity that does not heartbeat for this long is retried
    /// elsewhere: how soon a run whose worker died is carried on.
    pub heartbeat: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            address: "127.0.0.1:7233".into(),
            namespace: "default".into(),
            task_queue: "parlance".into(),
            heartbeat: Duration::from_secs(10),
        }
    }
}

/// Temporal could not be reached, or the worker could not start.
#[derive(Debug, thiserror::Error)]
#[error("temporal at {address}: {message}")]
pub struct TemporalError {
    /// The frontend's address.
    pub address: String,
    /// What went wrong.
    pub message: String,
}

/// Runs on Temporal: started, decided, and watched through the store.
#[derive(Clone)]
pub struct Temporal {
    client: Client,
    store: Store,
    settings: Settings,
}

impl Temporal {
    /// Connects to Temporal's frontend; runs' messages are read from
    /// `store`, the one the workers write.
    pub async fn connect(settings: Settings, store: Store) -> Result<Temporal, TemporalError> {
        let fail = |message: String| TemporalError {
            address: settings.address.clone(),
            message,
        };
        let url = if settings.address.contains("://") {
            settings.address.clone()
        } else {
            format!("http://{}", settings.address)
        };
        let url = temporalio_client::Url::parse(&url)
            .map_err(|e| fail(format!("not an address ({e})")))?;
        let connection = Connection::connect(
            ConnectionOptions::new(url)
                .identity(format!("parlance@{}", std::process::id()))
                .connect_timeout(Duration::from_secs(10))
                .build(),
        )
        .await
        .map_err(|e| fail(e.to_string()))?;
        let client = Client::new(connection, ClientOptions::new(&settings.namespace).build())
            .map_err(|e| fail(e.to_string()))?;
        Ok(Temporal {
            client,
            store,
            settings,
        })
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The client (for tests and tools that speak to Temporal directly).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Starts a run of `agent` on `thread` (a new one with its input, or a
    /// retry of the thread's failed run) as the thread's workflow. A thread
    /// whose workflow runs (a run in progress or waiting for decisions) is
    /// busy. With `stream`, the handle's events report the run's messages
    /// as the store gets them, and its end.
    pub async fn start(
        &self,
        agent: &str,
        thread: &str,
        work: Work,
        stream: bool,
    ) -> Result<RunHandle, StoreError> {
        if let Work::Run(input) = &work {
            let size = serde_json::to_vec(input).map_or(0, |v| v.len());
            if size > MAX_INPUT_BYTES {
                return Err(StoreError::Unstorable(format!(
                    "the run's input is {size} bytes of JSON, over the {MAX_INPUT_BYTES} the Temporal executor sends (its payloads hold 2 MiB)"
                )));
            }
        }
        // Refused here as the built-in executor refuses it (no such
        // thread: 404), before a workflow starts.
        self.store.thread(thread).await?;
        let run_id = parlance_format::new_id("run");
        let begin = Begin {
            agent: agent.to_string(),
            thread_id: thread.to_string(),
            run_id: run_id.clone(),
            work,
            queue: self.settings.task_queue.clone(),
            heartbeat_ms: self.settings.heartbeat.as_millis() as u64,
        };
        let handle = self
            .client
            .start_workflow(
                ThreadWorkflow::run,
                begin,
                WorkflowStartOptions::new(&self.settings.task_queue, thread).build(),
            )
            .await
            .map_err(|e| match e {
                WorkflowStartError::AlreadyStarted { .. } => StoreError::Busy {
                    thread: thread.to_string(),
                    run: "its workflow".into(),
                    status: "running".into(),
                },
                other => StoreError::Database(format!("temporal: {other}")),
            })?;
        // The run rests once the store says so; a workflow that fails
        // before its run exists (a refused claim) says why.
        let store = self.store.clone();
        let id = run_id.clone();
        let outcome = async move {
            // A run that ends ends its workflow: Temporal says when (one
            // long poll). A pause does not: the store is read for it, less
            // and less often (a run waits for people).
            let ended = handle.get_result(WorkflowGetResultOptions::default());
            let mut ended = Some(Box::pin(ended));
            let mut look = Duration::from_millis(20);
            loop {
                match store.run(&id).await {
                    Ok(r) if r.status != "running" => {
                        return parlance_runtime::children::stored_response(&store, &r)
                            .await
                            .map_err(ResumeError::Store);
                    }
                    Ok(_) | Err(StoreError::NotFound(_)) => {}
                    Err(e) => return Err(ResumeError::Store(e)),
                }
                let Some(waiting) = ended.as_mut() else {
                    // The workflow ended well, and the store does not show
                    // its run at rest: swept, or written elsewhere.
                    return Err(ResumeError::Store(StoreError::Conflict(format!(
                        "run {id}: its workflow ended, and the store does not show it ended"
                    ))));
                };
                tokio::select! {
                    r = waiting => {
                        ended = None;
                        if let Err(e) = r {
                            return Err(ResumeError::Store(refused(e.to_string())));
                        }
                    }
                    _ = tokio::time::sleep(look) => {}
                }
                look = (look * 2).min(Duration::from_millis(500));
            }
        };
        Ok(self.handle(
            run_id,
            thread.to_string(),
            outcome.boxed(),
            stream,
            Vec::new(),
        ))
    }

    /// Whether the paused run `run_id` waits in a workflow: `false` for a
    /// run paused before the server moved to Temporal (its thread has no
    /// running workflow), which the built-in executor resumes. A
    /// sub-agent's run is refused: its decisions would carry its parent on
    /// outside the parent's workflow.
    pub async fn carries(&self, run_id: &str) -> Result<bool, StoreError> {
        let record = self.store.run(run_id).await?;
        let thread = self.store.thread(&record.thread_id).await?;
        if thread.parent_run_id.is_some() {
            return Err(sub_agent_refused(run_id));
        }
        let described = self
            .client
            .get_workflow_handle::<ThreadWorkflow>(record.thread_id)
            .describe(Default::default())
            .await;
        match described {
            Ok(d) => Ok(d.status() == temporalio_client::WorkflowExecutionStatus::Running),
            Err(temporalio_client::errors::WorkflowInteractionError::NotFound(_)) => Ok(false),
            Err(e) => Err(StoreError::Database(format!("temporal: {e}"))),
        }
    }

    /// Decides the paused run `run_id` by the Update of its thread's
    /// workflow; the validator refuses what the engine refuses (the
    /// handle's outcome is then [`ResumeError::Decision`], and the run
    /// still waits).
    pub async fn resume(
        &self,
        run_id: &str,
        decisions: Vec<Decision>,
        stream: bool,
    ) -> Result<RunHandle, StoreError> {
        let record = self.store.run(run_id).await?;
        if record.status != "requires_approval" {
            return Err(StoreError::Conflict(format!(
                "run {run_id} is {}, not waiting for decisions",
                record.status
            )));
        }
        // Calls a sub-agent waits on are listed with their own run: not
        // decided through a workflow (see `carries`).
        let paused = parlance_runtime::children::stored_response(&self.store, &record).await?;
        if decisions.iter().any(|d| {
            paused
                .pending
                .iter()
                .any(|p| p.tool_call_id == d.tool_call_id && p.run_id.is_some())
        }) {
            return Err(sub_agent_refused(run_id));
        }
        let before: Vec<Message> = match stream {
            true => paused.messages,
            false => Vec::new(),
        };
        let handle = self
            .client
            .get_workflow_handle::<ThreadWorkflow>(record.thread_id.clone());
        let decisions =
            serde_json::to_value(&decisions).map_err(|e| StoreError::Unstorable(e.to_string()))?;
        let store = self.store.clone();
        let outcome = async move {
            // The store shows a pause a moment before the workflow has
            // taken in its activity's result: asked again meanwhile.
            let started = std::time::Instant::now();
            let rest: Rest = loop {
                let answer = handle
                    .execute_update(
                        ThreadWorkflow::decide,
                        decisions.clone(),
                        WorkflowExecuteUpdateOptions::default(),
                    )
                    .await;
                match answer {
                    Err(WorkflowUpdateError::Failed(f))
                        if f.message == crate::workflow::NOT_YET
                            && started.elapsed() < Duration::from_secs(10) =>
                    {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    other => break other.map_err(update_error)?,
                }
            };
            let record = store.run(&rest.run_id).await?;
            parlance_runtime::children::stored_response(&store, &record)
                .await
                .map_err(ResumeError::Store)
        };
        Ok(self.handle(
            run_id.to_string(),
            record.thread_id,
            outcome.boxed(),
            stream,
            before,
        ))
    }

    fn handle(
        &self,
        run_id: String,
        thread_id: String,
        outcome: BoxFuture<'static, Result<Response, ResumeError>>,
        stream: bool,
        seen: Vec<Message>,
    ) -> RunHandle {
        let outcome = outcome.shared();
        let events: std::pin::Pin<Box<dyn Stream<Item = RunEvent> + Send>> = match stream {
            true => Box::pin(watch(
                self.store.clone(),
                run_id.clone(),
                outcome.clone(),
                seen,
            )),
            false => Box::pin(stream::empty()),
        };
        RunHandle::from_parts(run_id, thread_id, events, outcome)
    }

    /// A worker of this executor's task queue running `agents`, with the
    /// store it was connected with; a run that dies `max_attempts` times at
    /// the same step is given up. It polls until [`Worker::stop`].
    pub fn worker(&self, agents: AgentsByName, max_attempts: u32) -> Result<Worker, TemporalError> {
        let fail = |message: String| TemporalError {
            address: self.settings.address.clone(),
            message,
        };
        crate::registry::register(&self.settings.task_queue, Arc::clone(&agents));
        let runtime = Runtime::from_current_tokio(Default::default())
            .map_err(|e| fail(format!("the worker's runtime: {e}")))?;
        let options = WorkerOptions::new(&self.settings.task_queue)
            .register_workflow::<ThreadWorkflow>()
            .map_err(|e| fail(e.to_string()))?
            .register_activities(Steps::new(self.store.clone(), agents, max_attempts))
            .build();
        let mut worker = temporalio_sdk::Worker::new(&runtime, self.client.clone(), options)
            .map_err(|e| fail(format!("the worker: {e}")))?;
        let stop = worker.shutdown_handle();
        // The worker's loop is not `Send` (workflow code runs on one
        // thread): it runs on a thread of its own, in this runtime, so the
        // runs its activities start spread over the runtime's workers.
        let rt = tokio::runtime::Handle::current();
        let thread = std::thread::Builder::new()
            .name("parlance-temporal-worker".into())
            .spawn(move || {
                let _runtime = runtime;
                let local = tokio::task::LocalSet::new();
                if let Err(e) = rt.block_on(local.run_until(worker.run())) {
                    tracing::error!(error = %e, "the Temporal worker stopped");
                }
            })
            .map_err(|e| fail(format!("the worker's thread: {e}")))?;
        Ok(Worker {
            stop: Box::new(stop),
            thread: Some(thread),
        })
    }
}

/// A running worker.
pub struct Worker {
    stop: Box<dyn Fn() + Send + Sync>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Worker {
    /// Stops polling; returns once the tasks in hand finished (blocking:
    /// call it off the async workers).
    pub fn stop(mut self) {
        (self.stop)();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        (self.stop)();
    }
}

/// A run's events, read from the store: each message as it commits (a
/// message replaced in place, a resumed run's results, again), the pause,
/// the end.
fn watch(
    store: Store,
    run_id: String,
    outcome: Shared<BoxFuture<'static, Result<Response, ResumeError>>>,
    seen: Vec<Message>,
) -> impl Stream<Item = RunEvent> + Send {
    struct Watch {
        store: Store,
        run_id: String,
        outcome: Shared<BoxFuture<'static, Result<Response, ResumeError>>>,
        seen: Vec<Message>,
        queue: std::collections::VecDeque<RunEvent>,
        done: bool,
    }
    let w = Watch {
        store,
        run_id,
        outcome,
        seen,
        queue: Default::default(),
        done: false,
    };
    stream::unfold(w, |mut w| async move {
        loop {
            if let Some(e) = w.queue.pop_front() {
                return Some((e, w));
            }
            if w.done {
                return None;
            }
            let ended = tokio::select! {
                r = w.outcome.clone() => Some(r),
                _ = tokio::time::sleep(Duration::from_millis(100)) => None,
            };
            let turn = match w.store.run(&w.run_id).await {
                Ok(r) => w.store.run_turn(&r).await.unwrap_or_default(),
                Err(_) => Vec::new(),
            };
            for (i, m) in turn.into_iter().map(|m| m.message).enumerate() {
                if w.seen.get(i) != Some(&m) {
                    if i < w.seen.len() {
                        w.seen[i] = m.clone();
                    } else {
                        w.seen.push(m.clone());
                    }
                    w.queue.push_back(RunEvent::MessageCompleted(m));
                }
            }
            if let Some(r) = ended {
                w.done = true;
                if let Ok(r) = r {
                    if r.status == RunStatus::RequiresApproval {
                        w.queue
                            .push_back(RunEvent::ApprovalRequired(r.pending.clone()));
                    }
                    w.queue.push_back(RunEvent::RunCompleted(r));
                }
            }
        }
    })
}

fn sub_agent_refused(run_id: &str) -> StoreError {
    StoreError::Conflict(format!(
        "run {run_id}: a sub-agent's calls cannot be decided on the Temporal executor yet (docs/temporal.md): run agents that call agents on the built-in executor"
    ))
}

/// A workflow that failed before its run rested: the activity's reason.
fn refused(message: String) -> StoreError {
    StoreError::Conflict(message)
}

/// An Update refused by the validator is a refused decision (its message
/// is the engine's `path: message`); anything else, the store's side.
fn update_error(e: WorkflowUpdateError) -> ResumeError {
    match e {
        WorkflowUpdateError::Failed(failure) => {
            let Some(text) = failure.message.strip_prefix(crate::workflow::REFUSED) else {
                return ResumeError::Store(StoreError::Conflict(format!(
                    "temporal: {}",
                    failure.message
                )));
            };
            let (path, message) = text
                .split_once(": ")
                .map_or(("decisions".to_string(), text.to_string()), |(p, m)| {
                    (p.to_string(), m.to_string())
                });
            ResumeError::Decision(DecisionError { path, message })
        }
        WorkflowUpdateError::NotFound(_) => ResumeError::Store(StoreError::Conflict(
            "the run's workflow is not running: it is not waiting for decisions".into(),
        )),
        other => ResumeError::Store(StoreError::Database(format!("temporal: {other}"))),
    }
}
