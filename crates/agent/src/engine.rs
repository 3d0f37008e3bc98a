//! Running tool calls: validation first, then the function, with its
//! timeout, its panics caught, its failure turned into a result by the
//! exception policy; all calls of a turn concurrently, results in call order.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::FutureExt;
use futures::StreamExt;
use parlance_format::{Block, ToolCall, ToolResult, ToolSpec, ToolStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::tool::{Handler, Outcome, SharedError, Tool, ToolContext, ToolFailure};
use crate::validate::{ArgValidator, ArgumentProblem, SchemaError, problem_lines};

mod budget;
mod output;

pub use budget::{BudgetExceeded, InvalidArgumentsBudget};
pub(crate) use output::bytes;
use output::over_limit;

/// What the model learns when a tool fails unexpectedly (an error it did
/// not plan for, or a panic). `ToolError`s and invalid arguments always go
/// back to the model whatever this says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnToolException {
    /// The model sees the error's type and message (`tool_failed`), and
    /// the run goes on.
    #[default]
    ReturnToModel,
    /// The model only learns that the tool failed; the type and message
    /// go into the result's `artifact`, which is never sent to a model.
    ReturnGeneric,
    /// The run fails with `tool_failed`; the error is the cause.
    Fail,
}

/// The default time a tool call may take.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);

/// The default most a tool's result may hold: 1 MiB of JSON.
pub const DEFAULT_MAX_TOOL_OUTPUT: usize = 1024 * 1024;

/// How the calls of one turn are run.
#[derive(Debug, Clone)]
pub struct CallSettings {
    /// Time allowed per call, unless the tool sets its own.
    pub timeout: Duration,
    /// At most this many calls at once (`None`: all of them).
    pub concurrency: Option<usize>,
    /// What an unexpected failure becomes.
    pub on_tool_exception: OnToolException,
    /// The most a result may hold, in bytes of JSON, unless the tool sets
    /// its own.
    pub max_output: usize,
    /// The run's id, given to every tool context.
    pub run_id: Arc<str>,
    /// The thread's id, when the run is on one.
    pub thread_id: Option<Arc<str>>,
    /// Cancelled to stop the run; every call's token is a child of it.
    pub cancel: CancellationToken,
    /// Given to every tool context (see `Agent::with_deps`).
    pub deps: Option<crate::tool::Deps>,
    /// Where the run is kept, for agents used as tools: set by the run
    /// loop (opaque; leave `None` when calling the engine yourself).
    pub host: Option<crate::tool::Host>,
}

impl Default for CallSettings {
    fn default() -> Self {
        CallSettings {
            timeout: DEFAULT_TOOL_TIMEOUT,
            concurrency: None,
            on_tool_exception: OnToolException::default(),
            max_output: DEFAULT_MAX_TOOL_OUTPUT,
            run_id: Arc::from("run"),
            thread_id: None,
            cancel: CancellationToken::new(),
            deps: None,
            host: None,
        }
    }
}

/// Progress of the calls of a turn, reported as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolEvent {
    /// A call's function started (its arguments were valid).
    Started {
        /// Position of the call in the turn.
        index: usize,
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
    },
    /// A call ended, however it ended.
    Finished {
        /// Position of the call in the turn.
        index: usize,
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
        /// How it ended.
        status: ToolStatus,
        /// How long it took, validation included.
        elapsed: Duration,
    },
}

/// Receives [`ToolEvent`]s.
pub type EventSink = Arc<dyn Fn(&ToolEvent) + Send + Sync>;

/// The unexpected error behind a `tool_failed` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FailureCause {
    /// The tool.
    pub tool: String,
    /// The error's type (`panic` for a panic).
    pub error_type: String,
    /// Its message.
    pub message: String,
    /// The error itself, when the tool returned one (in memory only).
    #[serde(skip)]
    pub error: Option<SharedError>,
}

/// Equal when tool, type and message are (the error itself is not compared).
impl PartialEq for FailureCause {
    fn eq(&self, other: &Self) -> bool {
        (&self.tool, &self.error_type, &self.message)
            == (&other.tool, &other.error_type, &other.message)
    }
}

impl Eq for FailureCause {}

/// One call's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct CallReport {
    /// The result, as it goes into the conversation.
    pub result: ToolResult,
    /// For `tool_failed`: the original error (the run's cause under `fail`).
    pub cause: Option<FailureCause>,
    /// What an agent used as a tool spent (tokens, and dollars when
    /// priced): it rolls up into the calling run.
    pub spent: Option<(parlance_format::Usage, Option<f64>)>,
    /// The run of an agent used as a tool, when it waits for decisions:
    /// the call waits with it.
    pub waiting_on: Option<String>,
}

impl CallReport {
    fn new(result: ToolResult, cause: Option<FailureCause>) -> CallReport {
        CallReport {
            result,
            cause,
            spent: None,
            waiting_on: None,
        }
    }
}

/// Whether a call can run as it is.
#[derive(Debug)]
pub enum Check<'a> {
    /// No tool has that name.
    UnknownTool,
    /// The arguments break the schema: one line per problem.
    Invalid(Vec<String>),
    /// Valid; `needs_approval` says whether a human must decide first.
    Ready {
        /// The tool.
        tool: &'a Tool,
        /// Whether the call waits for a decision.
        needs_approval: bool,
    },
}

#[derive(Clone)]
struct Entry {
    tool: Tool,
    /// Shared with the tool boxes a toolset's tools are copied into.
    validator: Arc<ArgValidator>,
}

/// The tools an agent offers, with their compiled validators.
#[derive(Default)]
pub struct ToolBox {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    late_results: Arc<AtomicU64>,
}

impl std::fmt::Debug for ToolBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.tool.spec.name))
            .finish()
    }
}

/// Registering a tool failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolBoxError {
    /// The tool's input schema does not compile.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// Two tools share a name.
    #[error("two tools are named {0:?}")]
    Duplicate(String),
    /// The agent's context policy is out of range.
    #[error(transparent)]
    Context(#[from] crate::context::ContextError),
    /// The agent's budget has a limit that cannot be used.
    #[error(transparent)]
    Budget(#[from] crate::budget::BudgetError),
    /// A handoff that cannot be made (the message names it).
    #[error("{0}")]
    Handoff(String),
}

impl ToolBox {
    /// An empty tool box.
    pub fn new() -> Self {
        ToolBox::default()
    }

    /// Adds a tool, compiling its schema once.
    pub fn add(&mut self, tool: Tool) -> Result<(), ToolBoxError> {
        let name = tool.spec.name.clone();
        if self.by_name.contains_key(&name) {
            return Err(ToolBoxError::Duplicate(name));
        }
        let validator = Arc::new(ArgValidator::new(&name, &tool.spec.input_schema)?);
        self.by_name.insert(name, self.entries.len());
        self.entries.push(Entry { tool, validator });
        Ok(())
    }

    /// The names of the tools, in the order added.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.tool.spec.name.as_str())
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Copies `other`'s tool named `name` in as `rename` (its validator
    /// shared, nothing compiled again). False when the new name is taken.
    pub(crate) fn copy_from(&mut self, other: &ToolBox, name: &str, rename: &str) -> bool {
        let Some(&i) = other.by_name.get(name) else {
            return false;
        };
        if self.by_name.contains_key(rename) {
            return false;
        }
        let mut entry = other.entries[i].clone();
        entry.tool.spec.name = rename.to_string();
        self.by_name.insert(rename.to_string(), self.entries.len());
        self.entries.push(entry);
        true
    }

    /// What the model is told about every tool, in the order added.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.entries.iter().map(|e| e.tool.spec.clone()).collect()
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.entries[i].tool)
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many blocking calls finished after their timeout (their results
    /// were discarded and logged).
    pub fn late_results_discarded(&self) -> u64 {
        self.late_results.load(Ordering::Relaxed)
    }

    /// Checks a call: known tool, valid arguments, approval needed?
    pub fn check(&self, name: &str, call: &ToolCall, arguments: &Value) -> Check<'_> {
        let Some(&i) = self.by_name.get(name) else {
            return Check::UnknownTool;
        };
        let entry = &self.entries[i];
        if let Some(raw) = &call.raw_arguments
            && arguments.is_null()
        {
            let why = serde_json::from_str::<Value>(raw)
                .err()
                .map_or_else(|| "not valid JSON".to_string(), |e| e.to_string());
            return Check::Invalid(vec![format!("(arguments): not valid JSON: {why}")]);
        }
        let problems = entry.validator.problems(arguments);
        if !problems.is_empty() {
            return Check::Invalid(problems);
        }
        let needs_approval = entry
            .tool
            .needs_approval
            .as_ref()
            .is_some_and(|p| p(arguments));
        Check::Ready {
            tool: &entry.tool,
            needs_approval,
        }
    }

    /// Runs the calls of one turn concurrently (up to `settings.concurrency`
    /// at once) and returns their reports in call order, whatever order they
    /// finish in. Approval is not consulted here: pass only calls that may run.
    pub async fn run_calls(
        &self,
        calls: &[(&ToolCall, &Value)],
        settings: &CallSettings,
        events: Option<&EventSink>,
    ) -> Vec<CallReport> {
        // Boxed so that the future stays `Send` for any caller lifetime
        // (a known limit of the compiler with closures over references).
        let futures: Vec<futures::future::BoxFuture<'_, CallReport>> = calls
            .iter()
            .enumerate()
            .map(|(index, &(call, args))| {
                Box::pin(self.run_call(index, call, args, settings, events))
                    as futures::future::BoxFuture<'_, CallReport>
            })
            .collect();
        match settings.concurrency {
            None => futures::future::join_all(futures).await,
            Some(n) => {
                futures::stream::iter(futures)
                    .buffered(n.max(1))
                    .collect()
                    .await
            }
        }
    }

    /// Runs one call with the given arguments (the model's, or a reviewer's
    /// edit): validation, the function, its timeout, its failure policy.
    pub async fn run_call(
        &self,
        index: usize,
        call: &ToolCall,
        arguments: &Value,
        settings: &CallSettings,
        events: Option<&EventSink>,
    ) -> CallReport {
        let started = Instant::now();
        let span = crate::telemetry::tool_span(&call.name, &call.id, arguments);
        let report = self
            .run_call_now(index, call, arguments, settings, events)
            .instrument(span.clone())
            .await;
        let known = self.by_name.contains_key(&call.name);
        crate::telemetry::tool_ended(&span, &report.result, known, started.elapsed());
        report
    }

    async fn run_call_now(
        &self,
        index: usize,
        call: &ToolCall,
        arguments: &Value,
        settings: &CallSettings,
        events: Option<&EventSink>,
    ) -> CallReport {
        let started = Instant::now();
        let report = match self.check(&call.name, call, arguments) {
            Check::UnknownTool => {
                let names: Vec<&str> = self
                    .entries
                    .iter()
                    .map(|e| e.tool.spec.name.as_str())
                    .collect();
                let text = if names.is_empty() {
                    format!("unknown tool {:?}: no tools are available", call.name)
                } else {
                    format!(
                        "unknown tool {:?}; available tools: {}",
                        call.name,
                        names.join(", ")
                    )
                };
                plain(call, ToolStatus::Error, text)
            }
            Check::Invalid(problems) => invalid(call, &problems),
            Check::Ready { tool, .. } => {
                if let Some(sink) = events {
                    sink(&ToolEvent::Started {
                        index,
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                    });
                }
                let timeout = tool.timeout.unwrap_or(settings.timeout);
                let ctx = ToolContext {
                    run_id: settings.run_id.clone(),
                    thread_id: settings.thread_id.clone(),
                    call_id: Arc::from(call.id.as_str()),
                    cancel: settings.cancel.child_token(),
                    deadline: started + timeout,
                    deps: settings.deps.clone(),
                    host: settings.host.clone(),
                };
                let exec = execute(tool, arguments, ctx, timeout, &self.late_results).await;
                let limit = tool.max_output.unwrap_or(settings.max_output);
                finish(call, exec, timeout, settings.on_tool_exception, limit)
            }
        };
        if let Some(sink) = events {
            sink(&ToolEvent::Finished {
                index,
                call_id: call.id.clone(),
                name: call.name.clone(),
                status: report.result.status,
                elapsed: started.elapsed(),
            });
        }
        report
    }
}

/// How the function's run ended.
enum Exec {
    Done(Outcome),
    /// An agent used as a tool ended (see [`crate::tool::Delegated`]).
    Delegated(crate::tool::Delegated),
    /// The timeout passed; `stopped`: the call's work stopped with it (an
    /// async tool's dropped future), else it was only told to stop.
    TimedOut {
        stopped: bool,
    },
}

/// Valid against the schema, refused by the tool's own check (here: the
/// Rust argument type's deserializer; a binding's check reports the same
/// failure from inside the call).
/// Starts a tool's future and awaits it within `timeout`, a panic in
/// either step the call's failure: its output, `None` when the time ran
/// out (the call's token cancelled), or what the call ends as.
async fn guarded<F: std::future::Future>(
    start: impl FnOnce() -> Result<F, Vec<ArgumentProblem>>,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<Option<F::Output>, Exec> {
    let fut = match std::panic::catch_unwind(AssertUnwindSafe(start)) {
        Ok(Ok(fut)) => fut,
        Ok(Err(problems)) => return Err(refused(problems)),
        Err(payload) => return Err(Exec::Done(Err(panic_failure(payload)))),
    };
    match tokio::time::timeout(timeout, AssertUnwindSafe(fut).catch_unwind()).await {
        Ok(Ok(output)) => Ok(Some(output)),
        Ok(Err(payload)) => Err(Exec::Done(Err(panic_failure(payload)))),
        Err(_) => {
            cancel.cancel();
            Ok(None)
        }
    }
}

fn refused(problems: Vec<ArgumentProblem>) -> Exec {
    Exec::Done(Err(ToolFailure::InvalidArguments(problems)))
}

fn panic_failure(payload: Box<dyn std::any::Any + Send>) -> ToolFailure {
    ToolFailure::unexpected("panic", parlance_model::panic_message(&*payload))
}

async fn execute(
    tool: &Tool,
    args: &Value,
    ctx: ToolContext,
    timeout: Duration,
    late: &Arc<AtomicU64>,
) -> Exec {
    let cancel = ctx.cancel.clone();
    match &tool.handler {
        // On timeout the future is dropped: the call is cancelled (unless
        // the tool said its work runs elsewhere).
        Handler::Async(f) => match guarded(|| f(args, ctx), timeout, &cancel).await {
            Ok(Some(outcome)) => Exec::Done(outcome),
            Ok(None) => Exec::TimedOut {
                stopped: tool.stops_at_timeout(),
            },
            Err(exec) => exec,
        },
        // On timeout the sub-agent's run is dropped: stopped, its own
        // calls cancelled.
        Handler::Delegate(f) => match guarded(|| f(args, ctx), timeout, &cancel).await {
            Ok(Some(d)) => Exec::Delegated(d),
            Ok(None) => Exec::TimedOut { stopped: true },
            Err(exec) => exec,
        },
        Handler::Blocking(f) => {
            let job = match std::panic::catch_unwind(AssertUnwindSafe(|| f(args))) {
                Ok(Ok(job)) => job,
                Ok(Err(problems)) => return refused(problems),
                Err(payload) => return Exec::Done(Err(panic_failure(payload))),
            };
            let (tx, rx) = tokio::sync::oneshot::channel();
            let name = tool.spec.name.clone();
            let call_id = ctx.call_id.clone();
            let late = Arc::clone(late);
            tokio::task::spawn_blocking(move || {
                let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| job(ctx))) {
                    Ok(outcome) => outcome,
                    Err(payload) => Err(panic_failure(payload)),
                };
                // The receiver is gone when the call timed out: a blocking
                // thread cannot be stopped, so its late result is dropped.
                if tx.send(outcome).is_err() {
                    late.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(tool = %name, call_id = %call_id, "blocking tool finished after its timeout; result discarded");
                }
            });
            match tokio::time::timeout(timeout, rx).await {
                Ok(Ok(outcome)) => Exec::Done(outcome),
                Ok(Err(_)) => Exec::Done(Err(ToolFailure::unexpected(
                    "panic",
                    "the worker thread ended without a result",
                ))),
                Err(_) => {
                    cancel.cancel();
                    Exec::TimedOut { stopped: false }
                }
            }
        }
    }
}

fn result(call: &ToolCall, status: ToolStatus, content: Vec<Block>) -> ToolResult {
    ToolResult {
        tool_call_id: call.id.clone(),
        name: Some(call.name.clone()),
        content,
        status,
        artifact: None,
        approval: None,
    }
}

fn plain(call: &ToolCall, status: ToolStatus, text: String) -> CallReport {
    CallReport::new(result(call, status, vec![Block::text(text)]), None)
}

fn invalid(call: &ToolCall, problems: &[String]) -> CallReport {
    let text = format!(
        "Invalid arguments for {}:\n{}",
        call.name,
        problems.join("\n")
    );
    plain(call, ToolStatus::InvalidArguments, text)
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s}s")
    }
}

/// A timeout's result says what happened to the work: cancelled, or told
/// to stop and possibly still running (a blocking or detached tool, whose
/// side effects may still happen). The artifact (kept with the thread,
/// never sent to a model) records the same for operators.
fn timed_out(call: &ToolCall, timeout: Duration, stopped: bool) -> CallReport {
    let after = seconds(timeout);
    let text = if stopped {
        format!("{} timed out after {after} and was cancelled", call.name)
    } else {
        format!(
            "{} timed out after {after}; it was told to stop but may still be running, and its result will be discarded",
            call.name
        )
    };
    let mut report = plain(call, ToolStatus::Timeout, text);
    report.result.artifact = Some(json!({
        "timeout": {
            "after_ms": u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            "stopped": stopped,
        }
    }));
    report
}

fn finish(
    call: &ToolCall,
    exec: Exec,
    timeout: Duration,
    policy: OnToolException,
    max_output: usize,
) -> CallReport {
    match exec {
        Exec::Delegated(d) => {
            let mut report = finish(call, Exec::Done(d.outcome), timeout, policy, max_output);
            report.spent = d.spent;
            report.waiting_on = d.waiting_on;
            report
        }
        Exec::Done(Ok(content)) => {
            if let Some(size) = over_limit(&content, max_output) {
                tracing::warn!(tool = %call.name, call_id = %call.id, size, limit = max_output, "tool output over its limit was dropped");
                return plain(
                    call,
                    ToolStatus::Error,
                    format!(
                        "{} returned {}, more than its output limit of {}; the output was dropped",
                        call.name,
                        bytes(size),
                        bytes(max_output)
                    ),
                );
            }
            CallReport::new(result(call, ToolStatus::Ok, content), None)
        }
        Exec::Done(Err(ToolFailure::Tool(e))) => {
            plain(call, ToolStatus::Error, e.message().to_string())
        }
        Exec::Done(Err(ToolFailure::InvalidArguments(problems))) => {
            invalid(call, &problem_lines(&problems))
        }
        Exec::Done(Err(ToolFailure::Unexpected {
            error_type,
            message,
            error,
        })) if error_type == crate::tool::SERVER_RESOURCES => {
            // The process's fault, not the tool's: nothing for a model to
            // read; the run stops (see `SERVER_RESOURCES`).
            let mut report = plain(
                call,
                ToolStatus::Interrupted,
                format!(
                    "{} was not run: the server ran out of resources ({message})",
                    call.name
                ),
            );
            report.cause = Some(FailureCause {
                tool: call.name.clone(),
                error_type,
                message,
                error,
            });
            report
        }
        Exec::Done(Err(ToolFailure::Unexpected {
            error_type,
            message,
            error,
        })) => {
            let cause = FailureCause {
                tool: call.name.clone(),
                error_type,
                message,
                error,
            };
            let mut r = match policy {
                OnToolException::ReturnToModel | OnToolException::Fail => result(
                    call,
                    ToolStatus::ToolFailed,
                    vec![Block::text(format!(
                        "{} failed: {}: {}",
                        call.name, cause.error_type, cause.message
                    ))],
                ),
                OnToolException::ReturnGeneric => result(
                    call,
                    ToolStatus::ToolFailed,
                    vec![Block::text(format!("{} failed.", call.name))],
                ),
            };
            if policy == OnToolException::ReturnGeneric {
                r.artifact =
                    Some(json!({"error_type": cause.error_type, "message": cause.message}));
            }
            CallReport::new(r, Some(cause))
        }
        Exec::TimedOut { stopped } => timed_out(call, timeout, stopped),
    }
}
