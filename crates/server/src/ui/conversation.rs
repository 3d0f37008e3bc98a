//! A thread as people read it: run by run (status, time, usage, error),
//! the text of each message, thinking folded, each tool call with its
//! arguments and, right under it, its result (status, the decision it
//! went through, content; the artifact for operators only).

use std::collections::HashMap;

use maud::{Markup, html};
use parlance_agent::{Compaction, ContextStrategy};
use parlance_format::{Block, Message, Role, ToolResult};
use parlance_store::{RunRecord, StoredMessage};

use super::args::{pretty, with_raw};
use super::page::{badge, when};
use super::session::Viewer;
use crate::threads::Totals;

/// What a thread page shows of one run besides its messages.
pub struct RunActions {
    /// The last run failed and its agent is configured here: a retry
    /// button.
    pub retry: bool,
}

/// The thread's runs and messages.
pub fn body(
    thread_id: &str,
    runs: &[RunRecord],
    messages: &[StoredMessage],
    viewer: &Viewer,
    actions: &RunActions,
) -> Markup {
    let mut results: HashMap<&str, &ToolResult> = HashMap::new();
    let mut waiting: HashMap<&str, ()> = HashMap::new();
    for m in messages {
        for b in &m.message.content {
            match b {
                Block::ToolResult { tool_result } => {
                    results.insert(&tool_result.tool_call_id, tool_result);
                }
                Block::ApprovalRequest { approval_request } => {
                    waiting.insert(&approval_request.tool_call_id, ());
                }
                _ => {}
            }
        }
    }
    let calls: HashMap<&str, ()> = messages
        .iter()
        .flat_map(|m| m.message.tool_calls())
        .map(|c| (c.id.as_str(), ()))
        .collect();
    let ctx = Ctx {
        results,
        waiting,
        calls,
        viewer,
    };
    let before: Vec<&StoredMessage> = messages.iter().filter(|m| m.run_id.is_none()).collect();
    let last = runs.last().map(|r| r.id.as_str());
    let totals = Totals::of(messages.iter().map(|m| &m.message));
    html! {
        @if totals.model_calls > 0 {
            p .totals .muted {
                "This thread: " (totals.tokens) " tokens"
                @if let Some(c) = totals.cost { " · " span .cost title="US dollars" { (usd(c)) } }
                " · " (totals.model_calls) " model calls · " (totals.tool_calls) " tool calls"
            }
        }
        @if !before.is_empty() {
            section .run {
                @for m in &before { (ctx.message(m)) }
            }
        }
        @if runs.is_empty() && before.is_empty() { p .empty { "This thread has no message yet." } }
        @for r in runs {
            section .run id={ "run-" (r.id) } data-status=(r.status) {
                (run_header(thread_id, r, Some(r.id.as_str()) == last && actions.retry, viewer))
                @let own: Vec<&StoredMessage> = messages.iter().filter(|m| m.run_id.as_deref() == Some(r.id.as_str())).collect();
                @if let Some(c) = parlance_format::total_cost(own.iter().map(|m| &m.message)) {
                    p .meta .run-cost { "Cost " span .cost title="US dollars" { (usd(c)) } }
                }
                @for m in &own {
                    (ctx.message(m))
                }
            }
        }
    }
}

/// Dollars as people read them: cents for a dollar or more, else four
/// significant digits (`$0.004213`).
fn usd(c: f64) -> String {
    if c >= 1.0 {
        format!("${c:.2}")
    } else if c == 0.0 {
        "$0".into()
    } else {
        let digits = (3 - c.log10().floor() as i32).clamp(2, 12) as usize;
        format!("${c:.digits$}")
    }
}

fn run_header(thread_id: &str, r: &RunRecord, retry: bool, viewer: &Viewer) -> Markup {
    let usage = r.usage.unwrap_or_default();
    html! {
        header .run-head {
            h2 { "Run " code { (r.id) } }
            (badge(&r.status))
            span .meta {
                (r.settings["name"].as_str().unwrap_or("(inline agent)"))
                " · " (when(r.created_at))
                " · " span .usage title="tokens" {
                    (usage.input_tokens) " in, " (usage.output_tokens) " out"
                    @if usage.cached_tokens > 0 { ", " (usage.cached_tokens) " cached" }
                    @if let Some(t) = usage.reasoning_tokens { ", " (t) " reasoning" }
                    " tokens"
                }
            }
        }
        @if let Some(e) = &r.error {
            p .error .run-error role="alert" {
                strong { (e["code"].as_str().unwrap_or("error")) } ": " (e["message"].as_str().unwrap_or(""))
            }
            @if let Some(cause) = e.get("cause").filter(|c| !c.is_null()) {
                details .raw { summary { "Cause" } pre { code { (pretty(cause)) } } }
            }
        }
        @if r.status == "requires_approval" {
            p { a .button .primary href={ "/ui/runs/" (r.id) } { "Decide" } }
        }
        @if r.status == "running" { p .muted .running { "Running…" } }
        @if retry {
            form method="post" action={ "/ui/threads/" (thread_id) "/retry" } .retry {
                input type="hidden" name="csrf" value=(viewer.csrf);
                button type="submit" .primary { "Retry this run" }
                span .muted { " Failed calls run again; the others keep their results." }
            }
        }
    }
}

struct Ctx<'a> {
    results: HashMap<&'a str, &'a ToolResult>,
    waiting: HashMap<&'a str, ()>,
    calls: HashMap<&'a str, ()>,
    viewer: &'a Viewer,
}

impl Ctx<'_> {
    fn message(&self, m: &StoredMessage) -> Markup {
        let msg = &m.message;
        let role = match msg.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        };
        // A tool message shows only results whose call is not in the
        // thread (each result is drawn under its call).
        if msg.role == Role::Tool && self.orphans(msg).is_empty() {
            return html! {};
        }
        if let Some(c) = Compaction::of(msg) {
            return compaction(m, &c);
        }
        html! {
            article .message data-role=(role) id={ "m-" (m.seq) } {
                p .role { (match msg.role { Role::User => "User", Role::Assistant => "Model", Role::System => "System", Role::Tool => "Tool results" }) }
                @for (i, b) in msg.content.iter().enumerate() {
                    @match b {
                        Block::ToolResult { tool_result } => {
                            @if !self.calls.contains_key(tool_result.tool_call_id.as_str()) { (self.result(tool_result)) }
                        }
                        Block::ApprovalRequest { .. } => {}
                        _ => (self.block(b, &format!("{}-{i}", m.seq)))
                    }
                }
            }
        }
    }

    fn orphans<'m>(&self, msg: &'m Message) -> Vec<&'m ToolResult> {
        msg.content
            .iter()
            .filter_map(Block::as_tool_result)
            .filter(|r| !self.calls.contains_key(r.tool_call_id.as_str()))
            .collect()
    }

    fn block(&self, b: &Block, key: &str) -> Markup {
        match b {
            Block::Text(t) => html! { p .text { (t.text) } },
            Block::Thinking(t) => html! {
                details .thinking id={ "think-" (key) } {
                    summary { "Thinking" }
                    @if t.thinking.is_empty() && t.redacted.is_some() { p .muted { "(redacted by the provider)" } }
                    @else { p .text { (t.thinking) } }
                }
            },
            Block::Json { json } => html! { pre .json { code { (pretty(json)) } } },
            Block::Image { image } => media("image", image),
            Block::Audio { audio } => media("audio", audio),
            Block::File { file } => media("file", file),
            Block::ToolCall { tool_call } => html! {
                div .tool-call id={ "call-" (tool_call.id) } {
                    p .call-head { "Tool call " code { (tool_call.name) } " " span .muted { (tool_call.id) } }
                    (with_raw(&tool_call.arguments))
                    @if let Some(r) = self.results.get(tool_call.id.as_str()) { (self.result(r)) }
                    @else if self.waiting.contains_key(tool_call.id.as_str()) { p { (badge("waiting")) " waiting for a decision" } }
                    @else { p .muted { "No result." } }
                }
            },
            Block::ToolResult { tool_result } => self.result(tool_result),
            // A cache hint for the provider: nothing for a reader.
            Block::ApprovalRequest { .. } | Block::CachePoint { .. } => html! {},
        }
    }

    fn result(&self, r: &ToolResult) -> Markup {
        html! {
            div .tool-result data-status=(r.status.as_str()) {
                p .result-head {
                    "Result " (badge(r.status.as_str()))
                    @if let Some(a) = &r.approval {
                        " " span .approval { "decision: " strong { (a.decision.as_str()) }
                            @if let Some(reason) = &a.reason { " — " (reason) } }
                    }
                }
                @if let Some(args) = r.approval.as_ref().and_then(|a| a.arguments.as_ref()) {
                    p .muted { "Ran with the reviewer's arguments:" } (with_raw(args))
                }
                @for (i, b) in r.content.iter().enumerate() { (self.block(b, &format!("{}-r{i}", r.tool_call_id))) }
                @if self.viewer.who.operator {
                    @if let Some(a) = &r.artifact {
                        details .artifact { summary { "Artifact (operators only)" } pre { code { (pretty(a)) } } }
                    }
                }
            }
        }
    }
}

/// A context policy's record: what it stands for, by whom, and the
/// summary folded (the messages it stands for stay above it, in full).
fn compaction(m: &StoredMessage, c: &Compaction) -> Markup {
    let by = m
        .message
        .metadata
        .as_ref()
        .and_then(|d| d["compaction"]["model"].as_str());
    html! {
        article .message data-role="compaction" id={ "m-" (m.seq) } {
            p .role { "Context compacted" }
            p .meta {
                @if c.strategy == ContextStrategy::Compact { "Summarized" } @else { "Left out of the model's context:" }
                " the thread's first " (c.replaces) " messages (about " (c.tokens_before) " tokens, then " (c.tokens_after) ")"
                @if let Some(by) = by { " by " code { (by) } }
                "."
            }
            @if c.strategy == ContextStrategy::Compact {
                details .summary { summary { "The summary the model reads" } p .text { (m.message.text()) } }
            }
        }
    }
}

fn media(kind: &str, m: &parlance_format::Media) -> Markup {
    let what = m
        .filename
        .as_deref()
        .or(m.media_type.as_deref())
        .unwrap_or("");
    html! { p .media { span .badge .neutral { (kind) } " " (what) } }
}

#[cfg(test)]
mod tests {
    use super::usd;

    #[test]
    fn dollars_read_as_people_read_them() {
        assert_eq!(usd(12.345), "$12.35");
        assert_eq!(usd(1.0), "$1.00");
        assert_eq!(usd(0.5), "$0.5000");
        assert_eq!(usd(0.00042), "$0.0004200");
        assert_eq!(usd(0.0), "$0");
        assert_eq!(usd(1e-9), "$0.000000001000");
    }
}
