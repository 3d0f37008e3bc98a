use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::{ApprovalRequest, Block, FinishReason, FormatError, Message, Usage};

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The model finished; `output` holds its answer.
    Completed,
    /// The run waits for decisions on the calls in `pending`.
    RequiresApproval,
    /// The run stopped on an error; `error` says which.
    Failed,
}

impl RunStatus {
    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::RequiresApproval => "requires_approval",
            RunStatus::Failed => "failed",
        }
    }
}

/// Why a run failed.
// An error type too: `Response::into_result` hands it to `?`, and its
// `source()` is the error behind it when the run had one in hand (a
// tool's own error under `fail`, the model's, the store's). (A plain
// comment: the doc comment is the published schema's description.)
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunError {
    /// A stable machine-readable code (`tool_failed`, `max_model_calls`,
    /// `invalid_arguments_budget`, `provider`, ...).
    pub code: String,
    /// What happened, for a person.
    pub message: String,
    /// The underlying error, when there is one (for `tool_failed`: the
    /// tool's error type and message).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Value>,
    /// The error itself, in this process only (never serialised).
    #[serde(skip)]
    #[schemars(skip)]
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run failed ({}): {}", self.code, self.message)
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // The error itself, not the `Arc` around it, so that callers can
        // downcast it to its own type.
        let e: &(dyn std::error::Error + 'static) = self.source.as_deref()?;
        Some(e)
    }
}

impl RunError {
    /// An error with a code and a message.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        RunError {
            code: code.into(),
            message: message.into(),
            cause: None,
            source: None,
        }
    }

    /// With its cause as JSON (what is stored and sent).
    pub fn with_cause(mut self, cause: Value) -> Self {
        self.cause = Some(cause);
        self
    }

    /// With the error behind it, for [`source`](std::error::Error::source)
    /// (kept in memory only: a stored or deserialised error has the JSON
    /// `cause` alone).
    pub fn with_source(mut self, source: Arc<dyn std::error::Error + Send + Sync>) -> Self {
        self.source = Some(source);
        self
    }
}

/// Equal when code, message and cause are (the in-memory source is not
/// compared).
impl PartialEq for RunError {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code && self.message == other.message && self.cause == other.cause
    }
}

/// The answer to a run request: the turn's `messages` (the model's actual
/// context, to pass back in `turns[]`) and its `output` (for people).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Response {
    /// The run's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The thread the run belongs to, when it runs on one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// completed, requires_approval or failed.
    pub status: RunStatus,
    /// Exactly what the model saw and said this turn: the new input, the
    /// assistant messages and the tool messages, in order.
    pub messages: Vec<Message>,
    /// The final text, or the structured value when an output schema was
    /// set; `null` when the run did not complete.
    pub output: Value,
    /// Tokens summed over every model call of the run.
    pub usage: Usage,
    /// What the run's model calls cost, in US dollars: the sum of its
    /// assistant messages' `cost`. Absent when any of them has none (a
    /// model not in the price table): a partial sum would be wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub cost: Option<f64>,
    /// The last model call's finish reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// The calls waiting for a decision (status `requires_approval`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<ApprovalRequest>,
    /// Why the run failed (status `failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
}

/// The sum of the costs of the model calls among `messages` (assistant
/// messages, and summaries written by a model: every message that carries
/// a model's usage): `None` unless each of them has a cost (a sum that
/// leaves a call out would be wrong).
pub fn total_cost<'a>(messages: impl IntoIterator<Item = &'a Message>) -> Option<f64> {
    let mut total = 0.0;
    let mut any = false;
    for m in messages {
        if m.usage.is_none() {
            continue;
        }
        total += m.cost?;
        any = true;
    }
    any.then_some(total)
}

/// An earlier turn passed back in a request's `turns[]`. Only `messages`
/// reaches the model; any other field (a whole earlier [`Response`]) is
/// accepted and ignored. Empty or missing `messages`: the turn is not seen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct Turn {
    /// The turn's messages, unchanged.
    #[serde(default)]
    pub messages: Vec<Message>,
}

impl Turn {
    /// Reads a turn (or a whole earlier response) from JSON.
    pub fn from_value(value: &Value) -> Result<Turn, FormatError> {
        crate::read::turn(value, &crate::read::Path::root())
    }
}

impl<'de> serde::Deserialize<'de> for Turn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Turn::from_value(&value).map_err(serde::de::Error::custom)
    }
}

/// The four ways a reviewer can decide a call that needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// Run the call as the model asked.
    Approved,
    /// Run the call with the reviewer's `arguments` (validated again).
    Edited,
    /// Do not run it; the model is told the `reason`.
    Rejected,
    /// Do not run it; the reviewer's `content` is the result.
    Answered,
}

impl DecisionKind {
    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Approved => "approved",
            DecisionKind::Edited => "edited",
            DecisionKind::Rejected => "rejected",
            DecisionKind::Answered => "answered",
        }
    }
}

/// A reviewer's decision on one pending call. It names the call and repeats
/// the digest of the request it decides, so it cannot be applied to another
/// call or to changed arguments.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// The pending call's id.
    pub tool_call_id: String,
    /// The pending request's `digest`, repeated.
    pub digest: String,
    /// approved, edited, rejected or answered.
    pub decision: DecisionKind,
    /// `edited`: the arguments to run with instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// `rejected`: why (the model reads it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// `answered`: the result content that stands in for the tool's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<Block>>,
}

impl Decision {
    /// Reads a decision from JSON.
    pub fn from_value(value: &Value) -> Result<Decision, FormatError> {
        crate::read::decision(value, &crate::read::Path::root())
    }

    fn on(request: &ApprovalRequest, decision: DecisionKind) -> Decision {
        Decision {
            tool_call_id: request.tool_call_id.clone(),
            digest: request.digest.clone(),
            decision,
            arguments: None,
            reason: None,
            content: None,
        }
    }

    /// Run the call as the model asked.
    ///
    /// ```
    /// # use parlance_format::{ApprovalRequest, Decision, DecisionKind, ToolCall};
    /// # let request = ApprovalRequest::for_call(&ToolCall::new("c1", "refund", serde_json::json!({"amount": 20})));
    /// let d = Decision::approve(&request);
    /// assert_eq!((d.decision, d.digest), (DecisionKind::Approved, request.digest));
    /// ```
    pub fn approve(request: &ApprovalRequest) -> Decision {
        Decision::on(request, DecisionKind::Approved)
    }

    /// Run the call with these arguments instead (validated again).
    pub fn edit(request: &ApprovalRequest, arguments: Value) -> Decision {
        Decision {
            arguments: Some(arguments),
            ..Decision::on(request, DecisionKind::Edited)
        }
    }

    /// Do not run the call; the model reads why.
    pub fn reject(request: &ApprovalRequest, reason: impl Into<String>) -> Decision {
        Decision {
            reason: Some(reason.into()),
            ..Decision::on(request, DecisionKind::Rejected)
        }
    }

    /// Do not run the call; this content stands in for its result.
    pub fn answer(request: &ApprovalRequest, content: impl Into<String>) -> Decision {
        Decision {
            content: Some(vec![Block::text(content)]),
            ..Decision::on(request, DecisionKind::Answered)
        }
    }
}

impl<'de> serde::Deserialize<'de> for Decision {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Decision::from_value(&value).map_err(serde::de::Error::custom)
    }
}

/// The record, on a tool result, of the decision the call went through.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    /// approved, edited, rejected or answered.
    pub decision: DecisionKind,
    /// `edited`: the arguments the tool ran with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// `rejected`: the reviewer's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Response {
    /// Reads a response envelope from JSON.
    pub fn from_value(value: &Value) -> Result<Response, FormatError> {
        crate::read::response(value, &crate::read::Path::root())
    }

    /// The agent this run handed the conversation to, when it did (the
    /// last handoff of its messages): the next turns are that agent's.
    pub fn handoff(&self) -> Option<&str> {
        self.messages.iter().rev().find_map(Message::handoff)
    }

    /// The answer as text: the output when it is a string, the output
    /// written as JSON when it is structured, empty when the run did not
    /// complete.
    pub fn text(&self) -> String {
        match &self.output {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }

    /// A failed run as an error (its code, message and cause); any other
    /// run as it is. A run paused for approval is not an error: check
    /// [`status`](Response::status) or [`pending`](Response::pending).
    // The `Ok` side, a whole `Response`, is larger than the error: boxing
    // the error would save nothing.
    #[allow(clippy::result_large_err)]
    pub fn into_result(self) -> Result<Response, RunError> {
        if self.status != RunStatus::Failed {
            return Ok(self);
        }
        Err(self
            .error
            .unwrap_or_else(|| RunError::new("failed", "the run failed without saying why")))
    }
}

/// A run's response as an earlier turn (only its messages are kept).
impl From<Response> for Turn {
    fn from(r: Response) -> Turn {
        Turn {
            messages: r.messages,
        }
    }
}

impl<'de> serde::Deserialize<'de> for Response {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Response::from_value(&value).map_err(serde::de::Error::custom)
    }
}
