//! The run loop's side of budgets ([`crate::budget`]): before each model
//! call, what the run spent and what the store counted against the
//! agent's limits; at a limit, one closing answer without tools (unless
//! the budget says stop), then the run ends `budget_exhausted`.

use std::sync::Arc;

use parlance_format::{Block, Message, Response, RunError, Spend};
use serde_json::Value;

use super::Agent;
use super::events::Hooks;
use super::run_loop::Ending;
use super::state::State;
use crate::budget::{Exhausted, OnExhausted};

impl Agent {
    /// `Some(the run's end)` when a limit of the agent's budget is
    /// reached; `None`: the model may be called.
    pub(super) async fn over_budget(&self, state: &mut State, hooks: &Hooks) -> Option<Response> {
        let budget = self.inner.budget.as_ref()?;
        let stored = if budget.counts_in_store() {
            match hooks.spent().await {
                Ok(s) => s,
                Err(e) => {
                    return Some(state.failed(RunError::new(
                        "store",
                        format!("what the thread and its owner spent could not be read: {e}"),
                    )));
                }
            }
        } else {
            None
        };
        let run = Spend::of_all(state.turn());
        let exhausted = budget.exhausted(&run, stored.as_ref())?;
        tracing::warn!(
            target: "parlance::budget",
            run = %state.run_id,
            scope = exhausted.scope.as_str(),
            measure = exhausted.measure.as_str(),
            limit = exhausted.limit,
            spent = exhausted.spent,
            "budget exhausted"
        );
        // A run that has not called the model yet has nothing to explain.
        if budget.on_exhausted == OnExhausted::Answer
            && run.model_calls > 0
            && let Some(end) = self.closing_answer(state, &exhausted, hooks).await
        {
            return Some(end);
        }
        Some(state.failed(exhausted.error()))
    }

    /// Asks the model once more, without tools, to answer with what it
    /// has; keeps the answer (it is the run's last message) once the
    /// output guardrails pass it. `Some` only when that ends the run
    /// otherwise (blocked, not stored). A model that fails here leaves the
    /// run without a closing answer.
    async fn closing_answer(
        &self,
        state: &mut State,
        exhausted: &Exhausted,
        hooks: &Hooks,
    ) -> Option<Response> {
        let mut request = self.sent(state).into_owned();
        request.tools = Arc::from([]);
        request.options.tool_choice = None;
        request.options.output_schema = None;
        // Said to the model, never stored.
        request.messages.push(Message::user(format!(
            "{}. No tool can be called any more: answer now with what you have, saying what was done and what is left undone.",
            exhausted.error().message
        )));
        let (mut message, released) = match self.call_model_with(state, &request, hooks).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::warn!(target: "parlance::budget", run = %state.run_id, error = %e, "the closing answer could not be had");
                return None;
            }
        };
        // Without tools a call is never run: one asked for anyway is dropped.
        message
            .content
            .retain(|b| !matches!(b, Block::ToolCall { .. }));
        if message.text().trim().is_empty() {
            return None;
        }
        if let Some(u) = &message.usage {
            state.usage.add(u);
        }
        let value = Value::String(message.text());
        let (message, ending) = self.guarded(state, message, value).await;
        match ending {
            Ending::Blocked(b) => return Some(self.end_blocked(state, b, hooks).await),
            Ending::Done(_) => {}
            // A guardrail that failed or wanted another try: no answer.
            Ending::Failed(_) | Ending::Retry(_) => return None,
        }
        self.keep(state, message, released, hooks)
            .await
            .err()
            .map(|e| state.failed(e))
    }
}
