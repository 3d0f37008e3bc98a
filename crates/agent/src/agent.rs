//! The run loop: call the model, run its tool calls, feed the results
//! back, until the model stops, a limit is hit, or a call waits for a
//! human's decision.

mod retry;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::channel::mpsc;
use futures::{Stream, StreamExt};
use parlance_format::{
    Approval, ApprovalRequest, Block, Decision, DecisionKind, FinishReason, Message, Response,
    Role, RunError, RunStatus, ToolCall, ToolResult, ToolSpec, ToolStatus, Turn, Usage,
};
use parlance_model::{
    IntoModel, Model, ModelError, ModelOptions, ModelRequest, OutputSchema, StreamEvent,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::engine::{
    CallSettings, Check, EventSink, InvalidArgumentsBudget, OnToolException, ToolBox, ToolEvent,
};
use crate::tool::Deps;
use crate::validate::ArgValidator;
use crate::{DEFAULT_TOOL_TIMEOUT, Tool, ToolBoxError};

/// Limits and policies of an agent's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Model calls allowed in one run.
    pub max_model_calls: u32,
    /// Calls with invalid arguments tolerated in one run (tools may set their own).
    pub max_invalid_arguments: u32,
    /// Time a tool call may take, unless the tool sets its own.
    pub tool_timeout: Duration,
    /// Tool calls of one turn run at once (`None`: all).
    pub tool_concurrency: Option<usize>,
    /// What an unexpected tool failure becomes.
    pub on_tool_exception: OnToolException,
    /// The most a tool's result may hold, in bytes of JSON (default 1 MiB;
    /// tools may set their own). Beyond it the result is replaced by a
    /// short error the model reads; nothing huge is kept.
    pub max_tool_output: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_model_calls: 10,
            max_invalid_arguments: 3,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            tool_concurrency: None,
            on_tool_exception: OnToolException::ReturnToModel,
            max_tool_output: crate::engine::DEFAULT_MAX_TOOL_OUTPUT,
        }
    }
}

/// What a run starts from.
#[derive(Debug, Clone, Default)]
pub struct RunInput {
    /// The new messages (usually one user message).
    pub input: Vec<Message>,
    /// Earlier turns; only their `messages` reach the model, in order.
    pub turns: Vec<Turn>,
    /// The run's id (one is made up when missing).
    pub run_id: Option<String>,
    /// The thread the run belongs to, if any.
    pub thread_id: Option<String>,
}

impl RunInput {
    /// A run from one user message.
    pub fn text(text: impl Into<String>) -> Self {
        RunInput {
            input: vec![Message::user(text)],
            ..Default::default()
        }
    }

    /// Adds earlier turns.
    pub fn with_turns(mut self, turns: Vec<Turn>) -> Self {
        self.turns = turns;
        self
    }
}

/// Resuming a run that waits for decisions.
#[derive(Debug, Clone)]
pub struct Resume {
    /// The turns before the paused one (as in its [`RunInput`]).
    pub turns: Vec<Turn>,
    /// The paused run's response (status `requires_approval`), as returned or stored.
    pub paused: Response,
    /// One decision per call being decided now; calls left out stay pending.
    pub decisions: Vec<Decision>,
}

/// A decision was refused; nothing ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DecisionError {
    /// Where (`decisions[1].digest`, `paused.status`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn refuse(path: impl Into<String>, message: impl Into<String>) -> DecisionError {
    DecisionError {
        path: path.into(),
        message: message.into(),
    }
}

/// A step of a run, as it completes.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// A message was added (an assistant message, a tool message).
    Append(&'a Message),
    /// The last message was replaced (a tool message whose approval
    /// requests were decided).
    ReplaceLast(&'a Message),
}

/// Receives each step of a run as it completes, so that it can be stored
/// atomically (a thread store commits each one). An error fails the run
/// with code `store`.
pub trait Checkpoint: Send + Sync {
    /// Keeps one step.
    fn commit<'a>(&'a self, step: Step<'a>) -> futures::future::BoxFuture<'a, Result<(), String>>;
}

/// What a streamed run reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// More answer text.
    TextDelta(String),
    /// More reasoning text.
    ThinkingDelta(String),
    /// A message was added to the run (assistant or tool).
    MessageCompleted(Message),
    /// A tool call started running.
    ToolCallStarted {
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
    },
    /// A tool call ended.
    ToolCallFinished {
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
        /// How it ended.
        status: ToolStatus,
        /// How long it took.
        elapsed: Duration,
    },
    /// The run stopped to wait for these decisions.
    ApprovalRequired(Vec<ApprovalRequest>),
    /// The run ended (any status); always the last event.
    RunCompleted(Response),
}

struct Inner {
    name: Option<String>,
    model: Arc<dyn Model>,
    instructions: Option<String>,
    tools: ToolBox,
    specs: Arc<[ToolSpec]>,
    limits: Limits,
    options: ModelOptions,
    output: Option<ArgValidator>,
    approval_key: Option<Arc<[u8]>>,
}

/// A model, instructions, tools and limits. Cheap to clone.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
    deps: Option<Deps>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.inner.model.model_id())
            .field("tools", &self.inner.tools)
            .field("limits", &self.inner.limits)
            .finish()
    }
}

/// Builds an [`Agent`].
pub struct AgentBuilder {
    name: Option<String>,
    model: Arc<dyn Model>,
    instructions: Option<String>,
    tools: Vec<Tool>,
    limits: Limits,
    options: ModelOptions,
    approval_key: Option<Arc<[u8]>>,
}

impl AgentBuilder {
    /// Signs the digests of calls waiting for approval with this key
    /// (HMAC, bound to the run's id): decisions can then be made only for
    /// calls this agent paused on, in that run. A server passes its secret.
    pub fn approval_key(mut self, key: impl Into<Arc<[u8]>>) -> Self {
        self.approval_key = Some(key.into());
        self
    }

    /// A name, recorded with each run (so a server can resume it).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The system instructions.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Offers a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Limits and policies.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Model options (sampling, reasoning, tool choice...).
    pub fn options(mut self, options: ModelOptions) -> Self {
        self.options = options;
        self
    }

    /// The final answer must be JSON satisfying `schema`; it becomes the
    /// response's `output`.
    pub fn output_schema(mut self, name: impl Into<String>, schema: Value) -> Self {
        self.options.output_schema = Some(OutputSchema {
            name: name.into(),
            schema,
        });
        self
    }

    /// Compiles every schema; fails on a bad schema or a duplicate tool name.
    pub fn build(self) -> Result<Agent, ToolBoxError> {
        let mut tools = ToolBox::new();
        for t in self.tools {
            tools.add(t)?;
        }
        let output = match &self.options.output_schema {
            Some(s) => Some(ArgValidator::new(&s.name, &s.schema)?),
            None => None,
        };
        let specs: Arc<[ToolSpec]> = tools.specs().into();
        Ok(Agent {
            deps: None,
            inner: Arc::new(Inner {
                name: self.name,
                model: self.model,
                instructions: self.instructions,
                tools,
                specs,
                limits: self.limits,
                options: self.options,
                output,
                approval_key: self.approval_key,
            }),
        })
    }
}

pub(crate) type Emit = Option<mpsc::UnboundedSender<RunEvent>>;

/// Where a run's progress goes: events (streaming) and steps (storage).
#[derive(Clone, Default)]
struct Hooks {
    tx: Emit,
    checkpoint: Option<Arc<dyn Checkpoint>>,
}

impl Hooks {
    async fn commit(&self, step: Step<'_>) -> Result<(), String> {
        match &self.checkpoint {
            Some(c) => c.commit(step).await,
            None => Ok(()),
        }
    }
}

fn emit(tx: &Emit, event: RunEvent) {
    if let Some(tx) = tx {
        // The receiver may be gone (the caller stopped listening): the run
        // still finishes so that its state stays consistent.
        let _ = tx.unbounded_send(event);
    }
}

fn new_run_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!(
        "run_{nanos:x}{:04x}",
        COUNTER.fetch_add(1, Ordering::Relaxed) & 0xffff
    )
}

/// A run in progress: the model's whole context, and where this turn starts.
struct State {
    run_id: String,
    thread_id: Option<String>,
    request: ModelRequest,
    turn_start: usize,
    usage: Usage,
    finish_reason: Option<FinishReason>,
    cancel: CancellationToken,
}

impl State {
    fn turn(&self) -> &[Message] {
        &self.request.messages[self.turn_start..]
    }

    fn model_calls(&self) -> u32 {
        self.turn()
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count() as u32
    }

    fn response(&self, status: RunStatus, output: Value) -> Response {
        Response {
            id: Some(self.run_id.clone()),
            thread_id: self.thread_id.clone(),
            status,
            messages: self.turn().to_vec(),
            output,
            usage: self.usage,
            finish_reason: self.finish_reason,
            pending: Vec::new(),
            error: None,
        }
    }

    fn failed(&self, code: &str, message: String, cause: Option<Value>) -> Response {
        let mut r = self.response(RunStatus::Failed, Value::Null);
        r.error = Some(RunError {
            code: code.into(),
            message,
            cause,
        });
        r
    }
}

impl Agent {
    /// Starts building an agent around a model (an `HttpModel`, an
    /// `Arc<dyn Model>`...).
    pub fn builder(model: impl IntoModel) -> AgentBuilder {
        AgentBuilder {
            name: None,
            model: model.into_model(),
            instructions: None,
            tools: Vec::new(),
            limits: Limits::default(),
            options: ModelOptions::default(),
            approval_key: None,
        }
    }

    /// The digest a decision must repeat for `call` (see `digest.rs`).
    fn digest(&self, run_id: &str, call: &ToolCall) -> String {
        crate::digest::call_digest(self.inner.approval_key.as_deref(), run_id, call)
    }

    /// The same agent (tools, validators and model shared, nothing
    /// rebuilt) whose tools find `deps` in their context
    /// ([`ToolContext::deps`](crate::ToolContext::deps)): a database pool,
    /// the caller's identity, or what a language binding needs to reach
    /// its caller (its event loop). Runs and resumes of the returned agent,
    /// streamed or stored on a thread, all carry them.
    pub fn with_deps<T: std::any::Any + Send + Sync>(&self, deps: T) -> Agent {
        Agent {
            inner: Arc::clone(&self.inner),
            deps: Some(Arc::new(deps)),
        }
    }

    /// The agent's tools.
    pub fn tools(&self) -> &ToolBox {
        &self.inner.tools
    }

    /// The agent's limits.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The agent's settings as JSON, to record with each run.
    pub fn settings(&self) -> Value {
        let l = &self.inner.limits;
        json!({
            "name": self.inner.name,
            "provider": self.inner.model.provider(),
            "model": self.inner.model.model_id(),
            "instructions": self.inner.instructions,
            "tools": self.inner.specs.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            "limits": {
                "max_model_calls": l.max_model_calls,
                "max_invalid_arguments": l.max_invalid_arguments,
                "tool_timeout_ms": l.tool_timeout.as_millis() as u64,
                "tool_concurrency": l.tool_concurrency,
                "on_tool_exception": l.on_tool_exception,
                "max_tool_output": l.max_tool_output,
            },
            "options": self.inner.options,
        })
    }

    /// The one body behind every way to run (see [`crate::run`]): the
    /// run, with its events and steps going where the hooks say.
    pub(crate) async fn run_hooked(
        &self,
        input: RunInput,
        tx: Emit,
        checkpoint: Option<Arc<dyn Checkpoint>>,
    ) -> Response {
        let mut state = self.start(input);
        self.drive(&mut state, &Hooks { tx, checkpoint }).await
    }

    /// Checks the decisions now (nothing runs when one is refused); the
    /// future goes on with the run.
    pub(crate) fn resume_hooked(
        &self,
        resume: Resume,
        tx: Emit,
        checkpoint: Option<Arc<dyn Checkpoint>>,
    ) -> Result<impl Future<Output = Response> + Send + 'static, DecisionError> {
        let (mut state, plan) = self.prepare_resume(resume)?;
        let agent = self.clone();
        Ok(async move {
            let hooks = Hooks { tx, checkpoint };
            agent.continue_after(&mut state, plan, &hooks).await
        })
    }

    /// Runs, handing each step to `checkpoint` as it completes (the input
    /// messages are the caller's to keep).
    pub async fn run_with_checkpoint(
        &self,
        input: RunInput,
        checkpoint: Arc<dyn Checkpoint>,
    ) -> Response {
        let mut state = self.start(input);
        let hooks = Hooks {
            tx: None,
            checkpoint: Some(checkpoint),
        };
        self.drive(&mut state, &hooks).await
    }

    /// [`Agent::run_stream`] with a checkpoint.
    pub fn run_stream_with_checkpoint(
        &self,
        input: RunInput,
        checkpoint: Arc<dyn Checkpoint>,
    ) -> impl Stream<Item = RunEvent> + Send + 'static {
        let (tx, rx) = mpsc::unbounded();
        let agent = self.clone();
        tokio::spawn(async move {
            let mut state = agent.start(input);
            let hooks = Hooks {
                tx: Some(tx),
                checkpoint: Some(checkpoint),
            };
            let response = agent.drive(&mut state, &hooks).await;
            emit(&hooks.tx, RunEvent::RunCompleted(response));
        });
        rx
    }

    /// [`Agent::resume`] with a checkpoint.
    pub async fn resume_with_checkpoint(
        &self,
        resume: Resume,
        checkpoint: Arc<dyn Checkpoint>,
    ) -> Result<Response, DecisionError> {
        let (mut state, plan) = self.prepare_resume(resume)?;
        let hooks = Hooks {
            tx: None,
            checkpoint: Some(checkpoint),
        };
        Ok(self.continue_after(&mut state, plan, &hooks).await)
    }

    /// [`Agent::resume_stream`] with a checkpoint.
    pub fn resume_stream_with_checkpoint(
        &self,
        resume: Resume,
        checkpoint: Arc<dyn Checkpoint>,
    ) -> Result<impl Stream<Item = RunEvent> + Send + 'static, DecisionError> {
        let (mut state, plan) = self.prepare_resume(resume)?;
        let (tx, rx) = mpsc::unbounded();
        let agent = self.clone();
        tokio::spawn(async move {
            let hooks = Hooks {
                tx: Some(tx),
                checkpoint: Some(checkpoint),
            };
            let response = agent.continue_after(&mut state, plan, &hooks).await;
            emit(&hooks.tx, RunEvent::RunCompleted(response));
        });
        Ok(rx)
    }

    /// Runs, reporting progress as a stream of events; the last event is
    /// `RunCompleted` with the same response [`Agent::run`] gives.
    pub fn run_stream(&self, input: RunInput) -> impl Stream<Item = RunEvent> + Send + 'static {
        let (tx, rx) = mpsc::unbounded();
        let agent = self.clone();
        tokio::spawn(async move {
            let mut state = agent.start(input);
            let hooks = Hooks {
                tx: Some(tx),
                checkpoint: None,
            };
            let response = agent.drive(&mut state, &hooks).await;
            emit(&hooks.tx, RunEvent::RunCompleted(response));
        });
        rx
    }

    /// [`Agent::resume`] as a stream of events.
    pub fn resume_stream(
        &self,
        resume: Resume,
    ) -> Result<impl Stream<Item = RunEvent> + Send + 'static, DecisionError> {
        let (mut state, plan) = self.prepare_resume(resume)?;
        let (tx, rx) = mpsc::unbounded();
        let agent = self.clone();
        tokio::spawn(async move {
            let hooks = Hooks {
                tx: Some(tx),
                checkpoint: None,
            };
            let response = agent.continue_after(&mut state, plan, &hooks).await;
            emit(&hooks.tx, RunEvent::RunCompleted(response));
        });
        Ok(rx)
    }

    fn context_prefix(&self, turns: &[Turn]) -> Vec<Message> {
        let mut messages = Vec::new();
        if let Some(text) = &self.inner.instructions {
            messages.push(Message::system(text.clone()));
        }
        for turn in turns {
            messages.extend(turn.messages.iter().cloned());
        }
        messages
    }

    fn state(&self, turns: &[Turn], run_id: Option<String>, thread_id: Option<String>) -> State {
        let messages = self.context_prefix(turns);
        State {
            run_id: run_id.unwrap_or_else(new_run_id),
            thread_id,
            turn_start: messages.len(),
            request: ModelRequest {
                messages,
                tools: self.inner.specs.to_vec(),
                options: self.inner.options.clone(),
            },
            usage: Usage::default(),
            finish_reason: None,
            cancel: CancellationToken::new(),
        }
    }

    fn start(&self, input: RunInput) -> State {
        let mut state = self.state(&input.turns, input.run_id, input.thread_id);
        state.request.messages.extend(input.input);
        state
    }

    fn call_settings(&self, state: &State) -> CallSettings {
        let l = &self.inner.limits;
        CallSettings {
            timeout: l.tool_timeout,
            concurrency: l.tool_concurrency,
            on_tool_exception: l.on_tool_exception,
            max_output: l.max_tool_output,
            run_id: Arc::from(state.run_id.as_str()),
            thread_id: state.thread_id.as_deref().map(Arc::from),
            cancel: state.cancel.clone(),
            deps: self.deps.clone(),
        }
    }

    fn sink(tx: &Emit) -> Option<EventSink> {
        let tx = tx.clone()?;
        Some(Arc::new(move |e: &ToolEvent| {
            let ev = match e {
                ToolEvent::Started { call_id, name, .. } => RunEvent::ToolCallStarted {
                    call_id: call_id.clone(),
                    name: name.clone(),
                },
                ToolEvent::Finished {
                    call_id,
                    name,
                    status,
                    elapsed,
                    ..
                } => RunEvent::ToolCallFinished {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    status: *status,
                    elapsed: *elapsed,
                },
            };
            let _ = tx.unbounded_send(ev);
        }))
    }

    /// The invalid-argument budget as already spent in this turn.
    fn budget_so_far(
        &self,
        state: &State,
    ) -> Result<InvalidArgumentsBudget, crate::BudgetExceeded> {
        let mut budget = InvalidArgumentsBudget::new(self.inner.limits.max_invalid_arguments);
        for m in state.turn() {
            for b in &m.content {
                if let Block::ToolResult { tool_result } = b
                    && tool_result.status == ToolStatus::InvalidArguments
                {
                    let name = tool_result.name.as_deref().unwrap_or("");
                    budget.record(name, &self.inner.tools)?;
                }
            }
        }
        Ok(budget)
    }

    async fn call_model(&self, state: &State, tx: &Emit) -> Result<Message, ModelError> {
        let model = &self.inner.model;
        // Artifacts are kept with the thread, never sent to a model: a
        // request that holds any is sent without them.
        let stripped;
        let request = if has_artifacts(&state.request.messages) {
            stripped = without_artifacts(&state.request);
            &stripped
        } else {
            &state.request
        };
        if tx.is_none() {
            return model.generate(request).await;
        }
        let mut stream = model.stream(request).await?;
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta { text, .. } => emit(tx, RunEvent::TextDelta(text)),
                StreamEvent::ThinkingDelta { text, .. } => emit(tx, RunEvent::ThinkingDelta(text)),
                StreamEvent::Done(message) => return Ok(message),
                _ => {}
            }
        }
        Err(ModelError::MalformedResponse {
            message: "the stream ended before the message was complete".into(),
        })
    }

    /// The loop: model, tools, model... until done, paused or failed.
    async fn drive(&self, state: &mut State, hooks: &Hooks) -> Response {
        let tx = &hooks.tx;
        let limits = &self.inner.limits;
        let mut budget = match self.budget_so_far(state) {
            Ok(b) => b,
            Err(e) => return state.failed("invalid_arguments_budget", e.to_string(), None),
        };
        loop {
            if state.model_calls() >= limits.max_model_calls {
                let n = limits.max_model_calls;
                return state.failed(
                    "max_model_calls",
                    format!("the model was called {n} times without finishing (limit {n})"),
                    None,
                );
            }
            let message = match self.call_model(state, tx).await {
                Ok(m) => m,
                Err(e) => {
                    let cause = json!({"kind": e.kind(), "message": e.to_string()});
                    return state.failed("model_error", e.to_string(), Some(cause));
                }
            };
            if let Some(u) = &message.usage {
                state.usage.add(u);
            }
            state.finish_reason = message.finish_reason;
            emit(tx, RunEvent::MessageCompleted(message.clone()));
            if let Err(e) = hooks.commit(Step::Append(&message)).await {
                return state.failed("store", format!("the step could not be stored: {e}"), None);
            }
            let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
            state.request.messages.push(message);
            if calls.is_empty() {
                return self.complete(state);
            }

            // Calls that need approval wait; the others run now, together.
            let mut slots: Vec<Option<Block>> = vec![None; calls.len()];
            let mut runnable = Vec::new();
            let mut pending = Vec::new();
            for (i, call) in calls.iter().enumerate() {
                match self.inner.tools.check(&call.name, call, &call.arguments) {
                    Check::Ready {
                        needs_approval: true,
                        ..
                    } => {
                        let mut request = ApprovalRequest::for_call(call);
                        request.digest = self.digest(&state.run_id, call);
                        pending.push(request.clone());
                        slots[i] = Some(Block::ApprovalRequest {
                            approval_request: request,
                        });
                    }
                    _ => runnable.push((i, call)),
                }
            }
            let pairs: Vec<(&ToolCall, &Value)> =
                runnable.iter().map(|(_, c)| (*c, &c.arguments)).collect();
            let sink = Self::sink(tx);
            let reports = self
                .inner
                .tools
                .run_calls(&pairs, &self.call_settings(state), sink.as_ref())
                .await;
            let mut fatal = None;
            let mut over_budget = None;
            for ((i, call), report) in runnable.iter().zip(reports) {
                if report.result.status == ToolStatus::InvalidArguments
                    && let Err(e) = budget.record(&call.name, &self.inner.tools)
                {
                    over_budget.get_or_insert(e);
                }
                if limits.on_tool_exception == OnToolException::Fail
                    && let Some(cause) = report.cause
                {
                    fatal.get_or_insert(cause);
                }
                slots[*i] = Some(Block::tool_result(report.result));
            }
            let mut content: Vec<Block> = slots.into_iter().flatten().collect();
            if fatal.is_some() || over_budget.is_some() {
                // The run stops here: calls still waiting would never be
                // decided, and would make the thread unusable.
                retry::settle(&mut content);
                pending.clear();
            }
            let tool_message = Message::new(Role::Tool, content);
            emit(tx, RunEvent::MessageCompleted(tool_message.clone()));
            if let Err(e) = hooks.commit(Step::Append(&tool_message)).await {
                return state.failed("store", format!("the step could not be stored: {e}"), None);
            }
            state.request.messages.push(tool_message);

            if let Some(cause) = fatal {
                return self.tool_failed(state, cause);
            }
            if let Some(e) = over_budget {
                return state.failed("invalid_arguments_budget", e.to_string(), None);
            }
            if !pending.is_empty() {
                emit(tx, RunEvent::ApprovalRequired(pending.clone()));
                let mut r = state.response(RunStatus::RequiresApproval, Value::Null);
                r.pending = pending;
                return r;
            }
        }
    }

    /// The run stops on a tool's unexpected failure (policy `fail`).
    fn tool_failed(&self, state: &State, cause: crate::FailureCause) -> Response {
        state.failed(
            "tool_failed",
            format!(
                "tool {} failed: {}: {}",
                cause.tool, cause.error_type, cause.message
            ),
            Some(serde_json::to_value(&cause).expect("json")),
        )
    }

    /// The model stopped: the output is its text, or its JSON value when an
    /// output schema is set.
    fn complete(&self, state: &State) -> Response {
        let last = state
            .request
            .messages
            .last()
            .expect("a message was just added");
        let Some(validator) = &self.inner.output else {
            return state.response(RunStatus::Completed, Value::String(last.text()));
        };
        let value = last.content.iter().find_map(|b| match b {
            Block::Json { json } => Some(Ok(json.clone())),
            _ => None,
        });
        let value = value.unwrap_or_else(|| {
            serde_json::from_str::<Value>(&last.text()).map_err(|e| e.to_string())
        });
        match value {
            Err(e) => state.failed(
                "invalid_output",
                format!("the final answer is not JSON: {e}"),
                Some(Value::String(last.text())),
            ),
            Ok(v) => {
                let problems = validator.problems(&v);
                if problems.is_empty() {
                    state.response(RunStatus::Completed, v)
                } else {
                    state.failed(
                        "invalid_output",
                        format!(
                            "the final answer does not match the output schema: {}",
                            problems.join("; ")
                        ),
                        Some(v),
                    )
                }
            }
        }
    }

    /// Checks a paused run and its decisions; returns the state to go on
    /// from and what to do with each decided call.
    fn prepare_resume(
        &self,
        resume: Resume,
    ) -> Result<(State, Vec<(usize, Decision)>), DecisionError> {
        let paused = resume.paused;
        if paused.status != RunStatus::RequiresApproval {
            return Err(refuse(
                "paused.status",
                format!(
                    "the run is {}, not waiting for decisions",
                    paused.status.as_str()
                ),
            ));
        }
        let n = paused.messages.len();
        let waiting = paused
            .messages
            .last()
            .filter(|m| {
                m.role == Role::Tool
                    && m.content
                        .iter()
                        .any(|b| matches!(b, Block::ApprovalRequest { .. }))
            })
            .ok_or_else(|| {
                refuse(
                    "paused.messages",
                    "the last message holds no approval request",
                )
            })?;
        let calls: HashMap<&str, &ToolCall> = paused.messages[..n - 1]
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.tool_calls().map(|c| (c.id.as_str(), c)).collect())
            .unwrap_or_default();

        let mut plan = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (d_index, d) in resume.decisions.iter().enumerate() {
            let path = format!("decisions[{d_index}]");
            if let Some(first) = seen.insert(d.tool_call_id.as_str(), d_index) {
                return Err(refuse(
                    format!("{path}.tool_call_id"),
                    format!(
                        "call {:?} is decided twice (first in decisions[{first}])",
                        d.tool_call_id
                    ),
                ));
            }
            let slot = waiting.content.iter().position(|b| match b {
                Block::ApprovalRequest { approval_request } => {
                    approval_request.tool_call_id == d.tool_call_id
                }
                _ => false,
            });
            let Some(slot) = slot else {
                let answered = waiting.content.iter().any(|b| {
                    b.as_tool_result()
                        .is_some_and(|r| r.tool_call_id == d.tool_call_id)
                });
                let why = if answered {
                    format!("call {:?} is already decided", d.tool_call_id)
                } else {
                    format!("no pending call has id {:?}", d.tool_call_id)
                };
                return Err(refuse(format!("{path}.tool_call_id"), why));
            };
            let Block::ApprovalRequest {
                approval_request: req,
            } = &waiting.content[slot]
            else {
                unreachable!("found above")
            };
            // The stored request must still match the model's call, and the
            // decision must repeat the request's digest.
            let call = calls.get(req.tool_call_id.as_str()).ok_or_else(|| {
                refuse(
                    format!("{path}.tool_call_id"),
                    format!("the paused run has no tool call {:?}", req.tool_call_id),
                )
            })?;
            let expected = self.digest(paused.id.as_deref().unwrap_or(""), call);
            if req.digest != expected || req.name != call.name || req.arguments != call.arguments {
                return Err(refuse(
                    format!("{path}.tool_call_id"),
                    format!(
                        "the pending request for call {:?} does not match the model's call (was it altered?)",
                        d.tool_call_id
                    ),
                ));
            }
            if d.digest != expected {
                return Err(refuse(
                    format!("{path}.digest"),
                    format!(
                        "does not match the pending call {:?}: the call or its arguments changed",
                        d.tool_call_id
                    ),
                ));
            }
            if let Some(content) = &d.content {
                retry::check_answer(content, &path)?;
            }
            if d.decision == DecisionKind::Edited {
                let args = d
                    .arguments
                    .as_ref()
                    .expect("the reader requires arguments for edited");
                match self.inner.tools.check(&call.name, call, args) {
                    Check::Invalid(problems) => {
                        return Err(refuse(
                            format!("{path}.arguments"),
                            format!("invalid for {}: {}", call.name, problems.join("; ")),
                        ));
                    }
                    Check::UnknownTool => {
                        return Err(refuse(
                            format!("{path}.tool_call_id"),
                            format!("unknown tool {:?}", call.name),
                        ));
                    }
                    Check::Ready { .. } => {}
                }
            }
            plan.push((slot, d.clone()));
        }
        if plan.is_empty() {
            return Err(refuse("decisions", "no decision given"));
        }

        let mut state = self.state(&resume.turns, paused.id.clone(), paused.thread_id.clone());
        state.request.messages.extend(paused.messages);
        state.usage = paused.usage;
        state.finish_reason = paused.finish_reason;
        Ok((state, plan))
    }

    /// Runs the decided calls, puts their results in place of their
    /// requests (so results stay in call order), and goes on.
    async fn continue_after(
        &self,
        state: &mut State,
        plan: Vec<(usize, Decision)>,
        hooks: &Hooks,
    ) -> Response {
        let tx = &hooks.tx;
        let settings = self.call_settings(state);
        let sink = Self::sink(tx);
        let waiting = state.request.messages.last().expect("checked").clone();
        let calls: HashMap<String, ToolCall> = state.request.messages
            [..state.request.messages.len() - 1]
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.tool_calls().map(|c| (c.id.clone(), c.clone())).collect())
            .unwrap_or_default();

        let mut to_run: Vec<(usize, &Decision, &ToolCall, &Value)> = Vec::new();
        let mut results: Vec<(usize, ToolResult)> = Vec::new();
        for (slot, d) in &plan {
            let call = &calls[&d.tool_call_id];
            let record = Approval {
                decision: d.decision,
                arguments: d.arguments.clone(),
                reason: d.reason.clone(),
            };
            match d.decision {
                DecisionKind::Approved => to_run.push((*slot, d, call, &call.arguments)),
                DecisionKind::Edited => {
                    to_run.push((*slot, d, call, d.arguments.as_ref().expect("checked")))
                }
                DecisionKind::Rejected => {
                    let text = match &d.reason {
                        Some(r) => format!("The reviewer rejected this call: {r}"),
                        None => "The reviewer rejected this call.".to_string(),
                    };
                    let mut r = ToolResult::text(&call.id, ToolStatus::Rejected, text);
                    r.name = Some(call.name.clone());
                    r.approval = Some(record);
                    results.push((*slot, r));
                }
                DecisionKind::Answered => {
                    results.push((
                        *slot,
                        ToolResult {
                            tool_call_id: call.id.clone(),
                            name: Some(call.name.clone()),
                            content: d.content.clone().unwrap_or_default(),
                            status: ToolStatus::Ok,
                            artifact: None,
                            approval: Some(record),
                        },
                    ));
                }
            }
        }
        let pairs: Vec<(&ToolCall, &Value)> = to_run.iter().map(|(_, _, c, a)| (*c, *a)).collect();
        let reports = self
            .inner
            .tools
            .run_calls(&pairs, &settings, sink.as_ref())
            .await;
        let mut fatal = None;
        for ((slot, d, _, _), report) in to_run.iter().zip(reports) {
            if self.inner.limits.on_tool_exception == OnToolException::Fail
                && let Some(cause) = &report.cause
            {
                fatal.get_or_insert(cause.clone());
            }
            let mut r = report.result;
            r.approval = Some(Approval {
                decision: d.decision,
                arguments: d.arguments.clone(),
                reason: None,
            });
            results.push((*slot, r));
        }
        let mut content = waiting.content;
        for (slot, r) in results {
            content[slot] = Block::tool_result(r);
        }
        if fatal.is_some() {
            retry::settle(&mut content);
        }
        let still_pending: Vec<ApprovalRequest> = content
            .iter()
            .filter_map(|b| match b {
                Block::ApprovalRequest { approval_request } => Some(approval_request.clone()),
                _ => None,
            })
            .collect();
        let last = state.request.messages.last_mut().expect("checked");
        last.content = content;
        emit(tx, RunEvent::MessageCompleted(last.clone()));
        if let Err(e) = hooks.commit(Step::ReplaceLast(last)).await {
            return state.failed("store", format!("the step could not be stored: {e}"), None);
        }

        if let Some(cause) = fatal {
            return self.tool_failed(state, cause);
        }
        if !still_pending.is_empty() {
            emit(tx, RunEvent::ApprovalRequired(still_pending.clone()));
            let mut r = state.response(RunStatus::RequiresApproval, Value::Null);
            r.pending = still_pending;
            return r;
        }
        self.drive(state, hooks).await
    }
}

fn has_artifacts(messages: &[Message]) -> bool {
    messages
        .iter()
        .flat_map(|m| &m.content)
        .any(|b| matches!(b, Block::ToolResult { tool_result } if tool_result.artifact.is_some()))
}

fn without_artifacts(request: &ModelRequest) -> ModelRequest {
    let mut r = request.clone();
    for b in r.messages.iter_mut().flat_map(|m| m.content.iter_mut()) {
        if let Block::ToolResult { tool_result } = b {
            tool_result.artifact = None;
        }
    }
    r
}
