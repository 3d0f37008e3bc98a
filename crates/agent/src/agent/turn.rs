//! How a turn of tool calls ends, whether it came from the model, a
//! resume or a retry: calls still waiting are settled when the run stops,
//! the tool message is kept and reported, then the run fails or goes on.
//! The run loop, resume and retry all end their turns here.

use parlance_format::{Block, Message, Response, Role, RunError};
use parlance_format::{ToolResult, ToolStatus};

use super::Agent;
use super::events::{Hooks, RunEvent, Step};
use super::state::State;
use super::stop::{Stop, not_stored};
use crate::engine::{CallReport, FailureCause};

/// Where a turn's tool message goes: after the assistant's (a new turn),
/// or in place of the last one (a resume, a retry).
#[derive(Clone, Copy)]
pub(super) enum Place {
    Append,
    ReplaceLast,
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
    /// model cannot be sent a request); the tool message is kept and
    /// reported; then the run fails, or goes on (`None`: the state machine
    /// pauses it for the calls still waiting, or asks the model).
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
        // What agents used as tools spent is this run's too.
        if let Some((usage, _)) = &stop.spent {
            state.usage.add(usage);
        }
        // Kept before it is reported and joins the context: a run that
        // fails to store it answers without it, and a `message` event
        // names a committed step.
        let kept = match place {
            Place::Append => {
                let mut message = Message::new(Role::Tool, content);
                crate::guardrail::note(&mut message, stop.records);
                if let Some((usage, cost)) = stop.spent {
                    message.usage = Some(usage);
                    message.cost = cost;
                }
                if let Some(h) = stop.handoff {
                    message
                        .metadata
                        .get_or_insert_with(Default::default)
                        .insert(parlance_format::HANDOFF_KEY.into(), h);
                }
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
                if let Some((usage, cost)) = stop.spent {
                    let mut total = last.usage.unwrap_or_default();
                    total.add(&usage);
                    last.usage = Some(total);
                    last.cost = match (last.cost, cost) {
                        (None, None) => None,
                        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
                    };
                }
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
        // Calls still waiting: the state machine pauses the run.
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
