//! How a turn of tool calls ends, whether it came from the model, a
//! resume or a retry: calls still waiting are settled when the run stops,
//! the tool message is reported and kept, then the run fails, pauses or
//! goes on. The run loop, resume and retry all end their turns here.

use parlance_format::{ApprovalRequest, Block, Message, Response, Role, RunError, RunStatus};
use parlance_format::{ToolResult, ToolStatus};
use serde_json::Value;

use super::Agent;
use super::events::{Hooks, RunEvent, Step};
use super::state::State;
use crate::engine::{BudgetExceeded, CallReport, FailureCause};

/// Where a turn's tool message goes: after the assistant's (a new turn),
/// or in place of the last one (a resume, a retry).
#[derive(Clone, Copy)]
pub(super) enum Place {
    Append,
    ReplaceLast,
}

/// What stops the run after a turn of tool calls, if anything.
#[derive(Default)]
pub(super) struct Stop {
    /// A tool's unexpected failure under policy `fail`.
    pub(super) failed_tool: Option<FailureCause>,
    /// One invalid call too many.
    pub(super) over_budget: Option<BudgetExceeded>,
    /// A tool-call guardrail blocked a call: the run ends `blocked`.
    pub(super) blocked: Option<super::guard::Blocked>,
    /// A tool-call guardrail failed: the run ends `guardrail_failed`.
    pub(super) guard_failed: Option<RunError>,
    /// The guardrails' outcomes, for the tool message's metadata.
    pub(super) records: Vec<Value>,
}

impl Stop {
    fn stops(&self) -> bool {
        self.failed_tool.is_some()
            || self.over_budget.is_some()
            || self.blocked.is_some()
            || self.guard_failed.is_some()
    }
}

/// The approval requests of a stopped run become `interrupted` results:
/// nobody will decide them, and a model cannot be sent a request.
pub(super) fn settle(content: &mut [Block]) {
    for b in content.iter_mut() {
        if let Block::ApprovalRequest { approval_request } = b {
            let mut r = ToolResult::text(
                &approval_request.tool_call_id,
                ToolStatus::Interrupted,
                format!(
                    "{} was not run: the run stopped before this call was decided",
                    approval_request.name
                ),
            );
            r.name = Some(approval_request.name.clone());
            *b = Block::tool_result(r);
        }
    }
}

impl Agent {
    /// A call's result as it goes in the tool message; under policy
    /// `fail`, its unexpected failure stops the run, and the process's own
    /// lack of resources under any policy.
    pub(super) fn result_block(&self, report: CallReport, stop: &mut Stop) -> Block {
        if let Some(cause) = report.cause
            && (self.inner.limits.on_tool_exception == crate::OnToolException::Fail
                || cause.error_type == crate::tool::SERVER_RESOURCES)
        {
            stop.failed_tool.get_or_insert(cause);
        }
        Block::tool_result(report.result)
    }

    /// Ends a turn of tool calls: when the run stops, calls still waiting
    /// for a decision become `interrupted` (nobody will decide them, and a
    /// model cannot be sent a request); the tool message is reported and
    /// kept; then the run fails, pauses for the calls still waiting, or
    /// goes on (`None`).
    pub(super) async fn end_tool_turn(
        &self,
        state: &mut State,
        mut content: Vec<Block>,
        place: Place,
        stop: Stop,
        hooks: &Hooks,
    ) -> Option<Response> {
        if stop.stops() {
            settle(&mut content);
        }
        let pending: Vec<ApprovalRequest> = content
            .iter()
            .filter_map(|b| match b {
                Block::ApprovalRequest { approval_request } => Some(approval_request.clone()),
                _ => None,
            })
            .collect();
        // Kept before it is reported and joins the context: a run that
        // fails to store it answers without it, and a `message` event
        // names a committed step.
        let kept = match place {
            Place::Append => {
                let mut message = Message::new(Role::Tool, content);
                crate::guardrail::note(&mut message, stop.records);
                let kept = hooks.commit(Step::Append(&message)).await;
                if kept.is_ok() {
                    hooks.emit(RunEvent::MessageCompleted(message.clone()));
                    state.request.messages.push(message);
                }
                kept
            }
            Place::ReplaceLast => {
                let last = state.request.messages.last_mut().expect("a tool message");
                last.content = content;
                // A repair's results have run now: it is a repair no more
                // (were the run to die again, they would not run twice).
                last.unmark_repair();
                crate::guardrail::note(last, stop.records);
                let kept = hooks.commit(Step::ReplaceLast(last)).await;
                if kept.is_ok() {
                    hooks.emit(RunEvent::MessageCompleted(last.clone()));
                }
                kept
            }
        };
        if let Err(e) = kept {
            return Some(state.failed(not_stored(e)));
        }
        if let Some(e) = stop.guard_failed {
            return Some(state.failed(e));
        }
        if let Some(b) = stop.blocked {
            return Some(self.end_blocked(state, b, hooks).await);
        }
        if let Some(cause) = stop.failed_tool {
            return Some(state.failed(tool_failed(cause)));
        }
        if let Some(e) = stop.over_budget {
            return Some(state.failed(RunError::new("invalid_arguments_budget", e.to_string())));
        }
        if !pending.is_empty() {
            hooks.emit(RunEvent::ApprovalRequired(pending.clone()));
            let mut r = state.response(RunStatus::RequiresApproval, Value::Null);
            r.pending = pending;
            return Some(r);
        }
        None
    }

    /// [`Self::end_tool_turn`] for a tool message rewritten in place.
    pub(super) async fn end_rewritten_turn(
        &self,
        state: &mut State,
        content: Vec<Block>,
        stop: Stop,
        hooks: &Hooks,
    ) -> Option<Response> {
        self.end_tool_turn(state, content, Place::ReplaceLast, stop, hooks)
            .await
    }
}

/// The run stops on a tool's unexpected failure (policy `fail`): the cause
/// as JSON, and the tool's own error as the run error's source.
fn tool_failed(cause: FailureCause) -> RunError {
    if cause.error_type == crate::tool::SERVER_RESOURCES {
        let message = format!(
            "tool {} could not run: the server ran out of resources: {}; nothing was sent to the model (retry the run)",
            cause.tool, cause.message
        );
        return RunError::new("server_resources", message)
            .with_cause(serde_json::to_value(&cause).expect("json"));
    }
    let message = format!(
        "tool {} failed: {}: {}",
        cause.tool, cause.error_type, cause.message
    );
    let source = cause.error.clone();
    let error = RunError::new("tool_failed", message)
        .with_cause(serde_json::to_value(&cause).expect("json"));
    match source {
        Some(e) => error.with_source(e),
        None => error,
    }
}

/// A step could not be stored: the run fails with code `store`, the
/// storage's error as its source.
pub(super) fn not_stored(e: super::CheckpointError) -> RunError {
    RunError::new("store", format!("the step could not be stored: {e}"))
        .with_source(e.error().clone())
}
