//! Keeping a run's context inside its model's window.
//!
//! An agent with a [`ContextPolicy`] sizes what it is about to send before
//! each model request: the `input_tokens` the provider reported for the
//! last answer, plus an estimate of what was added since (about four bytes
//! of JSON per token; everything is estimated when no answer has reported
//! usage yet). Past [`trigger`](ContextPolicy::trigger) of the window, the
//! policy acts:
//!
//! - [`Strategy::Fail`]: the run fails `context_too_long`, before the
//!   request, with the sizes in the message;
//! - [`Strategy::DropOldest`]: the oldest turns are left out of what is
//!   sent, down to [`keep`](ContextPolicy::keep) of the window;
//! - [`Strategy::Compact`]: the same turns are summarized by a model (the
//!   agent's own, or [`ContextPolicy::model`]) and the summary is sent in
//!   their place.
//!
//! Either way the thread keeps every message: the policy adds one
//! *record*, a stored message whose `metadata.compaction` names how many
//! of the thread's first messages it stands for ([`Compaction`]). What is
//! sent is the instructions, the last record's summary (a drop has none),
//! then the messages after the range. The next run of the thread starts
//! from the record and pays for nothing again. A cut is made only where a
//! user's turn starts, or where a model step starts after the results of
//! the previous one (and not inside a step whose thinking belongs to an
//! earlier message): a tool call is never separated from its result, nor
//! thinking from the answer it belongs to.
//!
//! A provider that still answers `context_too_long` (the window was not
//! known, or the estimate was low) makes the policy act at once, and the
//! request is sent again, once.
//!
//! ```
//! use parlance_agent::{Agent, ContextPolicy};
//! use parlance_model::scripted::ScriptedModel;
//!
//! let agent = Agent::builder(ScriptedModel::new([]))
//!     .context(ContextPolicy::compact().window(32_000).trigger(0.8).keep(0.25))
//!     .build()
//!     .unwrap();
//! assert_eq!(agent.context().unwrap().trigger, 0.8);
//! ```

use std::sync::Arc;

use parlance_format::{Block, Message, Role, ToolSpec};
use parlance_model::Model;
use serde_json::{Map, Value, json};

/// The metadata key of a compaction record.
pub const COMPACTION_KEY: &str = "compaction";

/// What a policy does once the context passes its trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Fail the run (`context_too_long`) before the request.
    Fail,
    /// Leave the oldest turns out of what is sent.
    DropOldest,
    /// Replace the oldest turns with a summary written by a model.
    Compact,
}

impl Strategy {
    /// The strategy's name (`fail`, `drop_oldest`, `compact`), as settings
    /// and records spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Fail => "fail",
            Strategy::DropOldest => "drop_oldest",
            Strategy::Compact => "compact",
        }
    }

    /// Reads a strategy's name.
    pub fn parse(s: &str) -> Result<Strategy, String> {
        match s {
            "fail" => Ok(Strategy::Fail),
            "drop_oldest" | "dropOldest" => Ok(Strategy::DropOldest),
            "compact" => Ok(Strategy::Compact),
            other => Err(format!(
                "expected one of fail, drop_oldest, compact, got {other:?}"
            )),
        }
    }
}

/// The instructions a summary is written with, unless the policy sets its
/// own.
pub const DEFAULT_SUMMARY_INSTRUCTIONS: &str = "You write the summary that replaces the earlier part of a conversation between a user and an AI assistant, which may have used tools. The assistant will continue the conversation with only your summary and the later messages. Keep what it needs: the user's goals and requests, decisions made, facts, names, numbers, identifiers, the results of tool calls that later turns depend on, and what is still open. Write compact notes, in the conversation's language, with no preamble.";

/// How an agent keeps its runs' context inside the model's window (see
/// the [module](self)).
#[derive(Clone)]
pub struct ContextPolicy {
    /// What happens past the trigger.
    pub strategy: Strategy,
    /// The model's window in tokens, over the price table's
    /// ([`parlance_prices::PriceTable::context_window`]). Without either,
    /// the policy acts only when the provider answers `context_too_long`.
    pub window: Option<u64>,
    /// The share of the window past which the policy acts, in (0, 1]
    /// (default 0.8: room is left for the answer).
    pub trigger: f64,
    /// The share of the window the newest messages may fill once the
    /// policy has acted, in (0, trigger) (default 0.25).
    pub keep: f64,
    /// The model that writes summaries (default: the agent's).
    pub model: Option<Arc<dyn Model>>,
    /// The instructions summaries are written with (default
    /// [`DEFAULT_SUMMARY_INSTRUCTIONS`]).
    pub instructions: Option<String>,
}

impl std::fmt::Debug for ContextPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextPolicy")
            .field("strategy", &self.strategy)
            .field("window", &self.window)
            .field("trigger", &self.trigger)
            .field("keep", &self.keep)
            .field("model", &self.model.as_ref().map(|m| m.model_id()))
            .finish_non_exhaustive()
    }
}

impl ContextPolicy {
    fn new(strategy: Strategy) -> Self {
        ContextPolicy {
            strategy,
            window: None,
            trigger: 0.8,
            keep: 0.25,
            model: None,
            instructions: None,
        }
    }

    /// Fail early, with a clear error, past the trigger.
    pub fn fail() -> Self {
        ContextPolicy::new(Strategy::Fail)
    }

    /// Leave the oldest turns out of what is sent.
    pub fn drop_oldest() -> Self {
        ContextPolicy::new(Strategy::DropOldest)
    }

    /// Summarize the oldest turns.
    pub fn compact() -> Self {
        ContextPolicy::new(Strategy::Compact)
    }

    /// Sets the window (tokens).
    pub fn window(mut self, tokens: u64) -> Self {
        self.window = Some(tokens);
        self
    }

    /// Sets the trigger (a share of the window).
    pub fn trigger(mut self, share: f64) -> Self {
        self.trigger = share;
        self
    }

    /// Sets what the newest messages may fill after a cut (a share of the
    /// window).
    pub fn keep(mut self, share: f64) -> Self {
        self.keep = share;
        self
    }

    /// Sets the model that writes summaries.
    pub fn model(mut self, model: impl parlance_model::IntoModel) -> Self {
        self.model = Some(model.into_model());
        self
    }

    /// Sets the instructions summaries are written with.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// The policy's problems, if any: each names its field.
    pub fn check(&self) -> Result<(), ContextError> {
        let bad = |field: &'static str, message: String| Err(ContextError { field, message });
        if !(self.trigger > 0.0 && self.trigger <= 1.0) {
            return bad(
                "trigger",
                format!(
                    "expected a share of the window in (0, 1], got {}",
                    self.trigger
                ),
            );
        }
        if !(self.keep > 0.0 && self.keep < self.trigger) {
            return bad(
                "keep",
                format!(
                    "expected a share of the window above 0 and below the trigger ({}), got {}",
                    self.trigger, self.keep
                ),
            );
        }
        if self.window == Some(0) {
            return bad(
                "window",
                "expected a positive number of tokens, got 0".into(),
            );
        }
        Ok(())
    }

    /// The policy as JSON, for the run's recorded settings.
    pub fn settings(&self) -> Value {
        json!({
            "strategy": self.strategy.as_str(),
            "window": self.window,
            "trigger": self.trigger,
            "keep": self.keep,
            "model": self.model.as_ref().map(|m| format!("{}:{}", m.provider(), m.model_id())),
        })
    }
}

/// A context policy out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("context.{field}: {message}")]
pub struct ContextError {
    /// The field (`trigger`, `keep`, `window`).
    pub field: &'static str,
    /// What is wrong with it.
    pub message: String,
}

/// What a compaction record says (its `metadata.compaction`).
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// `compact` or `drop_oldest`.
    pub strategy: Strategy,
    /// The record stands for the thread's first `replaces` messages.
    pub replaces: usize,
    /// The estimated size of the context before, in tokens.
    pub tokens_before: u64,
    /// The estimated size after (the summary not counted).
    pub tokens_after: u64,
}

impl Compaction {
    /// The record's metadata.
    pub fn to_metadata(&self, model: Option<String>) -> Map<String, Value> {
        let mut m = json!({
            "strategy": self.strategy.as_str(),
            "replaces": self.replaces,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
        });
        if let Some(model) = model {
            m["model"] = Value::String(model);
        }
        Map::from_iter([(COMPACTION_KEY.to_string(), m)])
    }

    /// The compaction a message records, if it is a record.
    pub fn of(message: &Message) -> Option<Compaction> {
        let c = message.metadata.as_ref()?.get(COMPACTION_KEY)?;
        Some(Compaction {
            strategy: Strategy::parse(c.get("strategy")?.as_str()?).ok()?,
            replaces: usize::try_from(c.get("replaces")?.as_u64()?).ok()?,
            tokens_before: c.get("tokens_before").and_then(Value::as_u64).unwrap_or(0),
            tokens_after: c.get("tokens_after").and_then(Value::as_u64).unwrap_or(0),
        })
    }
}

/// Whether a message is a compaction record.
pub fn is_record(message: &Message) -> bool {
    message
        .metadata
        .as_ref()
        .is_some_and(|m| m.contains_key(COMPACTION_KEY))
}

/// The estimated tokens of a message: its JSON's bytes over four, plus a
/// few for its framing. Deliberately simple and on the high side for
/// prose; the provider's reported count replaces it as soon as there is
/// one.
pub fn estimate_message(message: &Message) -> u64 {
    let bytes: usize = message
        .content
        .iter()
        .map(|b| match b {
            Block::Text(t) => t.text.len(),
            other => serde_json::to_vec(other).map_or(0, |v| v.len()),
        })
        .sum();
    (bytes as u64).div_ceil(4) + 4
}

/// The estimated tokens of the tools' definitions.
pub fn estimate_tools(tools: &[ToolSpec]) -> u64 {
    if tools.is_empty() {
        return 0;
    }
    serde_json::to_vec(tools)
        .map_or(0, |v| v.len() as u64)
        .div_ceil(4)
}

/// The size of `sent` (the messages as they go to the model): the last
/// answer's reported input and output, plus estimates of what follows it;
/// when no answer after `fresh_from` reported usage, the estimate of it
/// all and of the tools. Answers before `fresh_from` were given a
/// different context (before a cut), so their counts do not apply.
pub fn context_size(sent: &[&Message], fresh_from: usize, tools: &[ToolSpec]) -> u64 {
    let last = sent
        .iter()
        .enumerate()
        .skip(fresh_from)
        .rev()
        .find_map(|(i, m)| (m.role == Role::Assistant).then_some(m.usage.map(|u| (i, u)))?);
    match last {
        Some((i, u)) => {
            u.input_tokens
                + u.output_tokens
                + sent[i + 1..]
                    .iter()
                    .map(|m| estimate_message(m))
                    .sum::<u64>()
        }
        None => sent.iter().map(|m| estimate_message(m)).sum::<u64>() + estimate_tools(tools),
    }
}

/// Whether the messages before `at` can be cut from those from `at` on:
/// `at` starts a user's turn, or a model step after the previous step's
/// results whose turn has no thinking it would lose (the step starts with
/// its own, or nothing before it in the turn has any).
pub fn can_cut(messages: &[&Message], at: usize) -> bool {
    let (Some(m), Some(prev)) = (messages.get(at), at.checked_sub(1).map(|p| messages[p])) else {
        return false;
    };
    match m.role {
        Role::User => true,
        Role::Assistant if prev.role == Role::Tool => {
            if matches!(m.content.first(), Some(Block::Thinking(_))) {
                return true;
            }
            let turn_start = messages[..at]
                .iter()
                .rposition(|m| m.role == Role::User)
                .map_or(0, |u| u + 1);
            !messages[turn_start..at].iter().any(|m| {
                m.role == Role::Assistant
                    && m.content.iter().any(|b| matches!(b, Block::Thinking(_)))
            })
        }
        _ => false,
    }
}

/// Where to cut `messages[from..]` so that what stays (plus `fixed`
/// tokens: the instructions, the tools) fits in `budget` tokens: the
/// earliest cut that fits (the most kept), else the latest cut there is.
/// `None` when no cut is possible after `from`.
pub fn choose_cut(messages: &[&Message], from: usize, fixed: u64, budget: u64) -> Option<usize> {
    let mut kept = fixed;
    let mut best = None;
    let mut latest = None;
    // From the newest message back: the sum of what a cut at `i` keeps.
    for i in (from + 1..messages.len()).rev() {
        kept += estimate_message(messages[i]);
        if !can_cut(messages, i) {
            continue;
        }
        latest.get_or_insert(i);
        if kept <= budget {
            best = Some(i);
        } else {
            break;
        }
    }
    best.or(latest)
}

/// The messages of a range as a transcript a summarizer reads (text,
/// tool calls and results; thinking and opaque data left out).
pub fn transcript<'a>(messages: impl IntoIterator<Item = &'a Message>) -> String {
    let mut out = String::new();
    for m in messages {
        let who = if is_record(m) {
            "summary of what came before"
        } else {
            match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool",
            }
        };
        out.push_str("## ");
        out.push_str(who);
        out.push('\n');
        for b in &m.content {
            match b {
                Block::Text(t) => out.push_str(&t.text),
                Block::Thinking(_) | Block::CachePoint { .. } => continue,
                Block::Json { json } => out.push_str(&json.to_string()),
                Block::ToolCall { tool_call: c } => {
                    out.push_str(&format!("[call {} ({})] {}", c.name, c.id, c.arguments))
                }
                Block::ToolResult { tool_result: r } => {
                    let text: Vec<String> = r
                        .content
                        .iter()
                        .map(|b| match b {
                            Block::Text(t) => t.text.clone(),
                            Block::Json { json } => json.to_string(),
                            other => format!("[{}]", other.type_name()),
                        })
                        .collect();
                    out.push_str(&format!(
                        "[result of {} ({}): {}] {}",
                        r.name.as_deref().unwrap_or("a tool"),
                        r.tool_call_id,
                        r.status.as_str(),
                        text.join(" ")
                    ))
                }
                other => out.push_str(&format!("[{}]", other.type_name())),
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// The first line of a summary as it is sent.
pub const SUMMARY_HEADING: &str =
    "Summary of the earlier conversation (it stands for the messages before this one):";

#[cfg(test)]
mod tests {
    use super::*;
    use parlance_format::{Thinking, ToolResult, ToolStatus, Usage};

    fn call(id: &str) -> Message {
        Message::new(
            Role::Assistant,
            vec![Block::tool_call(id, "lookup", json!({"q": id}))],
        )
    }

    fn result(id: &str, text: &str) -> Message {
        Message::new(
            Role::Tool,
            vec![Block::tool_result(ToolResult::text(
                id,
                ToolStatus::Ok,
                text,
            ))],
        )
    }

    fn thinking_call(id: &str) -> Message {
        let mut m = call(id);
        let thinking = Thinking {
            thinking: "let me look".into(),
            ..Thinking::default()
        };
        m.content.insert(0, Block::Thinking(thinking));
        m
    }

    #[test]
    fn cuts_fall_on_user_turns_and_on_steps_after_results_never_inside_a_step() {
        let ms = [
            Message::system("be brief"),
            Message::user("first"),
            call("a"),
            result("a", "A"),
            Message::assistant("done"),
            Message::user("second"),
        ];
        let ms: Vec<&Message> = ms.iter().collect();
        let cuts: Vec<usize> = (0..ms.len()).filter(|&i| can_cut(&ms, i)).collect();
        // 1 and 5: user turns; 4: the step after a's result. Never 3 (a
        // result without its call), 2 (a call after a user's message is
        // not after results) or 0.
        assert_eq!(cuts, vec![1, 4, 5]);
    }

    #[test]
    fn a_step_is_not_cut_from_the_thinking_its_turn_began_with() {
        let ms = [
            Message::user("go"),
            thinking_call("a"),
            result("a", "A"),
            call("b"),
            result("b", "B"),
            thinking_call("c"),
        ];
        // 3 would leave b's step without the thinking of its turn; 5
        // starts with its own.
        let ms: Vec<&Message> = ms.iter().collect();
        let cuts: Vec<usize> = (0..ms.len()).filter(|&i| can_cut(&ms, i)).collect();
        assert_eq!(cuts, vec![5]);
    }

    #[test]
    fn the_cut_keeps_as_much_as_fits_else_as_little_as_it_can() {
        let big = "x".repeat(400); // ~104 tokens a message
        let ms = [
            Message::system("s"),
            Message::user(big.clone()),
            Message::assistant(big.clone()),
            Message::user(big.clone()),
            Message::assistant(big.clone()),
            Message::user(big.clone()),
        ];
        let ms: Vec<&Message> = ms.iter().collect();
        // Room for three messages: the cut at 3 keeps 3, 4, 5.
        assert_eq!(choose_cut(&ms, 1, 0, 320), Some(3));
        // Room for one: 5.
        assert_eq!(choose_cut(&ms, 1, 0, 110), Some(5));
        // Room for none: still the latest cut.
        assert_eq!(choose_cut(&ms, 1, 0, 10), Some(5));
        // Fixed costs count against the budget.
        assert_eq!(choose_cut(&ms, 1, 100, 320), Some(5));
        // Nothing to cut after the last message.
        assert_eq!(choose_cut(&ms, 5, 0, 10), None);
    }

    #[test]
    fn the_size_is_the_last_reported_count_plus_estimates_of_what_followed() {
        let mut answer = Message::assistant("ok");
        answer.usage = Some(Usage {
            input_tokens: 1000,
            output_tokens: 50,
            ..Usage::default()
        });
        let later = Message::user("y".repeat(400));
        let owned = [Message::user("x"), answer, later.clone()];
        let ms: Vec<&Message> = owned.iter().collect();
        assert_eq!(context_size(&ms, 0, &[]), 1050 + estimate_message(&later));
        // An answer from before a cut does not count: all is estimated.
        let all: u64 = owned.iter().map(estimate_message).sum();
        assert_eq!(context_size(&ms, 2, &[]), all);
    }

    #[test]
    fn a_policy_out_of_range_names_its_field() {
        assert_eq!(ContextPolicy::compact().check(), Ok(()));
        for (p, field) in [
            (ContextPolicy::compact().trigger(0.0), "trigger"),
            (ContextPolicy::compact().trigger(1.5), "trigger"),
            (ContextPolicy::compact().trigger(f64::NAN), "trigger"),
            (ContextPolicy::compact().keep(0.9), "keep"),
            (ContextPolicy::compact().keep(0.0), "keep"),
            (ContextPolicy::compact().window(0), "window"),
        ] {
            assert_eq!(p.check().unwrap_err().field, field);
        }
    }

    #[test]
    fn a_record_reads_back_what_it_wrote() {
        let c = Compaction {
            strategy: Strategy::Compact,
            replaces: 7,
            tokens_before: 900,
            tokens_after: 200,
        };
        let mut m = Message::user("summary");
        m.metadata = Some(c.to_metadata(Some("openai:gpt-4o-mini".into())));
        assert_eq!(Compaction::of(&m), Some(c));
        assert!(is_record(&m));
        assert!(!is_record(&Message::user("x")));
    }

    #[test]
    fn the_transcript_shows_calls_and_results_not_thinking() {
        let t = transcript(&[Message::user("hi"), thinking_call("a"), result("a", "42")]);
        assert!(t.contains("## user\nhi\n"), "{t}");
        assert!(t.contains("[call lookup (a)] {\"q\":\"a\"}"), "{t}");
        assert!(t.contains("[result of a tool (a): ok] 42"), "{t}");
        assert!(!t.contains("let me look"), "{t}");
    }
}
