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
//!
//! Carrying on after the run's process died (`Store::take_over` left the
//! thread so): the same, but what runs again is only the calls whose
//! results are the repair of the calls that had not committed; a result
//! that committed, failed or not, is kept (it ran once).

use std::collections::HashMap;

use parlance_format::{Message, Response, Role, RunError, ToolCall, ToolResult, ToolStatus};

use super::Agent;
use super::events::Hooks;
use super::guard::Pending;
use super::input::RunInput;

/// What a retry runs again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryOf {
    /// A failed run: its failed and interrupted calls.
    Failed,
    /// A run whose process died: the calls that had not committed.
    Died,
}

impl RetryOf {
    /// Whether `r`, in the last message `m`, is a result to run again.
    fn reruns(self, m: &Message, r: &ToolResult) -> bool {
        match self {
            RetryOf::Failed => {
                matches!(r.status, ToolStatus::ToolFailed | ToolStatus::Interrupted)
            }
            RetryOf::Died => r.status == ToolStatus::Interrupted && m.is_repair(),
        }
    }
}

impl Agent {
    /// Retries a failed run (see the module's doc): `input.turns` holds the
    /// history, the failed turn last.
    pub(super) async fn retry_failed(
        &self,
        input: RunInput,
        of: RetryOf,
        hooks: &Hooks,
    ) -> Response {
        // A run a guardrail blocked is over: asking again would send the
        // model what was blocked (or answer around it).
        let blocked = input
            .turns
            .last()
            .and_then(|t| t.messages.last())
            .is_some_and(crate::guardrail::blocked);
        let mut state = self.start(input);
        if blocked {
            return state.failed(RunError::new(
                "blocked",
                "the run was blocked by a guardrail; a blocked run is not retried",
            ));
        }
        if let Err(e) = self.refresh_tools(&mut state).await {
            return state.failed(e);
        }
        let messages = &state.request.messages;
        let last = messages.len().saturating_sub(1);
        let to_rerun = messages.last().is_some_and(|m| {
            m.role == Role::Tool
                && m.content
                    .iter()
                    .any(|b| b.as_tool_result().is_some_and(|r| of.reruns(m, r)))
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
        let calls: HashMap<&str, &ToolCall> = state.request.messages[assistant]
            .tool_calls()
            .map(|c| (c.id.as_str(), c))
            .collect();
        let last_message = &state.request.messages[last];
        let mut content = last_message.content.clone();
        let mut runnable: Vec<Pending<'_>> = Vec::new();
        for (i, b) in content.iter_mut().enumerate() {
            let Some(&call) = b
                .as_tool_result()
                .filter(|r| of.reruns(last_message, r))
                .and_then(|r| calls.get(r.tool_call_id.as_str()))
            else {
                continue;
            };
            runnable.push(Pending {
                slot: i,
                call,
                arguments: None,
                approved: None,
            });
        }
        // Through the guardrails again, as any call before it runs.
        let (settled, stop) = self.settle_calls(&state, runnable, hooks).await;
        for (i, block) in settled {
            content[i] = block;
        }
        if let Some(end) = self
            .end_rewritten_turn(&mut state, content, stop, hooks)
            .await
        {
            return end;
        }
        self.drive(&mut state, hooks).await
    }
}
