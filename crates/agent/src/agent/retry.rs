//! Retrying a failed run, and what a stopped run does with calls that were
//! still waiting for a decision.
//!
//! Retry after `fail`: the failed calls of the last turn (`tool_failed`,
//! and `interrupted` ones that never ran) run again; calls that succeeded
//! keep their results; the new results replace the failed ones in place,
//! so the failure's text is never put in front of the model; then the run
//! goes on. A call that needs approval waits for a decision again. With no
//! failed call to re-run (a model error, a limit), the model is simply
//! called again on the history.

use std::collections::HashMap;
use std::sync::Arc;

use futures::Stream;
use futures::channel::mpsc;
use parlance_format::{
    ApprovalRequest, Block, Response, Role, RunStatus, ToolCall, ToolResult, ToolStatus,
};
use serde_json::Value;

use super::{Agent, Checkpoint, Hooks, RunEvent, RunInput, Step, emit};
use crate::engine::{Check, OnToolException};

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

/// A reviewer's answer takes a tool result's place, and every provider
/// carries text and JSON in a tool result, but not all carry images,
/// audio or files (OpenAI Chat takes only text): an answer holding
/// anything else would make every later run on the thread fail, so it is
/// refused, naming the block.
pub(super) fn check_answer(content: &[Block], path: &str) -> Result<(), super::DecisionError> {
    for (i, b) in content.iter().enumerate() {
        if !matches!(b, Block::Text(_) | Block::Json { .. }) {
            return Err(super::refuse(
                format!("{path}.content[{i}]"),
                format!(
                    "an answer holds text and json blocks only, not {} (not every provider can carry it in a tool result)",
                    b.type_name()
                ),
            ));
        }
    }
    Ok(())
}

/// Whether a result is one a retry runs again.
fn failed(r: &ToolResult) -> bool {
    matches!(r.status, ToolStatus::ToolFailed | ToolStatus::Interrupted)
}

impl Agent {
    /// Retries a failed run (see the module's doc): `input.turns` holds the
    /// history (the failed turn last), `input.input` is normally empty.
    pub async fn retry_with_checkpoint(
        &self,
        input: RunInput,
        checkpoint: Arc<dyn Checkpoint>,
    ) -> Response {
        let hooks = Hooks {
            tx: None,
            checkpoint: Some(checkpoint),
        };
        self.retry_inner(input, &hooks).await
    }

    /// [`Agent::retry_with_checkpoint`] as a stream of events.
    pub fn retry_stream_with_checkpoint(
        &self,
        input: RunInput,
        checkpoint: Arc<dyn Checkpoint>,
    ) -> impl Stream<Item = RunEvent> + Send + 'static {
        let (tx, rx) = mpsc::unbounded();
        let agent = self.clone();
        tokio::spawn(async move {
            let hooks = Hooks {
                tx: Some(tx),
                checkpoint: Some(checkpoint),
            };
            let response = agent.retry_inner(input, &hooks).await;
            emit(&hooks.tx, RunEvent::RunCompleted(response));
        });
        rx
    }

    async fn retry_inner(&self, input: RunInput, hooks: &Hooks) -> Response {
        let mut state = self.start(input);
        let messages = &state.request.messages;
        let last = messages.len().saturating_sub(1);
        let to_rerun = messages.last().is_some_and(|m| {
            m.role == Role::Tool
                && m.content
                    .iter()
                    .any(|b| b.as_tool_result().is_some_and(failed))
        });
        let assistant = messages[..last]
            .iter()
            .rposition(|m| m.role == Role::Assistant);
        let (true, Some(assistant)) = (to_rerun, assistant) else {
            return self.drive(&mut state, hooks).await;
        };
        // This turn starts at the failed turn's assistant message: the
        // answer shows the calls and their new results.
        state.turn_start = state.turn_start.min(assistant);
        let calls: HashMap<String, ToolCall> = state.request.messages[assistant]
            .tool_calls()
            .map(|c| (c.id.clone(), c.clone()))
            .collect();
        let mut content = state.request.messages[last].content.clone();
        let mut runnable: Vec<(usize, ToolCall)> = Vec::new();
        let mut pending: Vec<ApprovalRequest> = Vec::new();
        for (i, b) in content.iter_mut().enumerate() {
            let Some(call) = b
                .as_tool_result()
                .filter(|r| failed(r))
                .and_then(|r| calls.get(&r.tool_call_id))
            else {
                continue;
            };
            match self.inner.tools.check(&call.name, call, &call.arguments) {
                Check::Ready {
                    needs_approval: true,
                    ..
                } => {
                    let mut request = ApprovalRequest::for_call(call);
                    request.digest = self.digest(&state.run_id, call);
                    pending.push(request.clone());
                    *b = Block::ApprovalRequest {
                        approval_request: request,
                    };
                }
                _ => runnable.push((i, call.clone())),
            }
        }
        let pairs: Vec<(&ToolCall, &Value)> =
            runnable.iter().map(|(_, c)| (c, &c.arguments)).collect();
        let sink = Self::sink(&hooks.tx);
        let reports = self
            .inner
            .tools
            .run_calls(&pairs, &self.call_settings(&state), sink.as_ref())
            .await;
        let mut fatal = None;
        for ((i, _), report) in runnable.iter().zip(reports) {
            if self.inner.limits.on_tool_exception == OnToolException::Fail
                && let Some(cause) = report.cause
            {
                fatal.get_or_insert(cause);
            }
            content[*i] = Block::tool_result(report.result);
        }
        if fatal.is_some() {
            settle(&mut content);
            pending.clear();
        }
        let tool_message = {
            let m = &mut state.request.messages[last];
            m.content = content;
            m.clone()
        };
        emit(&hooks.tx, RunEvent::MessageCompleted(tool_message.clone()));
        if let Err(e) = hooks.commit(Step::ReplaceLast(&tool_message)).await {
            return state.failed("store", format!("the step could not be stored: {e}"), None);
        }
        if let Some(cause) = fatal {
            return self.tool_failed(&state, cause);
        }
        if !pending.is_empty() {
            emit(&hooks.tx, RunEvent::ApprovalRequired(pending.clone()));
            let mut r = state.response(RunStatus::RequiresApproval, Value::Null);
            r.pending = pending;
            return r;
        }
        self.drive(&mut state, hooks).await
    }
}
