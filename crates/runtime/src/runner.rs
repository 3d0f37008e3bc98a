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
    Agent, Checkpoint, CheckpointError, DecisionError, Resume, RunEvent, RunStream, Screened, Step,
    ThreadSpend,
};
use parlance_format::{Decision, Message, Response, Role, RunError, RunStatus, Turn};
use tokio::task::JoinHandle;

use parlance_store::{ActiveRun, Store, StoreError, Takeover};

/// Commits each step of a run to the store as it completes.
///
/// All but one: the model's final answer (an assistant message with no
/// tool call) is the run's last step, and nothing but the run's outcome
/// follows it (the agent returns at once). It is held and written with
/// the outcome, in one transaction ([`Store::finish_with`]): one write
/// fewer per run, and a process that dies leaves both or neither, never
/// an answer stored for a run that did not end. Should another step come
/// after it, the held answer is written first, with that step.
struct StoreCheckpoint {
    store: Store,
    run: ActiveRun,
    held: std::sync::Mutex<Option<Message>>,
}

impl StoreCheckpoint {
    fn new(store: &Store, run: &ActiveRun) -> StoreCheckpoint {
        StoreCheckpoint {
            store: store.clone(),
            run: run.clone(),
            held: Default::default(),
        }
    }

    /// The held final answer, if any: to be written with the outcome.
    fn take_held(&self) -> Option<Message> {
        self.held.lock().expect("not poisoned").take()
    }

    /// Whether `m` ends the run: an assistant message that calls no tool.
    fn is_final(m: &Message) -> bool {
        m.role == Role::Assistant && m.tool_calls().next().is_none()
    }
}

impl StoreCheckpoint {
    async fn keep(&self, step: Step<'_>) -> Result<(), StoreError> {
        let held = self.take_held();
        match step {
            Step::Append(m) if Self::is_final(m) => {
                if let Some(earlier) = held {
                    self.store.append(&self.run, &[earlier]).await?;
                }
                *self.held.lock().expect("not poisoned") = Some(m.clone());
                Ok(())
            }
            Step::Append(m) => match held {
                None => self.store.append(&self.run, std::slice::from_ref(m)).await,
                Some(earlier) => self.store.append(&self.run, &[earlier, m.clone()]).await,
            }
            .map(drop),
            Step::ReplaceLast(m) => {
                if let Some(earlier) = held {
                    self.store.append(&self.run, &[earlier]).await?;
                }
                self.store.replace_last(&self.run, m).await
            }
        }
    }
}

impl Checkpoint for StoreCheckpoint {
    fn commit<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async move { self.keep(step).await.map_err(CheckpointError::new) })
    }

    /// What the ledger counted for the thread and its owner (a held final
    /// answer is the run's last step: no model call follows it).
    fn spent(&self) -> BoxFuture<'_, Result<Option<ThreadSpend>, CheckpointError>> {
        Box::pin(async move {
            let s = self
                .store
                .spent(&self.run.thread_id)
                .await
                .map_err(CheckpointError::new)?;
            Ok(Some(s))
        })
    }

    /// A sub-agent's run is kept on the store too, on its own thread
    /// (see [`crate::children`]).
    fn run_child<'a>(
        &'a self,
        child: parlance_agent::ChildRun<'a>,
    ) -> Option<parlance_agent::ChildOutcome<'a>> {
        Some(Box::pin(async move {
            crate::children::child_run(&self.store, &self.run, child)
                .await
                .map_err(CheckpointError::new)
        }))
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

/// A dead run that was not carried on, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TakenOver {
    /// It died after its decisions were taken: it waits for them again.
    Waiting,
    /// It died too many times at the same step: marked failed.
    GaveUp {
        /// Takeovers at that step.
        attempts: u32,
    },
    /// Another process took it, it ended, or it is alive.
    Gone,
}

impl TakenOver {
    /// Why the run `run` was not carried on, as a store error (a
    /// conflict: the run is not in the state asked for).
    pub fn into_error(self, run: &str) -> StoreError {
        StoreError::Conflict(match self {
            TakenOver::Waiting => format!(
                "run {run} died after its decisions were taken, before its calls committed: it waits for decisions again"
            ),
            TakenOver::GaveUp { attempts } => format!(
                "run {run} died {attempts} times at the same step: it was given up (failed, interrupted)"
            ),
            TakenOver::Gone => format!(
                "run {run} is not a dead run: it is alive, it ended, or another process took it over"
            ),
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

/// A run that was started on a thread and goes on by itself.
pub struct RunHandle {
    /// The run's id (readable later with [`Store::run`]).
    pub run_id: String,
    /// Its thread.
    pub thread_id: String,
    /// For a streamed run, the position of its log ([`Store::log_after`])
    /// when this part of it started: its `message` events take the next
    /// positions, one each, in order (each is one committed write).
    /// `None` when the run does not stream or the store could not say.
    pub log_start: Option<u64>,
    events: mpsc::UnboundedReceiver<RunEvent>,
    outcome: JoinHandle<Result<Response, ResumeError>>,
}

impl RunHandle {
    /// A run another executor carries (a Temporal worker): its events and
    /// its outcome as that executor reports them, each in a task of its
    /// own, so the handle behaves as one of this crate's (dropping it
    /// stops neither).
    pub fn from_parts(
        run_id: String,
        thread_id: String,
        events: impl Stream<Item = RunEvent> + Send + 'static,
        outcome: impl Future<Output = Result<Response, ResumeError>> + Send + 'static,
    ) -> RunHandle {
        let (tx, rx) = mpsc::unbounded();
        tokio::spawn(events.map(Ok).forward(tx));
        RunHandle {
            run_id,
            thread_id,
            log_start: None,
            events: rx,
            outcome: tokio::spawn(outcome),
        }
    }

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

    /// The run's events and its outcome, apart: a stream that ends
    /// without `RunCompleted` (a refused resume: nothing ran) has its
    /// reason in the outcome.
    pub fn split(
        self,
    ) -> (
        impl Stream<Item = RunEvent> + Send + 'static,
        impl Future<Output = Result<Response, ResumeError>> + Send + 'static,
    ) {
        let outcome = self.outcome;
        (self.events, async move {
            outcome.await.unwrap_or_else(|e| {
                Err(StoreError::Database(format!("the run's task ended abnormally: {e}")).into())
            })
        })
    }
}

/// Runs an agent on threads of a store.
#[derive(Clone)]
pub struct ThreadRunner {
    store: Store,
    agent: Agent,
    /// The agents of runs by name: a sub-agent's run decided apart from
    /// its parent then carries its parent on (see [`ThreadRunner::with_agents`]).
    agents: Option<AgentsByName>,
    /// The id of the next run it claims, when the caller chose it.
    run_id: Option<String>,
}

/// Finds an agent by name (a run's `settings.name`), as a server knows
/// its configured agents.
pub type AgentsByName = Arc<dyn Fn(&str) -> Option<Agent> + Send + Sync>;

/// What a spawned run does once its thread is claimed.
enum Work {
    /// A new run: its thread's history (its input is stored with the claim).
    Run {
        history: Vec<Message>,
        input: Vec<Message>,
        /// What the input guardrails made of it, before it was stored
        /// (boxed: rare, and large).
        screened: Option<Box<Result<Screened, RunError>>>,
    },
    /// A retry of the thread's failed run: the thread's history.
    Retry(Vec<Message>),
    /// A dead run taken over: the thread's history, repaired.
    CarryOn(Vec<Message>),
    Resume {
        earlier: Vec<Message>,
        paused: Box<Response>,
        decisions: Vec<Decision>,
    },
}

impl ThreadRunner {
    /// An agent working on a store's threads.
    pub fn new(store: Store, agent: Agent) -> Self {
        ThreadRunner {
            store,
            agent,
            agents: None,
            run_id: None,
        }
    }

    /// The new run it starts ([`ThreadRunner::start`],
    /// [`ThreadRunner::start_retry`]) gets the id `run_id` instead of a new
    /// one; a run of that id existing already is refused (a conflict), so
    /// an executor that names its run before starting it (a Temporal
    /// workflow retrying its first step) never starts it twice.
    pub fn with_run_id(mut self, run_id: impl Into<String>) -> Self {
        self.run_id = Some(run_id.into());
        self
    }

    /// With the agents of runs by name: a sub-agent's run (an agent used
    /// as a tool) that this runner resumes to its end carries on its
    /// waiting parent, run by the parent's own agent, found here by name
    /// ([`crate::children::resume_parent`]). Without them, decide a
    /// sub-agent's calls through its parent's run.
    pub fn with_agents(mut self, agents: AgentsByName) -> Self {
        self.agents = Some(agents);
        self
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
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
        let agent = self.agent.clone();
        let run_id = self.run_id.clone();
        let claim = async move {
            // Screened before it is stored: what an input guardrail
            // redacts never reaches the store.
            let screened = match agent.screens_input() {
                false => None,
                true => Some(Box::new(
                    agent.screen_input(input.clone(), Some(&thread)).await,
                )),
            };
            let stored = match screened.as_deref() {
                Some(Ok(s)) => s.input(),
                _ => &input,
            };
            let claim = store
                .claim_thread_as(run_id.as_deref(), &thread, &settings, stored, true)
                .await?;
            let work = Work::Run {
                history: claim.history,
                input,
                screened,
            };
            Ok((claim.run, work))
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
        let run_id = self.run_id.clone();
        self.spawn(
            async move {
                check_retry(&store, &thread).await?;
                let claim = store
                    .claim_thread_as(run_id.as_deref(), &thread, &settings, &[], true)
                    .await?;
                Ok((claim.run, Work::Retry(claim.history)))
            },
            stream,
        )
        .await
    }

    /// Takes over the dead run `run_id` ([`Store::take_over`]: `mine`,
    /// `max_attempts` as there) and carries it on in its own task from its
    /// last committed step (with `stream`, the handle's events report its
    /// progress): a handle when it runs, `Err` with what became of it
    /// otherwise ([`TakenOver`]).
    pub async fn take_over(
        &self,
        run_id: &str,
        mine: bool,
        max_attempts: u32,
        stream: bool,
    ) -> Result<Result<RunHandle, TakenOver>, StoreError> {
        let (store, run_id) = (self.store.clone(), run_id.to_string());
        let (not_run, why) = tokio::sync::oneshot::channel();
        let started = self
            .spawn(
                async move {
                    match store.take_over(&run_id, mine, max_attempts).await? {
                        Takeover::Claimed { run, history, .. } => Ok((run, Work::CarryOn(history))),
                        other => {
                            let _ = not_run.send(other);
                            Err(StoreError::Conflict(format!(
                                "run {run_id} was not taken over"
                            )))
                        }
                    }
                },
                stream,
            )
            .await;
        match (started, why.await) {
            (Ok(handle), _) => Ok(Ok(handle)),
            (Err(_), Ok(Takeover::Waiting)) => Ok(Err(TakenOver::Waiting)),
            (Err(_), Ok(Takeover::GaveUp { attempts })) => Ok(Err(TakenOver::GaveUp { attempts })),
            (Err(_), Ok(_)) => Ok(Err(TakenOver::Gone)),
            (Err(e), Err(_)) => Err(e),
        }
    }

    /// Applies decisions to the run waiting on them — from any process:
    /// everything needed is in the store. The resumed run is detached like
    /// a new one. Decisions on calls a sub-agent waits on (listed in this
    /// run's pending list) resume the sub-agent, then this run once the
    /// sub-agent has finished (see [`crate::children`]).
    pub async fn resume(
        &self,
        run_id: &str,
        decisions: Vec<Decision>,
    ) -> Result<Response, ResumeError> {
        if let Some(r) = self.resume_children(run_id, &decisions).await? {
            return Ok(r);
        }
        self.resume_own(run_id, decisions).await
    }

    /// [`ThreadRunner::resume`] with this run's own decisions only.
    pub(crate) async fn resume_own(
        &self,
        run_id: &str,
        decisions: Vec<Decision>,
    ) -> Result<Response, ResumeError> {
        self.start_resume_own(run_id, decisions, false)
            .await?
            .outcome()
            .await
    }

    /// Claims a paused run and resumes it in its own task. Refused
    /// decisions come back from the handle's outcome (the run still waits).
    /// Decisions for a sub-agent are taken as [`ThreadRunner::resume`]
    /// takes them, before this returns; the handle then reports only the
    /// outcome.
    pub async fn start_resume(
        &self,
        run_id: &str,
        decisions: Vec<Decision>,
        stream: bool,
    ) -> Result<RunHandle, StoreError> {
        match self.resume_children(run_id, &decisions).await {
            Ok(None) => self.start_resume_own(run_id, decisions, stream).await,
            Err(ResumeError::Store(e)) => Err(e),
            done => {
                let (tx, events) = mpsc::unbounded();
                if let Ok(Some(r)) = &done {
                    let _ = tx.unbounded_send(RunEvent::RunCompleted(r.clone()));
                }
                let thread_id = match &done {
                    Ok(Some(r)) => r.thread_id.clone().unwrap_or_default(),
                    _ => String::new(),
                };
                let outcome = tokio::spawn(async move { done.map(|r| r.expect("routed")) });
                Ok(RunHandle {
                    run_id: run_id.to_string(),
                    thread_id,
                    log_start: None,
                    events,
                    outcome,
                })
            }
        }
    }

    async fn start_resume_own(
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
        let agents = self.agents.clone();
        let outcome = tokio::spawn(async move {
            let (run, work) = match claim.await {
                Ok((mut run, work)) => {
                    // An agent with thread or owner limits: the store
                    // counts what each step spends, with the step.
                    run.count_spend = agent.budget().is_some_and(|b| b.counts_in_store());
                    let log_start = match &tx {
                        Some(_) => log_start(&store, &run).await,
                        None => None,
                    };
                    let _ = claimed.send(Ok((run.clone(), log_start)));
                    (run, work)
                }
                Err(e) => {
                    let _ = claimed.send(Err(e.clone()));
                    return Err(e.into());
                }
            };
            let _beat = Heartbeat::start(store.clone(), run.clone());
            let resumed = matches!(work, Work::Resume { .. });
            let checkpoint = Arc::new(StoreCheckpoint::new(&store, &run));
            let mut result = execute(&store, &agent, &checkpoint, work, tx.as_ref()).await;
            // A call waiting on a sub-agent lists the sub-agent's calls.
            if let Ok(r) = &mut result
                && r.pending.iter().any(|p| p.run_id.is_some())
            {
                match crate::children::pending(&store, &r.messages).await {
                    Ok(p) => r.pending = p,
                    Err(e) => {
                        tracing::warn!(run = %run.id, error = %e, "the sub-agents' waiting calls could not be read: the run lists its own")
                    }
                }
            }
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
                        // Leave no run holding the thread after a store
                        // failure (with its final answer, if one is held).
                        let held: Vec<Message> = checkpoint.take_held().into_iter().collect();
                        let failed = failed_response(&run, e);
                        let _ = store.finish_with(&run, &held, &failed).await;
                    }
                    failed_response(&run, e)
                }
            };
            if let Some(tx) = &tx {
                let _ = tx.unbounded_send(RunEvent::RunCompleted(response));
            }
            if let (true, Some(agents), Ok(r)) = (resumed, &agents, &result)
                && r.status != RunStatus::RequiresApproval
            {
                carry_parent_on(&store, &run.thread_id, agents).await;
            }
            result
        });
        let (active, log_start) = on_claim.await.map_err(|_| {
            StoreError::Database("the run's task ended before it claimed its thread".into())
        })??;
        Ok(RunHandle {
            run_id: active.id,
            thread_id: active.thread_id,
            log_start,
            events,
            outcome,
        })
    }
}

/// A sub-agent's run on `thread` ended after a resume: its waiting parent
/// (if any) goes on, with its own agent (by name), in a task of its own.
async fn carry_parent_on(store: &Store, thread: &str, agents: &AgentsByName) {
    let parent = match crate::children::waiting_parent(store, thread).await {
        Ok(Some(p)) => p,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(thread, error = %e, "a sub-agent's parent could not be read");
            return;
        }
    };
    let Some(agent) = parent.settings["name"].as_str().and_then(|n| agents(n)) else {
        tracing::warn!(run = %parent.id, "a sub-agent's parent waits, and its agent is not known here: decide through the parent's run");
        return;
    };
    let runner = ThreadRunner::new(store.clone(), agent).with_agents(Arc::clone(agents));
    let thread = thread.to_string();
    tokio::spawn(async move {
        if let Err(e) = crate::children::carry_on_parent(runner, &thread).await {
            tracing::warn!(run = %parent.id, error = %e, "a sub-agent's parent did not go on");
        }
    });
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
        cost: parlance_format::total_cost(this_run.iter().map(|m| &m.message)),
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

/// The body of a spawned run: the agent's work, then its outcome stored
/// (with its final answer, which `checkpoint` held back for it).
async fn execute(
    store: &Store,
    agent: &Agent,
    checkpoint: &Arc<StoreCheckpoint>,
    work: Work,
    tx: Option<&mpsc::UnboundedSender<RunEvent>>,
) -> Result<Response, ResumeError> {
    let run = &checkpoint.run;
    let steps: Arc<dyn Checkpoint> = checkpoint.clone();
    let (response, final_answer) = match work {
        Work::Run {
            history,
            input,
            screened,
        } => {
            let mut builder = agent.run(input);
            if let Some(s) = screened {
                builder = builder.screened(*s);
            }
            let run = builder
                .turns([Turn { messages: history }])
                .id(&run.id)
                .thread(&run.thread_id)
                .checkpoint(steps);
            match tx {
                None => (run.await, None),
                Some(tx) => forward(run.stream(), tx).await?,
            }
        }
        Work::CarryOn(history) => {
            let carry_on = agent
                .carry_on([Turn { messages: history }])
                .id(&run.id)
                .thread(&run.thread_id)
                .checkpoint(steps);
            match tx {
                None => (carry_on.await, None),
                Some(tx) => forward(carry_on.stream(), tx).await?,
            }
        }
        Work::Retry(history) => {
            let retry = agent
                .retry([Turn { messages: history }])
                .id(&run.id)
                .thread(&run.thread_id)
                .checkpoint(steps);
            match tx {
                None => (retry.await, None),
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
                .checkpoint(steps);
            match tx {
                None => (resume.await?, None),
                Some(tx) => forward(resume.stream()?, tx).await?,
            }
        }
    };
    let held: Vec<Message> = checkpoint.take_held().into_iter().collect();
    store.finish_with(run, &held, &response).await?;
    if let (Some(tx), Some(event)) = (tx, final_answer) {
        let _ = tx.unbounded_send(event);
    }
    Ok(response)
}

/// Passes a run's events on (to nobody, once the listener is gone) and
/// keeps its final response back: `RunCompleted` is sent once stored.
/// So is the final answer's `message` event: the checkpoint holds the
/// answer back to write it with the outcome, and an event names only
/// what is stored (returned here, sent by the caller after the outcome).
async fn forward(
    mut events: RunStream,
    tx: &mpsc::UnboundedSender<RunEvent>,
) -> Result<(Response, Option<RunEvent>), StoreError> {
    let mut held = None;
    while let Some(e) = events.next().await {
        match e {
            RunEvent::RunCompleted(r) => return Ok((r, held)),
            RunEvent::MessageCompleted(m) if StoreCheckpoint::is_final(&m) => {
                // Another step after it would have written it first.
                if let Some(earlier) = held.replace(RunEvent::MessageCompleted(m)) {
                    let _ = tx.unbounded_send(earlier);
                }
            }
            other => {
                if let Some(earlier) = held.take() {
                    let _ = tx.unbounded_send(earlier);
                }
                let _ = tx.unbounded_send(other);
            }
        }
    }
    Err(StoreError::Database(
        "the run ended without an outcome".into(),
    ))
}

/// Where a streamed run's log stands as it starts (`None`, and events
/// without positions, should the store not say).
async fn log_start(store: &Store, run: &ActiveRun) -> Option<u64> {
    match store.log_position(&run.thread_id, &run.id).await {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!(run = %run.id, error = %e, "could not read where the run's log stands: its events go without positions");
            None
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
        cost: None,
        finish_reason: None,
        pending: Vec::new(),
        error: Some(parlance_format::RunError::new("store", e.to_string())),
    }
}
