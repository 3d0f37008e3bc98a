//! Guardrails: the application's checks, run by the engine at three points
//! of a run, each deciding what happens next.
//!
//! | point | runs | a `block` | a `replace` | a `retry` | `require_approval` |
//! |---|---|---|---|---|---|
//! | [`GuardPoint::Input`] | on a new run's input, before it is stored or sent | ends the run | rewrites the input (text, or whole messages) | — | — |
//! | [`GuardPoint::ToolCall`] | on each call with valid arguments, before it waits or runs | ends the run | rewrites the arguments (checked again) | the call does not run; the model reads why | the call waits in the inbox |
//! | [`GuardPoint::Output`] | on the final answer, before it leaves the run | ends the run | rewrites the answer | the model answers again | — |
//!
//! A blocked run ends `failed` with code `blocked`: its error's message is
//! the guardrail's message for the user, which is also the text of the
//! run's last (assistant) message, so a thread reads as a conversation.
//! Each outcome other than `allow` is recorded in the `guardrails` list of
//! the affected message's `metadata` (never sent to a model), with the
//! reason given for operators. A blocked input stays in the thread but is
//! never sent to a model again.
//!
//! While a run streams, an agent with an output guardrail holds the
//! answer's text until the guardrail lets it through ([`OutputHold`]), so
//! no text a guardrail blocks reaches a client.
//!
//! ```
//! # use parlance_agent::{Agent, guardrail::{Guardrail, Verdict}};
//! # use parlance_model::scripted::ScriptedModel;
//! # use parlance_format::Message;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let no_refunds = Guardrail::output("no_refund_promises", |g| async move {
//!     Ok(if g.text.contains("refund") {
//!         Verdict::block("I can't promise refunds here; an agent will call you.")
//!             .because("refund promised")
//!     } else {
//!         Verdict::Allow
//!     })
//! });
//! let agent = Agent::builder(ScriptedModel::new([Message::assistant("Sure, a full refund!")]))
//!     .guardrail(no_refunds)
//!     .build()
//!     .unwrap();
//! let r = agent.run("Can I get my money back?").await;
//! assert_eq!(r.error.as_ref().unwrap().code, "blocked");
//! assert_eq!(r.messages[1].text(), "I can't promise refunds here; an agent will call you.");
//! # }
//! ```

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use parlance_format::{Block, Message, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// Where a guardrail runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GuardPoint {
    /// A new run's input, before the first model request.
    Input,
    /// A tool call whose arguments are valid, before it waits or runs.
    ToolCall,
    /// The final answer, before it leaves the run.
    Output,
}

impl GuardPoint {
    /// Every point, in the order a run meets them.
    pub const ALL: [GuardPoint; 3] = [GuardPoint::Input, GuardPoint::ToolCall, GuardPoint::Output];

    /// The canonical spelling (`input`, `tool_call`, `output`).
    pub fn as_str(self) -> &'static str {
        match self {
            GuardPoint::Input => "input",
            GuardPoint::ToolCall => "tool_call",
            GuardPoint::Output => "output",
        }
    }

    /// The point named `s`, or an error listing the known ones.
    pub fn parse(s: &str) -> Result<GuardPoint, String> {
        GuardPoint::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                format!("unknown guardrail point {s:?} (known: input, tool_call, output)")
            })
    }
}

/// What a guardrail is shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Guarded {
    /// Where it runs.
    pub point: GuardPoint,
    /// The text looked at: the input's text, the answer's text (the JSON
    /// of a structured answer as the model wrote it), or, for a tool
    /// call, the arguments as JSON text.
    pub text: String,
    /// The input messages (input), the answer (output); empty for a call.
    pub messages: Vec<Message>,
    /// The call (tool call point only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<ToolCall>,
    /// The structured value: the call's arguments, a structured answer's
    /// value (or the answer's text), `null` for the input.
    pub value: Value,
    /// `true` while a streamed answer is checked sentence by sentence
    /// ([`OutputHold::Sentence`]): `text` is the answer so far. Only
    /// `allow` lets that text out early; anything else holds the rest
    /// until the whole answer is checked.
    pub partial: bool,
    /// The run's thread, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

/// What a guardrail decides.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Goes on unchanged.
    Allow,
    /// Ends the run: `message` is for the user (the run's last message and
    /// its error's message); `reason` is for operators (recorded in the
    /// message's metadata, never sent to a model).
    Block {
        /// For the user.
        message: String,
        /// For operators.
        reason: Option<String>,
    },
    /// Goes on with `value` in place of what was checked: the input's new
    /// text (or a list of canonical messages), the call's new arguments,
    /// the new answer (text, or the structured value).
    Replace {
        /// The replacement.
        value: Value,
        /// For operators.
        reason: Option<String>,
    },
    /// Tells the model why and lets it try again: a call does not run (its
    /// result says why), an answer goes back (within the output retries).
    Retry {
        /// What the model reads.
        message: String,
    },
    /// The call waits for a human's decision (tool calls only).
    RequireApproval {
        /// For operators (and the reviewer, in the inbox).
        reason: Option<String>,
    },
}

impl Verdict {
    /// [`Verdict::Block`] with a message for the user.
    pub fn block(message: impl Into<String>) -> Verdict {
        Verdict::Block {
            message: message.into(),
            reason: None,
        }
    }

    /// [`Verdict::Replace`].
    pub fn replace(value: impl Into<Value>) -> Verdict {
        Verdict::Replace {
            value: value.into(),
            reason: None,
        }
    }

    /// [`Verdict::Retry`] with what the model reads.
    pub fn retry(message: impl Into<String>) -> Verdict {
        Verdict::Retry {
            message: message.into(),
        }
    }

    /// [`Verdict::RequireApproval`].
    pub fn require_approval() -> Verdict {
        Verdict::RequireApproval { reason: None }
    }

    /// The same verdict with a reason for operators (ignored by `allow` and
    /// `retry`, whose message is the reason).
    pub fn because(mut self, why: impl Into<String>) -> Verdict {
        match &mut self {
            Verdict::Block { reason, .. }
            | Verdict::Replace { reason, .. }
            | Verdict::RequireApproval { reason } => *reason = Some(why.into()),
            Verdict::Allow | Verdict::Retry { .. } => {}
        }
        self
    }

    /// The outcome's name, as recorded: `allow`, `block`, `replace`,
    /// `retry`, `require_approval`.
    pub fn outcome(&self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Block { .. } => "block",
            Verdict::Replace { .. } => "replace",
            Verdict::Retry { .. } => "retry",
            Verdict::RequireApproval { .. } => "require_approval",
        }
    }

    /// A verdict from JSON, as the packages' guardrails return it: `null`
    /// or `{"action": "allow"}`, `{"action": "block", "message", "reason"?}`,
    /// `{"action": "replace", "value", "reason"?}`, `{"action": "retry",
    /// "message"}`, `{"action": "require_approval", "reason"?}`. The error
    /// names what is wrong and where.
    pub fn from_value(v: &Value) -> Result<Verdict, String> {
        if v.is_null() {
            return Ok(Verdict::Allow);
        }
        let Some(o) = v.as_object() else {
            return Err(format!(
                "a verdict is an object with an \"action\" (or null to allow), not {}",
                kind(v)
            ));
        };
        let text = |key: &str, required: bool| -> Result<Option<String>, String> {
            match o.get(key) {
                None | Some(Value::Null) if !required => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                None | Some(Value::Null) => Err(format!("{key}: required")),
                Some(other) => Err(format!("{key}: a string, not {}", kind(other))),
            }
        };
        let action = match o.get("action") {
            Some(Value::String(s)) => s.as_str(),
            None => return Err("action: required".into()),
            Some(other) => return Err(format!("action: a string, not {}", kind(other))),
        };
        let allowed: &[&str] = match action {
            "allow" => &["action"],
            "block" | "retry" => &["action", "message", "reason"],
            "replace" => &["action", "value", "reason"],
            "require_approval" => &["action", "reason"],
            other => {
                return Err(format!(
                    "action: unknown action {other:?} (known: allow, block, replace, retry, require_approval)"
                ));
            }
        };
        if let Some(k) = o.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!("{k}: not a field of a {action} verdict"));
        }
        Ok(match action {
            "allow" => Verdict::Allow,
            "block" => Verdict::Block {
                message: text("message", true)?.unwrap_or_default(),
                reason: text("reason", false)?,
            },
            "retry" => Verdict::Retry {
                message: text("message", true)?.unwrap_or_default(),
            },
            "replace" => Verdict::Replace {
                value: o.get("value").cloned().ok_or("value: required")?,
                reason: text("reason", false)?,
            },
            _ => Verdict::RequireApproval {
                reason: text("reason", false)?,
            },
        })
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A guardrail's own failure (an exception, an error): the run fails with
/// code `guardrail_failed`, naming the guardrail.
pub type GuardError = Box<dyn std::error::Error + Send + Sync>;

type GuardFn = dyn Fn(Guarded) -> BoxFuture<'static, Result<Verdict, GuardError>> + Send + Sync;

/// A check the engine runs at one [`GuardPoint`] (see the module's doc).
#[derive(Clone)]
pub struct Guardrail {
    name: Arc<str>,
    point: GuardPoint,
    check: Arc<GuardFn>,
}

impl std::fmt::Debug for Guardrail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guardrail")
            .field("name", &self.name)
            .field("point", &self.point)
            .finish()
    }
}

impl Guardrail {
    /// A guardrail at `point`, named for the records and errors.
    pub fn new<F, Fut>(name: impl Into<String>, point: GuardPoint, check: F) -> Guardrail
    where
        F: Fn(Guarded) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Verdict, GuardError>> + Send + 'static,
    {
        Guardrail {
            name: Arc::from(name.into()),
            point,
            check: Arc::new(move |g| Box::pin(check(g))),
        }
    }

    /// A guardrail on a new run's input.
    pub fn input<F, Fut>(name: impl Into<String>, check: F) -> Guardrail
    where
        F: Fn(Guarded) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Verdict, GuardError>> + Send + 'static,
    {
        Guardrail::new(name, GuardPoint::Input, check)
    }

    /// A guardrail on each tool call with valid arguments.
    pub fn tool_call<F, Fut>(name: impl Into<String>, check: F) -> Guardrail
    where
        F: Fn(Guarded) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Verdict, GuardError>> + Send + 'static,
    {
        Guardrail::new(name, GuardPoint::ToolCall, check)
    }

    /// A guardrail on the final answer.
    pub fn output<F, Fut>(name: impl Into<String>, check: F) -> Guardrail
    where
        F: Fn(Guarded) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Verdict, GuardError>> + Send + 'static,
    {
        Guardrail::new(name, GuardPoint::Output, check)
    }

    /// Replaces what `scrub` changes in every string checked (the input's
    /// text blocks, a call's argument strings, the answer): a redaction.
    /// `scrub` returns `None` for a string it leaves alone. The server's
    /// secret scrubber is one; a pattern is another ([`Self::redact_pattern`]).
    pub fn redact(
        name: impl Into<String>,
        point: GuardPoint,
        scrub: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Guardrail {
        let scrub = Arc::new(scrub);
        Guardrail::new(name, point, move |g| {
            let scrub = Arc::clone(&scrub);
            async move {
                Ok(match g.scrubbed(&*scrub) {
                    Some(value) => Verdict::replace(value).because("redacted"),
                    None => Verdict::Allow,
                })
            }
        })
    }

    /// Replaces each match of `pattern` by `with` (a redaction).
    pub fn redact_pattern(
        name: impl Into<String>,
        point: GuardPoint,
        pattern: regex::Regex,
        with: impl Into<String>,
    ) -> Guardrail {
        let with = with.into();
        Guardrail::redact(name, point, move |s| {
            match pattern.replace_all(s, with.as_str()) {
                std::borrow::Cow::Borrowed(_) => None,
                std::borrow::Cow::Owned(o) => Some(o),
            }
        })
    }

    /// Blocks when `pattern` matches the text checked, with `message` for
    /// the user.
    pub fn block_pattern(
        name: impl Into<String>,
        point: GuardPoint,
        pattern: regex::Regex,
        message: impl Into<String>,
    ) -> Guardrail {
        let message: Arc<str> = Arc::from(message.into());
        Guardrail::new(name, point, move |g| {
            // The reason does not repeat the match: it may be the secret.
            let hit = pattern.is_match(&g.text);
            let message = Arc::clone(&message);
            async move {
                Ok(match hit {
                    true => Verdict::block(&*message).because("matched its pattern"),
                    false => Verdict::Allow,
                })
            }
        })
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where it runs.
    pub fn point(&self) -> GuardPoint {
        self.point
    }

    /// Runs it.
    pub async fn check(&self, g: Guarded) -> Result<Verdict, GuardError> {
        (self.check)(g).await
    }
}

impl Guarded {
    /// The replacement a redaction makes, when it changes anything: the
    /// input messages with their text blocks scrubbed, the arguments or
    /// the answer with their strings scrubbed.
    fn scrubbed(&self, scrub: &dyn Fn(&str) -> Option<String>) -> Option<Value> {
        match self.point {
            GuardPoint::Input => {
                let mut changed = false;
                let mut messages = self.messages.clone();
                for b in messages.iter_mut().flat_map(|m| m.content.iter_mut()) {
                    if let Block::Text(t) = b
                        && let Some(s) = scrub(&t.text)
                    {
                        t.text = s;
                        changed = true;
                    }
                }
                changed.then(|| serde_json::to_value(messages).expect("json"))
            }
            GuardPoint::ToolCall | GuardPoint::Output => scrub_strings(&self.value, scrub),
        }
    }
}

/// `v` with every string `scrub` changes replaced, or `None` when none is.
fn scrub_strings(v: &Value, scrub: &dyn Fn(&str) -> Option<String>) -> Option<Value> {
    match v {
        Value::String(s) => scrub(s).map(Value::String),
        Value::Array(items) => {
            let mut out: Option<Vec<Value>> = None;
            for (i, item) in items.iter().enumerate() {
                if let Some(new) = scrub_strings(item, scrub) {
                    out.get_or_insert_with(|| items.clone())[i] = new;
                }
            }
            out.map(Value::Array)
        }
        Value::Object(map) => {
            let mut out: Option<Map<String, Value>> = None;
            for (k, item) in map {
                if let Some(new) = scrub_strings(item, scrub) {
                    out.get_or_insert_with(|| map.clone())
                        .insert(k.clone(), new);
                }
            }
            out.map(Value::Object)
        }
        _ => None,
    }
}

/// How a streamed answer's text is held while an output guardrail runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputHold {
    /// The whole answer is checked before any of its text is sent.
    #[default]
    Answer,
    /// Each sentence is sent once the guardrails allow the answer so far
    /// (they see `partial: true`); the whole answer is checked at the end.
    Sentence,
}

impl OutputHold {
    /// The hold named `s` (`answer`, `sentence`).
    pub fn parse(s: &str) -> Result<OutputHold, String> {
        match s {
            "answer" => Ok(OutputHold::Answer),
            "sentence" => Ok(OutputHold::Sentence),
            other => Err(format!(
                "unknown output hold {other:?} (known: answer, sentence)"
            )),
        }
    }
}

/// The metadata key that lists a message's guardrail outcomes.
pub const GUARDRAILS_KEY: &str = "guardrails";

/// One outcome, as recorded in a message's metadata.
pub(crate) fn record(
    name: &str,
    point: GuardPoint,
    verdict: &Verdict,
    call: Option<&str>,
) -> Value {
    let mut r = json!({"name": name, "point": point.as_str(), "outcome": verdict.outcome()});
    let reason = match verdict {
        Verdict::Block { reason, .. }
        | Verdict::Replace { reason, .. }
        | Verdict::RequireApproval { reason } => reason.clone(),
        Verdict::Retry { message } => Some(message.clone()),
        Verdict::Allow => None,
    };
    if let Some(reason) = reason {
        r["reason"] = Value::String(reason);
    }
    if let Some(id) = call {
        r["tool_call_id"] = Value::String(id.to_string());
    }
    r
}

/// Adds outcome records to a message's metadata.
pub(crate) fn note(message: &mut Message, records: impl IntoIterator<Item = Value>) {
    let mut records = records.into_iter().peekable();
    if records.peek().is_none() {
        return;
    }
    let metadata = message.metadata.get_or_insert_with(Map::new);
    let list = metadata
        .entry(GUARDRAILS_KEY)
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    if let Value::Array(list) = list {
        list.extend(records);
    }
}

/// Whether a message is withheld from models: a blocked input, and the
/// answer that stands for it.
pub(crate) fn withheld(message: &Message) -> bool {
    outcomes(message).any(|r| r["point"] == "input" && r["outcome"] == "block")
}

/// Whether a run that ended with `message` was blocked.
pub(crate) fn blocked(message: &Message) -> bool {
    outcomes(message).any(|r| r["outcome"] == "block")
}

fn outcomes(message: &Message) -> impl Iterator<Item = &Value> {
    message
        .metadata
        .as_ref()
        .and_then(|m| m.get(GUARDRAILS_KEY))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_read_from_json_with_their_errors() {
        assert_eq!(Verdict::from_value(&Value::Null), Ok(Verdict::Allow));
        assert_eq!(
            Verdict::from_value(&json!({"action": "block", "message": "no", "reason": "r"})),
            Ok(Verdict::block("no").because("r"))
        );
        assert_eq!(
            Verdict::from_value(&json!({"action": "replace", "value": {"a": 1}})),
            Ok(Verdict::replace(json!({"a": 1})))
        );
        assert_eq!(
            Verdict::from_value(&json!({"action": "retry", "message": "why"})),
            Ok(Verdict::retry("why"))
        );
        assert_eq!(
            Verdict::from_value(&json!({"action": "require_approval"})),
            Ok(Verdict::require_approval())
        );
        for (v, e) in [
            (
                json!("block"),
                "a verdict is an object with an \"action\" (or null to allow), not a string",
            ),
            (json!({}), "action: required"),
            (json!({"action": 1}), "action: a string, not a number"),
            (
                json!({"action": "stop"}),
                "action: unknown action \"stop\" (known: allow, block, replace, retry, require_approval)",
            ),
            (json!({"action": "block"}), "message: required"),
            (
                json!({"action": "block", "message": 3}),
                "message: a string, not a number",
            ),
            (json!({"action": "replace"}), "value: required"),
            (
                json!({"action": "allow", "message": "x"}),
                "message: not a field of a allow verdict",
            ),
        ] {
            assert_eq!(Verdict::from_value(&v), Err(e.to_string()), "{v}");
        }
    }

    #[test]
    fn a_redaction_changes_only_the_strings_it_scrubs() {
        let scrub = |s: &str| s.contains("4111").then(|| s.replace("4111", "****"));
        let v = json!({"card": "4111 1111", "n": 3, "list": ["ok", "x4111"]});
        assert_eq!(
            scrub_strings(&v, &scrub),
            Some(json!({"card": "**** 1111", "n": 3, "list": ["ok", "x****"]}))
        );
        assert_eq!(scrub_strings(&json!({"a": "fine"}), &scrub), None);
    }

    #[test]
    fn records_go_in_a_list_and_withhold_only_blocked_input() {
        let mut m = Message::user("hi");
        note(
            &mut m,
            [record(
                "g",
                GuardPoint::Input,
                &Verdict::block("no").because("r"),
                None,
            )],
        );
        assert_eq!(
            m.metadata.as_ref().unwrap()["guardrails"],
            json!([{"name": "g", "point": "input", "outcome": "block", "reason": "r"}])
        );
        assert!(withheld(&m) && blocked(&m));
        let mut answer = Message::assistant("x");
        note(
            &mut answer,
            [record("g", GuardPoint::Output, &Verdict::block("no"), None)],
        );
        assert!(!withheld(&answer) && blocked(&answer));
        assert_eq!(GuardPoint::parse("tool_call"), Ok(GuardPoint::ToolCall));
        assert!(
            GuardPoint::parse("tools")
                .unwrap_err()
                .contains("known: input")
        );
    }
}
