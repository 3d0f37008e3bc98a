//! Where the run meets its guardrails (see [`crate::guardrail`]): the
//! input before the run, each call before it waits or runs, the final
//! answer before it leaves. The loop, a retry and a resume gate their
//! calls through [`Agent::settle_calls`], so a call never runs around
//! them.

use parlance_format::{
    Approval, ApprovalRequest, Block, Message, Role, RunError, ToolCall, ToolResult, ToolStatus,
};
use serde_json::{Value, json};

use super::Agent;
use super::events::{Hooks, RunEvent, Step};
use super::state::State;
use super::stop::{Blocked, Stop, Stopped, not_stored};
use crate::engine::Check;
use crate::guardrail::{GuardPoint, Guarded, Guardrail, Verdict, note, record};

/// An agent's guardrails, by point.
#[derive(Default)]
pub(super) struct Guards {
    pub(super) input: Vec<Guardrail>,
    pub(super) tool_call: Vec<Guardrail>,
    pub(super) output: Vec<Guardrail>,
}

impl Guards {
    pub(super) fn add(&mut self, g: Guardrail) {
        match g.point() {
            GuardPoint::Input => self.input.push(g),
            GuardPoint::ToolCall => self.tool_call.push(g),
            GuardPoint::Output => self.output.push(g),
        }
    }

    pub(super) fn names(&self) -> Vec<Value> {
        [&self.input, &self.tool_call, &self.output]
            .into_iter()
            .flatten()
            .map(|g| json!({"name": g.name(), "point": g.point().as_str()}))
            .collect()
    }
}

/// What the input guardrails made of a run's input (see
/// [`Agent::screen_input`]).
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)] // one per run, moved a few times
pub enum Screened {
    /// The input to run on (rewritten where a guardrail replaced it; the
    /// replacements recorded in its metadata).
    Passed(Vec<Message>),
    /// A guardrail blocked it: the input (marked, so it is never sent to a
    /// model), the answer that stands for it, and the run's error.
    Blocked {
        /// The input, as received, marked blocked.
        input: Vec<Message>,
        /// The assistant message with the guardrail's message for the user.
        answer: Message,
        /// Code `blocked`, the guardrail's message.
        error: RunError,
    },
}

impl Screened {
    /// The input messages to keep with the run.
    pub fn input(&self) -> &[Message] {
        match self {
            Screened::Passed(m) => m,
            Screened::Blocked { input, .. } => input,
        }
    }
}

/// The run ends `blocked`: `message` for the user, which becomes the
/// text of `answer` (the message that stands for what was blocked).
fn blocked(g: &Guardrail, verdict: &Verdict, mut answer: Message, call: Option<&str>) -> Blocked {
    let Verdict::Block { message, .. } = verdict else {
        unreachable!("only a block blocks")
    };
    answer.content = vec![Block::text(message.clone())];
    note(&mut answer, [record(g.name(), g.point(), verdict, call)]);
    let mut cause = json!({"guardrail": g.name(), "point": g.point().as_str()});
    if let Some(id) = call {
        cause["tool_call_id"] = Value::String(id.to_string());
    }
    Blocked::new(
        answer,
        RunError::new("blocked", message.clone()).with_cause(cause),
    )
}

fn failed(g: &Guardrail, message: impl std::fmt::Display) -> RunError {
    RunError::new(
        "guardrail_failed",
        format!(
            "guardrail {} ({}) failed: {message}",
            g.name(),
            g.point().as_str()
        ),
    )
    .with_cause(json!({"guardrail": g.name(), "point": g.point().as_str()}))
}

/// A verdict a point cannot take fails the run, naming it.
fn not_here(g: &Guardrail, verdict: &Verdict) -> RunError {
    let only = match verdict {
        Verdict::Retry { .. } => "tool calls and answers",
        _ => "tool calls",
    };
    failed(
        g,
        format!(
            "it returned {} at {}, which is for {only} only",
            verdict.outcome(),
            g.point().as_str()
        ),
    )
}

/// One call to settle: the model's call, the arguments to run it with,
/// and the reviewer's decision when a human already approved it.
pub(super) struct Pending<'a> {
    pub(super) slot: usize,
    pub(super) call: &'a ToolCall,
    /// `None`: the model's own (no copy made).
    pub(super) arguments: Option<Value>,
    pub(super) approved: Option<Approval>,
}

impl Pending<'_> {
    fn arguments(&self) -> &Value {
        self.arguments.as_ref().unwrap_or(&self.call.arguments)
    }
}

/// What the gate makes of one call.
enum Gate {
    /// Run it, with these arguments (`None`: unchanged).
    Run(Option<Value>),
    /// Its approval request, or the result that stands for it.
    Stands(Block),
}

impl Agent {
    /// Whether the agent has input guardrails.
    pub fn screens_input(&self) -> bool {
        !self.inner.guards.input.is_empty()
    }

    /// Runs the input guardrails on a new run's input, in order (each
    /// sees the last one's replacement). A caller that stores the input
    /// before the run (a thread runner) screens it first and hands the
    /// outcome over with [`RunBuilder::screened`](crate::RunBuilder::screened);
    /// otherwise the run screens its own input. `Err`: a guardrail failed
    /// (code `guardrail_failed`).
    pub async fn screen_input(
        &self,
        mut input: Vec<Message>,
        thread_id: Option<&str>,
    ) -> Result<Screened, RunError> {
        let mut records = Vec::new();
        for g in &self.inner.guards.input {
            let text = input
                .iter()
                .map(Message::text)
                .collect::<Vec<_>>()
                .join("\n");
            let verdict = g
                .check(Guarded {
                    point: GuardPoint::Input,
                    text,
                    messages: input.clone(),
                    call: None,
                    value: Value::Null,
                    partial: false,
                    thread_id: thread_id.map(str::to_string),
                })
                .await
                .map_err(|e| failed(g, e))?;
            match &verdict {
                Verdict::Allow => continue,
                Verdict::Block { .. } => {
                    let r = record(g.name(), g.point(), &verdict, None);
                    for m in &mut input {
                        note(m, records.iter().cloned().chain([r.clone()]));
                    }
                    let b = blocked(g, &verdict, Message::assistant(""), None);
                    return Ok(Screened::Blocked {
                        input,
                        answer: b.0.answer,
                        error: b.0.error,
                    });
                }
                Verdict::Replace { value, .. } => {
                    input = replaced_input(input, value).map_err(|e| failed(g, e))?;
                }
                Verdict::Retry { .. } | Verdict::RequireApproval { .. } => {
                    return Err(not_here(g, &verdict));
                }
            }
            records.push(record(g.name(), g.point(), &verdict, None));
        }
        if let Some(m) = input.last_mut() {
            note(m, records);
        }
        Ok(Screened::Passed(input))
    }

    /// Gates each call (guardrails, then approval), runs those that may
    /// run together, and returns each call's block (its result, or its
    /// approval request) for its slot. A guardrail that blocks or fails
    /// runs no call of the turn (they read `interrupted`) and stops the
    /// run once the turn is kept (`stop`).
    pub(super) async fn settle_calls(
        &self,
        state: &State,
        calls: Vec<Pending<'_>>,
        hooks: &Hooks,
    ) -> (Vec<(usize, Block)>, Stop) {
        let mut stop = Stop::default();
        let mut out = Vec::with_capacity(calls.len());
        let mut to_run = Vec::new();
        for p in calls {
            match self.gate(state, &p, &mut stop).await {
                Gate::Stands(b) => out.push((p.slot, b)),
                Gate::Run(arguments) => to_run.push(Pending {
                    arguments: arguments.or(p.arguments),
                    ..p
                }),
            }
        }
        if stop.blocked.is_some() || stop.guard_failed.is_some() {
            for p in to_run {
                let mut r = ToolResult::text(
                    &p.call.id,
                    ToolStatus::Interrupted,
                    format!("{} was not run: a guardrail stopped the run", p.call.name),
                );
                r.name = Some(p.call.name.clone());
                out.push((p.slot, Block::tool_result(r)));
            }
            return (out, stop);
        }
        let pairs: Vec<(&ToolCall, &Value)> =
            to_run.iter().map(|p| (p.call, p.arguments())).collect();
        let reports = self.run_calls(state, &pairs, hooks).await;
        for (p, mut report) in to_run.into_iter().zip(reports) {
            if let Some((usage, cost)) = report.spent.take() {
                stop.spent(usage, cost);
            }
            if let Some(run) = report.waiting_on.take() {
                // An agent used as a tool waits for decisions: so does
                // its call, naming the run it waits on.
                let mut request = ApprovalRequest::for_call(p.call);
                request.digest = self.digest(&state.run_id, p.call);
                request.run_id = Some(run);
                out.push((
                    p.slot,
                    Block::ApprovalRequest {
                        approval_request: request,
                    },
                ));
                continue;
            }
            if p.approved.is_some() {
                report.result.approval = p.approved;
            }
            out.push((p.slot, self.result_block(report, &mut stop)));
        }
        (out, stop)
    }

    /// One call through the tool-call guardrails and the approval rule.
    async fn gate(&self, state: &State, p: &Pending<'_>, stop: &mut Stop) -> Gate {
        let needs_approval = match state.tools.check(&p.call.name, p.call, p.arguments()) {
            Check::Ready { needs_approval, .. } => needs_approval && p.approved.is_none(),
            // Invalid or unknown: the engine says so in the call's result.
            _ => return Gate::Run(None),
        };
        let guards = &self.inner.guards.tool_call;
        if guards.is_empty() && !needs_approval {
            return Gate::Run(None);
        }
        let mut arguments = p.arguments().clone();
        let mut replaced = false;
        let mut wait = needs_approval;
        for g in guards {
            let mut call = p.call.clone();
            call.arguments = arguments.clone();
            let verdict = g
                .check(Guarded {
                    point: GuardPoint::ToolCall,
                    text: arguments.to_string(),
                    messages: Vec::new(),
                    call: Some(call),
                    value: arguments.clone(),
                    partial: false,
                    thread_id: state.thread_id.clone(),
                })
                .await;
            let verdict = match verdict {
                Ok(v) => v,
                Err(e) => {
                    stop.guard_failed.get_or_insert(failed(g, e));
                    return Gate::Stands(interrupted(p.call, g));
                }
            };
            match &verdict {
                Verdict::Allow => continue,
                Verdict::Replace { value, .. } => {
                    arguments = value.clone();
                    replaced = true;
                }
                Verdict::RequireApproval { .. } if p.approved.is_some() => continue,
                Verdict::RequireApproval { .. } => wait = true,
                Verdict::Retry { message } => {
                    stop.records
                        .push(record(g.name(), g.point(), &verdict, Some(&p.call.id)));
                    let mut r = ToolResult::text(
                        &p.call.id,
                        ToolStatus::Rejected,
                        format!("{} was not run: {message}", p.call.name),
                    );
                    r.name = Some(p.call.name.clone());
                    return Gate::Stands(Block::tool_result(r));
                }
                Verdict::Block { .. } => {
                    let b = blocked(g, &verdict, Message::assistant(""), Some(&p.call.id));
                    stop.records
                        .push(record(g.name(), g.point(), &verdict, Some(&p.call.id)));
                    stop.blocked.get_or_insert(b);
                    return Gate::Stands(interrupted(p.call, g));
                }
            }
            stop.records
                .push(record(g.name(), g.point(), &verdict, Some(&p.call.id)));
        }
        if wait {
            let mut request = ApprovalRequest::for_call(p.call);
            request.digest = self.digest(&state.run_id, p.call);
            return Gate::Stands(Block::ApprovalRequest {
                approval_request: request,
            });
        }
        Gate::Run(replaced.then_some(arguments))
    }

    /// The run ends blocked: the answer that stands for what was blocked
    /// is reported, kept and added; the response says `blocked`.
    pub(super) async fn end_blocked(
        &self,
        state: &mut State,
        b: Blocked,
        hooks: &Hooks,
    ) -> parlance_format::Response {
        let Stopped { answer, error } = *b.0;
        if hooks.streaming() {
            hooks.emit(RunEvent::TextDelta(answer.text()));
        }
        if let Err(e) = hooks.commit(Step::Append(&answer)).await {
            return state.failed(not_stored(e));
        }
        hooks.emit(RunEvent::MessageCompleted(answer.clone()));
        state.request.messages.push(answer);
        state.failed(error)
    }

    /// Whether a streamed answer's text waits for the output guardrails.
    pub(super) fn holds_output(&self) -> bool {
        !self.inner.guards.output.is_empty()
    }

    /// The output guardrails on the final answer (`value`: its text, or
    /// its structured value). `partial`: the answer so far, while it
    /// streams sentence by sentence.
    pub(super) async fn guard_output(
        &self,
        state: &State,
        message: &Message,
        value: &Value,
        partial: bool,
    ) -> Result<Output, RunError> {
        let mut value = value.clone();
        let mut text = message.text();
        let mut records = Vec::new();
        for g in &self.inner.guards.output {
            let verdict = g
                .check(Guarded {
                    point: GuardPoint::Output,
                    text: text.clone(),
                    messages: vec![message.clone()],
                    call: None,
                    value: value.clone(),
                    partial,
                    thread_id: state.thread_id.clone(),
                })
                .await
                .map_err(|e| failed(g, e))?;
            match &verdict {
                Verdict::Allow => continue,
                _ if partial => return Ok(Output::Hold),
                Verdict::Block { .. } => {
                    let mut answer = message.clone();
                    answer.metadata = None;
                    note(&mut answer, records);
                    return Ok(Output::Blocked(blocked(g, &verdict, answer, None)));
                }
                Verdict::Retry { message } => {
                    records.push(record(g.name(), g.point(), &verdict, None));
                    return Ok(Output::Retry {
                        message: message.clone(),
                        records,
                    });
                }
                Verdict::Replace { value: new, .. } => {
                    if !new.is_string() && self.inner.output.is_none() {
                        return Err(failed(
                            g,
                            "a text answer is replaced by a string, not by other JSON",
                        ));
                    }
                    if let Some(schema) = &self.inner.output {
                        let problems = schema.problems(new);
                        if !problems.is_empty() {
                            return Err(failed(
                                g,
                                format!(
                                    "its replacement does not match the output schema: {}",
                                    problems.join("; ")
                                ),
                            ));
                        }
                    }
                    value = new.clone();
                    text = match new {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                }
                Verdict::RequireApproval { .. } => return Err(not_here(g, &verdict)),
            }
            records.push(record(g.name(), g.point(), &verdict, None));
        }
        if records.is_empty() {
            return Ok(Output::Allowed);
        }
        Ok(Output::Replaced {
            text,
            value,
            records,
        })
    }
}

/// What the output guardrails decided.
#[allow(clippy::large_enum_variant)] // one per answer, never kept
pub(super) enum Output {
    /// As it is.
    Allowed,
    /// Not yet (a partial answer someone did not allow): hold the rest.
    Hold,
    /// Rewritten: the new text and value.
    Replaced {
        text: String,
        value: Value,
        records: Vec<Value>,
    },
    /// Told to answer again.
    Retry {
        message: String,
        records: Vec<Value>,
    },
    Blocked(Blocked),
}

/// `answer` with its text (or its JSON block) replaced.
pub(super) fn rewritten(mut answer: Message, text: String, value: &Value) -> Message {
    let mut put = false;
    answer.content.retain_mut(|b| match b {
        Block::Json { json } => {
            *json = value.clone();
            put = true;
            true
        }
        Block::Text(t) if !put => {
            t.text = text.clone();
            put = true;
            true
        }
        Block::Text(_) => false,
        _ => true,
    });
    if !put {
        answer.content.push(Block::text(text));
    }
    answer
}

/// A call that did not run because a guardrail stopped the run.
fn interrupted(call: &ToolCall, g: &Guardrail) -> Block {
    let mut r = ToolResult::text(
        &call.id,
        ToolStatus::Interrupted,
        format!(
            "{} was not run: guardrail {} stopped the run",
            call.name,
            g.name()
        ),
    );
    r.name = Some(call.name.clone());
    Block::tool_result(r)
}

/// The input after a replacement: a string is the new text of the last
/// user message (its other blocks kept), a list is the whole input as
/// canonical messages.
fn replaced_input(mut input: Vec<Message>, value: &Value) -> Result<Vec<Message>, String> {
    match value {
        Value::String(text) => {
            let Some(last) = input.iter_mut().rev().find(|m| m.role == Role::User) else {
                return Err("the input has no user message to put its text in".into());
            };
            *last = rewritten(last.clone(), text.clone(), &Value::Null);
            Ok(input)
        }
        Value::Array(_) => parlance_format::messages_from_value(value, "replacement")
            .map_err(|e| format!("its replacement is not a list of messages: {e}")),
        _ => Err("an input is replaced by a string (the new text) or a list of messages".into()),
    }
}

/// Where a streamed answer may be let out early: after the last end of a
/// sentence (`.`, `!` or `?` before a space, or a line break) in `text`.
pub(super) fn sentence_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (1..bytes.len()).rev().find(|&i| {
        let before = bytes[i - 1];
        before == b'\n' || (matches!(before, b'.' | b'!' | b'?') && bytes[i].is_ascii_whitespace())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_end_before_a_space_or_after_a_line_break() {
        assert_eq!(sentence_end("Hi. The"), Some(3));
        assert_eq!(sentence_end("Hi there"), None);
        assert_eq!(sentence_end("3.14 is"), None);
        assert_eq!(sentence_end("One!\nTwo"), Some(5));
        assert_eq!(sentence_end("Ends."), None);
    }

    #[test]
    fn an_answer_is_rewritten_in_place_of_its_text() {
        let mut m = Message::assistant("a");
        m.content.push(Block::text("b"));
        let r = rewritten(m, "new".into(), &Value::Null);
        assert_eq!(r.content, vec![Block::text("new")]);
        let input = replaced_input(vec![Message::user("card 4111")], &json!("card ****")).unwrap();
        assert_eq!(input[0].text(), "card ****");
        assert!(replaced_input(vec![Message::user("x")], &json!(3)).is_err());
    }
}
