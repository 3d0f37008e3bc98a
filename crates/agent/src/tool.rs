//! Defining tools: a name, a description the model reads, an input schema
//! (derived from the argument type or given by hand) and a function —
//! async, or blocking (run on a worker thread).
//!
//! The derived schema is sent with every request that offers the tool. The
//! doc comments of the argument type's fields become the properties'
//! descriptions, which the model reads; a doc comment on the type itself
//! would repeat the tool's description, so the tool's own description wins
//! (the type's is used only when the tool gives none).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use parlance_format::{Block, ToolSpec};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::validate::{ArgumentProblem, PathStep};

/// What a running tool knows about its call.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The run this call belongs to.
    pub run_id: Arc<str>,
    /// The thread, when the run is on one.
    pub thread_id: Option<Arc<str>>,
    /// The tool call's id.
    pub call_id: Arc<str>,
    /// Cancelled when the call times out or the run is stopped; long
    /// blocking tools should check it.
    pub cancel: CancellationToken,
    /// When the call will be timed out.
    pub deadline: Instant,
    /// What the caller handed the agent's tools (`Agent::with_deps`).
    pub deps: Option<Deps>,
    /// Where the run is kept (its checkpoint), for an agent used as a
    /// tool: its run is kept there too. Type-erased so that tools need not
    /// know the agent (see `crate::agent::subagent`).
    pub(crate) host: Option<Host>,
}

/// A run's checkpoint as a tool call carries it to an agent used as a
/// tool (opaque: the run loop sets it).
pub type Host = Arc<dyn std::any::Any + Send + Sync>;

/// What a caller hands every tool of an agent's runs (see
/// [`Agent::with_deps`](crate::Agent::with_deps)). Defined with the tools
/// that read it, so that the agent depends on its tools and not back.
pub type Deps = Arc<dyn std::any::Any + Send + Sync>;

impl ToolContext {
    /// The caller's dependencies, when they are a `T` (see
    /// `Agent::with_deps`).
    pub fn deps<T: std::any::Any>(&self) -> Option<&T> {
        self.deps.as_deref()?.downcast_ref::<T>()
    }

    /// A key for this call that is the same every time the call runs
    /// again: the thread (or, off a thread, the run) and the call's id
    /// (see [`idempotency_key`]). A tool with side effects hands it on
    /// (HTTP tools send it as `Idempotency-Key`) so that what it did
    /// is done once, however often the call is replayed.
    pub fn idempotency_key(&self) -> String {
        idempotency_key(&self.run_id, self.thread_id.as_deref(), &self.call_id)
    }
}

/// A tool call's idempotency key: `{thread}/{call}` on a thread (the same
/// when a failed run is retried by another run, or a paused one resumed),
/// `{run}/{call}` off one (the run id the caller gave, or a new one). It
/// is unique as long as call ids are unique in the thread, which the
/// engine's adapters keep (a provider's own ids, or ids made for calls a
/// provider sent without one).
pub fn idempotency_key(run_id: &str, thread_id: Option<&str>, call_id: &str) -> String {
    format!("{}/{call_id}", thread_id.unwrap_or(run_id))
}

/// An error kept as it is (shared), so that a run it fails can hand it
/// on as its [`source`](std::error::Error::source).
pub type SharedError = Arc<dyn std::error::Error + Send + Sync>;

/// The error a tool function returns.
///
/// [`ToolError::new`] is an error the tool reports on purpose: its message
/// goes back to the model (status `error`), which can recover or explain.
/// A plain string does the same (`Err("no such order".into())`).
///
/// [`ToolError::invalid_arguments`] refuses arguments the schema let
/// through: the model reads each problem as it reads the schema's (status
/// `invalid_arguments`, counted against the invalid-argument budget).
///
/// `?` on any other error (`std::io::Error`, `anyhow::Error`,
/// `Box<dyn Error + Send + Sync>`...) makes an unexpected failure: status
/// `tool_failed` with the error's type and message, handled by the agent's
/// `on_tool_exception` policy (under `fail`, the error itself is the run
/// error's `source()`).
#[derive(Debug, Clone)]
pub struct ToolError {
    message: String,
    /// The error's type and the error, when it was not reported on purpose.
    unexpected: Option<(String, SharedError)>,
    /// What the tool's own check found wrong with its arguments.
    problems: Option<Vec<ArgumentProblem>>,
}

/// Equal when their messages and kinds are (the errors inside are not
/// compared).
impl PartialEq for ToolError {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message
            && self.unexpected_type() == other.unexpected_type()
            && self.problems == other.problems
    }
}

impl Eq for ToolError {}

impl ToolError {
    /// A tool error with a message for the model.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            unexpected: None,
            problems: None,
        }
    }

    /// The arguments passed the schema but not the tool's own check (a
    /// rule the schema cannot say): the model reads one line per problem,
    /// as for the schema's own (`amount: must be a multiple of 5`), with
    /// status `invalid_arguments`, and the call counts against the
    /// invalid-argument budget.
    pub fn invalid_arguments(problems: impl IntoIterator<Item = ArgumentProblem>) -> Self {
        let problems: Vec<ArgumentProblem> = problems.into_iter().collect();
        let lines: Vec<String> = problems.iter().map(ArgumentProblem::line).collect();
        ToolError {
            message: lines.join("\n"),
            unexpected: None,
            problems: Some(problems),
        }
    }

    /// The problems, when this error refuses the arguments.
    pub fn argument_problems(&self) -> Option<&[ArgumentProblem]> {
        self.problems.as_deref()
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error's type, when it came from `?` on an error the tool did not
    /// plan for (`None`: a message for the model).
    pub fn unexpected_type(&self) -> Option<&str> {
        self.unexpected.as_ref().map(|(t, _)| t.as_str())
    }
}

/// Anything that converts into a boxed error: `std` errors, `anyhow::Error`,
/// boxed errors, strings. Strings are messages for the model; the rest are
/// unexpected failures. (`ToolError` is not a `std::error::Error`, which
/// keeps this conversion apart from the identity one.)
impl<E: Into<Box<dyn std::error::Error + Send + Sync>>> From<E> for ToolError {
    fn from(e: E) -> Self {
        let name = std::any::type_name::<E>();
        let boxed: Box<dyn std::error::Error + Send + Sync> = e.into();
        let message = boxed.to_string();
        let is_text = matches!(
            name,
            "&str"
                | "alloc::string::String"
                | "alloc::borrow::Cow<'_, str>"
                | "alloc::borrow::Cow<str>"
        );
        if is_text {
            return ToolError::new(message);
        }
        let error_type = if name.starts_with("alloc::boxed::Box<dyn ") {
            "Box<dyn Error>".to_string()
        } else {
            name.to_string()
        };
        ToolError {
            message,
            unexpected: Some((error_type, Arc::from(boxed))),
            problems: None,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// How a tool function failed. Built for you by `?`: a [`ToolError`]
/// becomes `Tool`, any other `std::error::Error` becomes `Unexpected` with
/// its type name and message (status `tool_failed`).
///
/// `ToolError` deliberately does not implement `std::error::Error`, so
/// that the two conversions can coexist.
#[derive(Debug, Clone)]
pub enum ToolFailure {
    /// A [`ToolError`]: always goes back to the model.
    Tool(ToolError),
    /// The arguments passed the schema but not the tool's own check: the
    /// model reads each problem (status `invalid_arguments`), as for the
    /// schema's.
    InvalidArguments(Vec<ArgumentProblem>),
    /// Anything else (an error the tool did not plan for, or a panic).
    Unexpected {
        /// The error's type (`std::num::ParseIntError`, `panic`).
        error_type: String,
        /// Its message.
        message: String,
        /// The error itself, when there is one (not for a panic).
        error: Option<SharedError>,
    },
}

/// Equal when their kinds, types and messages are (the errors inside are
/// not compared).
impl PartialEq for ToolFailure {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ToolFailure::Tool(a), ToolFailure::Tool(b)) => a == b,
            (ToolFailure::InvalidArguments(a), ToolFailure::InvalidArguments(b)) => a == b,
            (
                ToolFailure::Unexpected {
                    error_type: t1,
                    message: m1,
                    ..
                },
                ToolFailure::Unexpected {
                    error_type: t2,
                    message: m2,
                    ..
                },
            ) => t1 == t2 && m1 == m2,
            _ => false,
        }
    }
}

impl Eq for ToolFailure {}

/// The `error_type` of a [`ToolFailure::Unexpected`] for a call that could
/// not run for the process's own lack of resources (no file descriptor
/// left, no memory): not the tool's fault, so the model is not told it
/// failed. The run ends `failed` with code `server_resources`, whatever
/// the `on_tool_exception` policy; the call's result is `interrupted` (a
/// retry runs it again).
pub const SERVER_RESOURCES: &str = "server_resources";

impl ToolFailure {
    /// A call the process could not run for its own lack of resources
    /// (see [`SERVER_RESOURCES`]).
    pub fn server_resources(message: impl Into<String>) -> Self {
        ToolFailure::unexpected(SERVER_RESOURCES, message)
    }

    /// An unexpected failure of the given type, with no error object (a
    /// panic, a failure described by a language binding).
    pub fn unexpected(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        ToolFailure::Unexpected {
            error_type: error_type.into(),
            message: message.into(),
            error: None,
        }
    }
}

impl From<ToolError> for ToolFailure {
    fn from(e: ToolError) -> Self {
        if let Some(problems) = e.problems {
            return ToolFailure::InvalidArguments(problems);
        }
        match e.unexpected {
            None => ToolFailure::Tool(e),
            Some((error_type, error)) => ToolFailure::Unexpected {
                error_type,
                message: e.message,
                error: Some(error),
            },
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolFailure {
    fn from(e: E) -> Self {
        ToolFailure::Unexpected {
            error_type: std::any::type_name::<E>().to_string(),
            message: e.to_string(),
            error: Some(Arc::new(e)),
        }
    }
}

/// What a tool may return: it becomes the result's content.
pub trait IntoToolContent {
    /// The content blocks the model reads.
    fn into_content(self) -> Result<Vec<Block>, ToolFailure>;
}

impl IntoToolContent for String {
    fn into_content(self) -> Result<Vec<Block>, ToolFailure> {
        Ok(vec![Block::text(self)])
    }
}

impl IntoToolContent for &str {
    fn into_content(self) -> Result<Vec<Block>, ToolFailure> {
        Ok(vec![Block::text(self)])
    }
}

/// A JSON string becomes text; any other value a `json` block.
impl IntoToolContent for Value {
    fn into_content(self) -> Result<Vec<Block>, ToolFailure> {
        Ok(vec![match self {
            Value::String(s) => Block::text(s),
            other => Block::json(other),
        }])
    }
}

impl IntoToolContent for Vec<Block> {
    fn into_content(self) -> Result<Vec<Block>, ToolFailure> {
        Ok(self)
    }
}

impl IntoToolContent for Block {
    fn into_content(self) -> Result<Vec<Block>, ToolFailure> {
        Ok(vec![self])
    }
}

/// No content.
impl IntoToolContent for () {
    fn into_content(self) -> Result<Vec<Block>, ToolFailure> {
        Ok(Vec::new())
    }
}

/// Numbers and booleans, as a `json` block.
macro_rules! json_content {
    ($($t:ty),*) => {$(
        impl IntoToolContent for $t {
            fn into_content(self) -> Result<Vec<Block>, ToolFailure> {
                Ok(vec![Block::json(Value::from(self))])
            }
        }
    )*};
}
json_content!(
    i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64, bool
);

/// Any serialisable value, as a `json` block.
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolContent for Json<T> {
    fn into_content(self) -> Result<Vec<Block>, ToolFailure> {
        serde_json::to_value(&self.0)
            .map(|v| vec![Block::json(v)])
            .map_err(|e| ToolFailure::unexpected("serde_json::Error", e.to_string()))
    }
}

pub(crate) type Outcome = Result<Vec<Block>, ToolFailure>;

/// A function that can be a tool: `|args: A| async { … }` (its error type
/// is [`ToolError`], so `Ok(…)` and `?` need no annotation) or
/// `|args: A, ctx: ToolContext| async { … }` (any error that converts into
/// a [`ToolFailure`]). `M` only tells the two apart; you never name it.
pub trait ToolFn<A, M>: Send + Sync + 'static {
    /// Starts one call.
    fn call(&self, args: A, ctx: ToolContext) -> BoxFuture<'static, Outcome>;
}

/// Marks a tool function that takes only its arguments.
#[doc(hidden)]
pub struct ArgsOnly;
/// Marks a tool function that takes its arguments and a [`ToolContext`].
#[doc(hidden)]
pub struct WithContext;

impl<A, F, Fut, T> ToolFn<A, (ArgsOnly, T)> for F
where
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, ToolError>> + Send + 'static,
    T: IntoToolContent,
{
    fn call(&self, args: A, _ctx: ToolContext) -> BoxFuture<'static, Outcome> {
        let fut = self(args);
        Box::pin(async move {
            match fut.await {
                Ok(v) => v.into_content(),
                Err(e) => Err(e.into()),
            }
        })
    }
}

impl<A, F, Fut, T, E> ToolFn<A, (WithContext, T, E)> for F
where
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<T, E>> + Send + 'static,
    T: IntoToolContent,
    E: Into<ToolFailure>,
{
    fn call(&self, args: A, ctx: ToolContext) -> BoxFuture<'static, Outcome> {
        let fut = self(args, ctx);
        Box::pin(async move {
            match fut.await {
                Ok(v) => v.into_content(),
                Err(e) => Err(e.into()),
            }
        })
    }
}
/// Starting a call fails when the arguments do not make an `A`.
type AsyncFn = dyn Fn(&Value, ToolContext) -> Result<BoxFuture<'static, Outcome>, Vec<ArgumentProblem>>
    + Send
    + Sync;
type BlockingJob = Box<dyn FnOnce(ToolContext) -> Outcome + Send>;
type BlockingFn = dyn Fn(&Value) -> Result<BlockingJob, Vec<ArgumentProblem>> + Send + Sync;

/// An agent used as a tool: its call reports, besides its content, what
/// the sub-agent's run spent and whether it waits for decisions.
type DelegateFn = dyn Fn(&Value, ToolContext) -> Result<BoxFuture<'static, Delegated>, Vec<ArgumentProblem>>
    + Send
    + Sync;

/// How a sub-agent's call ended (see `crate::agent::subagent`).
pub(crate) struct Delegated {
    /// Its content (the sub-agent's output), or its failure.
    pub(crate) outcome: Outcome,
    /// What the sub-agent's run spent: tokens, and dollars when priced.
    pub(crate) spent: Option<(parlance_format::Usage, Option<f64>)>,
    /// The sub-agent's run, when it waits for decisions.
    pub(crate) waiting_on: Option<String>,
}

#[derive(Clone)]
pub(crate) enum Handler {
    Async(Arc<AsyncFn>),
    Blocking(Arc<BlockingFn>),
    Delegate(Arc<DelegateFn>),
}

/// Decides, from the arguments, whether a call needs a human's approval.
pub type ApprovalPredicate = Arc<dyn Fn(&Value) -> bool + Send + Sync>;

/// A tool: what the model is told, and the function that runs.
#[derive(Clone)]
pub struct Tool {
    pub(crate) spec: ToolSpec,
    pub(crate) handler: Handler,
    pub(crate) timeout: Option<Duration>,
    pub(crate) needs_approval: Option<ApprovalPredicate>,
    pub(crate) max_invalid_arguments: Option<u32>,
    pub(crate) max_output: Option<usize>,
    /// Dropping the call's future does not stop its work (see
    /// [`Tool::detached`]).
    pub(crate) detached: bool,
    /// The agent behind a tool made by `Agent::as_tool` (type-erased: an
    /// `Agent`), so that a run waiting on it can be found again.
    pub(crate) agent: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.spec.name)
            .field("timeout", &self.timeout)
            .field("needs_approval", &self.needs_approval.is_some())
            .finish()
    }
}

/// The schema schemars derives for `A`, without the `$schema` and `title`
/// keys that no provider wants in a tool's parameters.
pub fn schema_for<A: JsonSchema>() -> Value {
    let mut v = schemars::SchemaGenerator::new(schemars::generate::SchemaSettings::draft2020_12())
        .into_root_schema_for::<A>()
        .to_value();
    if let Value::Object(m) = &mut v {
        m.remove("$schema");
        m.remove("title");
    }
    v
}

/// The typed argument; what its deserializer refuses (a `try_from`
/// newtype, a custom `Deserialize`) is a problem at the place it refused.
fn deserialize<A: DeserializeOwned>(args: &Value) -> Result<A, Vec<ArgumentProblem>> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        use serde_path_to_error::Segment;
        let path = e.path().iter().filter_map(|s| match s {
            Segment::Seq { index } => Some(PathStep::Index(*index)),
            Segment::Map { key } => Some(PathStep::Key(key.clone())),
            Segment::Enum { variant } => Some(PathStep::Key(variant.clone())),
            Segment::Unknown => None,
        });
        vec![ArgumentProblem::new(path, e.inner().to_string())]
    })
}

impl Tool {
    /// An async tool whose input schema is derived from `A`. The function
    /// takes the arguments, and optionally the call's [`ToolContext`]:
    ///
    /// ```
    /// use parlance_agent::{Tool, ToolError};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Refund {
    ///     /// The amount in euros.
    ///     #[schemars(range(min = 1, max = 500))]
    ///     amount: u32,
    ///     /// The order, as printed on the receipt.
    ///     order: String,
    /// }
    ///
    /// let tool = Tool::new("refund", "Refund the customer.", |args: Refund| async move {
    ///     if args.amount > 100 {
    ///         return Err(ToolError::new("refunds over 100 need a manager"));
    ///     }
    ///     let order: u64 = args.order.parse()?; // a ParseIntError: status tool_failed
    ///     Ok(format!("refunded {} on order {order}", args.amount))
    /// });
    /// let schema = &tool.spec().input_schema;
    /// assert_eq!(schema["properties"]["amount"]["maximum"], 500);
    /// assert_eq!(schema["properties"]["amount"]["description"], "The amount in euros.");
    /// ```
    ///
    /// With the context (`|args: Refund, ctx: ToolContext| async move { … }`)
    /// the error type is yours to choose (anything that converts into a
    /// [`ToolFailure`]); [`Tool::with_context`] fixes it to [`ToolError`].
    pub fn new<A, M>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: impl ToolFn<A, M>,
    ) -> Tool
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
    {
        let handler: Arc<AsyncFn> = Arc::new(move |args: &Value, ctx: ToolContext| {
            let a: A = deserialize(args)?;
            Ok(f.call(a, ctx))
        });
        Tool::build(
            name,
            description,
            schema_for::<A>(),
            Handler::Async(handler),
        )
    }

    /// An async tool that reads its call's [`ToolContext`] (run and thread
    /// ids, the call id, cancellation, the deadline); its error type is
    /// [`ToolError`], so `Ok(…)` and `?` need no annotation.
    pub fn with_context<A, F, Fut, T>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Tool
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, ToolError>> + Send + 'static,
        T: IntoToolContent,
    {
        Tool::new(name, description, f)
    }

    /// A blocking tool (file or CPU work, a synchronous client), run on a
    /// worker thread so that it never stalls the runtime.
    pub fn blocking<A, F, T, E>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Tool
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, ToolContext) -> Result<T, E> + Send + Sync + 'static,
        T: IntoToolContent,
        E: Into<ToolFailure>,
    {
        let f = Arc::new(f);
        let handler: Arc<BlockingFn> = Arc::new(move |args: &Value| {
            let a: A = deserialize(args)?;
            let f = Arc::clone(&f);
            Ok(Box::new(move |ctx: ToolContext| match f(a, ctx) {
                Ok(v) => v.into_content(),
                Err(e) => Err(e.into()),
            }) as BlockingJob)
        });
        Tool::build(
            name,
            description,
            schema_for::<A>(),
            Handler::Blocking(handler),
        )
    }

    fn build(
        name: impl Into<String>,
        description: impl Into<String>,
        mut schema: Value,
        handler: Handler,
    ) -> Tool {
        // The type's doc comment would repeat (or contradict) the tool's
        // description in every request: the tool's wins, the type's fills
        // in only when the tool has none.
        let mut description = description.into();
        if let Some(Value::String(d)) = schema.as_object_mut().and_then(|m| m.remove("description"))
            && description.trim().is_empty()
        {
            description = d;
        }
        Tool {
            spec: ToolSpec::new(name, description, schema),
            handler,
            timeout: None,
            needs_approval: None,
            max_invalid_arguments: None,
            max_output: None,
            detached: false,
            agent: None,
        }
    }

    /// A tool whose calls delegate to another agent (see
    /// `Agent::as_tool`).
    pub(crate) fn delegate(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        agent: Arc<dyn std::any::Any + Send + Sync>,
        f: Arc<DelegateFn>,
    ) -> Tool {
        let mut t = Tool::build(name, description, schema, Handler::Delegate(f));
        t.agent = Some(agent);
        t
    }

    /// Replaces the derived input schema with one written by hand (use
    /// `serde_json::Value` as the argument type to take it as is).
    pub fn with_schema(mut self, schema: Value) -> Tool {
        self.spec.input_schema = schema;
        self
    }

    /// This tool's own timeout (instead of the agent's).
    pub fn timeout(mut self, timeout: Duration) -> Tool {
        self.timeout = Some(timeout);
        self
    }

    /// Every call needs a human's approval before it runs.
    pub fn needs_approval(mut self) -> Tool {
        self.needs_approval = Some(Arc::new(|_| true));
        self
    }

    /// A call needs approval when `predicate` says so for its arguments.
    pub fn needs_approval_if(
        mut self,
        predicate: impl Fn(&Value) -> bool + Send + Sync + 'static,
    ) -> Tool {
        self.needs_approval = Some(Arc::new(predicate));
        self
    }

    /// How many calls with invalid arguments this tool tolerates in one run
    /// (instead of the agent's budget).
    pub fn max_invalid_arguments(mut self, n: u32) -> Tool {
        self.max_invalid_arguments = Some(n);
        self
    }

    /// The most this tool's result may hold, in bytes of JSON (instead of
    /// the agent's `Limits::max_tool_output`).
    pub fn max_output(mut self, bytes: usize) -> Tool {
        self.max_output = Some(bytes);
        self
    }

    /// Says that this async tool's future only waits for work running
    /// elsewhere (a task it spawned, another process, another language's
    /// event loop), so dropping it at a timeout does not stop that work.
    /// A timed-out call then says what is true: the tool was told to stop
    /// (its [`ToolContext::cancel`] is cancelled) but may still be running,
    /// and its result will be discarded. Blocking tools are always so; an
    /// ordinary async tool stops at its next `.await` when dropped.
    pub fn detached(mut self) -> Tool {
        self.detached = true;
        self
    }

    /// Whether a timed-out call's work stops with it (see [`Tool::detached`]).
    pub fn stops_at_timeout(&self) -> bool {
        !self.detached && matches!(self.handler, Handler::Async(_) | Handler::Delegate(_))
    }

    /// What the model is told about the tool.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }
}
