//! One run, turn by turn: call the model, run the calls it makes (those
//! that need approval wait), and end each turn of tool calls (`turn`).

use std::panic::AssertUnwindSafe;

use futures::{FutureExt, StreamExt};
use parlance_format::{
    ApprovalRequest, Block, Message, Response, RunError, RunStatus, ToolCall, ToolStatus,
};
use parlance_model::{ModelError, ModelRequest, StreamEvent, panic_message};
use serde_json::{Value, json};

use super::Agent;
use super::events::{Hooks, RunEvent, Step};
use super::state::State;
use super::turn::{Place, Stop, not_stored};
use crate::engine::{BudgetExceeded, CallReport, Check, InvalidArgumentsBudget};
use crate::telemetry;
use tracing::Instrument;

impl Agent {
    /// The loop: model, tools, model... until done, paused or failed.
    pub(super) async fn drive(&self, state: &mut State, hooks: &Hooks) -> Response {
        let limits = &self.inner.limits;
        let mut budget = match self.budget_so_far(state) {
            Ok(b) => b,
            Err(e) => {
                return state.failed(RunError::new("invalid_arguments_budget", e.to_string()));
            }
        };
        loop {
            if state.model_calls() >= limits.max_model_calls {
                let n = limits.max_model_calls;
                return state.failed(RunError::new(
                    "max_model_calls",
                    format!("the model was called {n} times without finishing (limit {n})"),
                ));
            }
            if let Err(e) = self.refresh_tools(state).await {
                return state.failed(e);
            }
            // A model step that panics (a provider's decoder, a model of
            // the application's) fails this run, not the process; what
            // the run did so far stays in its response.
            let answer = AssertUnwindSafe(self.call_model(state, hooks))
                .catch_unwind()
                .await;
            let message = match answer {
                Ok(Ok(m)) => m,
                Err(payload) => {
                    let message = panic_message(&*payload);
                    return state.failed(
                        RunError::new("model_error", format!("the model panicked: {message}"))
                            .with_cause(json!({"kind": "panic", "message": message})),
                    );
                }
                Ok(Err(e)) => {
                    let cause = json!({"kind": e.kind(), "message": e.to_string()});
                    return state.failed(
                        RunError::new("model_error", e.to_string())
                            .with_cause(cause)
                            .with_source(std::sync::Arc::new(e)),
                    );
                }
            };
            if let Some(u) = &message.usage {
                state.usage.add(u);
            }
            state.finish_reason = message.finish_reason;
            hooks.emit(RunEvent::MessageCompleted(message.clone()));
            if let Err(e) = hooks.commit(Step::Append(&message)).await {
                return state.failed(not_stored(e));
            }
            let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
            state.request.messages.push(message);
            if calls.is_empty() {
                match self.complete(state).await {
                    Ending::Done(r) => return r,
                    Ending::Retry(retry) => {
                        // The problems go back to the model, as a message
                        // of the thread like any other.
                        hooks.emit(RunEvent::MessageCompleted(retry.clone()));
                        if let Err(e) = hooks.commit(Step::Append(&retry)).await {
                            return state.failed(not_stored(e));
                        }
                        state.request.messages.push(retry);
                        continue;
                    }
                }
            }

            // Calls that need approval wait; the others run now, together.
            let mut slots: Vec<Option<Block>> = vec![None; calls.len()];
            let mut runnable = Vec::new();
            for (i, call) in calls.iter().enumerate() {
                match self.waiting(state, call) {
                    Some(request) => slots[i] = Some(request),
                    None => runnable.push((i, call)),
                }
            }
            let pairs: Vec<(&ToolCall, &Value)> =
                runnable.iter().map(|(_, c)| (*c, &c.arguments)).collect();
            let reports = self.run_calls(state, &pairs, hooks).await;
            let mut stop = Stop::default();
            for ((i, call), report) in runnable.iter().zip(reports) {
                if report.result.status == ToolStatus::InvalidArguments
                    && let Err(e) = budget.record(&call.name, &state.tools)
                {
                    stop.over_budget.get_or_insert(e);
                }
                slots[*i] = Some(self.result_block(report, &mut stop));
            }
            let content = slots.into_iter().flatten().collect();
            // Boxed: ending a turn holds more than waiting for the model
            // does, and the loop's future is as large as its largest wait.
            if let Some(end) =
                Box::pin(self.end_tool_turn(state, content, Place::Append, stop, hooks)).await
            {
                return end;
            }
        }
    }

    /// An `approval_request` block in `call`'s place when it must wait
    /// for a decision (valid arguments, and the tool says so).
    pub(super) fn waiting(&self, state: &State, call: &ToolCall) -> Option<Block> {
        match state.tools.check(&call.name, call, &call.arguments) {
            Check::Ready {
                needs_approval: true,
                ..
            } => {
                let mut request = ApprovalRequest::for_call(call);
                request.digest = self.digest(&state.run_id, call);
                Some(Block::ApprovalRequest {
                    approval_request: request,
                })
            }
            _ => None,
        }
    }

    /// Runs calls together; reports in call order.
    pub(super) async fn run_calls(
        &self,
        state: &State,
        calls: &[(&ToolCall, &Value)],
        hooks: &Hooks,
    ) -> Vec<CallReport> {
        let sink = hooks.tool_events();
        state
            .tools
            .run_calls(calls, &self.call_settings(state), sink.as_ref())
            .await
    }

    /// The invalid-argument budget as already spent in this turn.
    fn budget_so_far(&self, state: &State) -> Result<InvalidArgumentsBudget, BudgetExceeded> {
        let mut budget = InvalidArgumentsBudget::new(self.inner.limits.max_invalid_arguments);
        for m in state.turn() {
            for b in &m.content {
                if let Block::ToolResult { tool_result } = b
                    && tool_result.status == ToolStatus::InvalidArguments
                {
                    let name = tool_result.name.as_deref().unwrap_or("");
                    budget.record(name, &state.tools)?;
                }
            }
        }
        Ok(budget)
    }

    /// One model call, in its `chat` span.
    async fn call_model(&self, state: &State, hooks: &Hooks) -> Result<Message, ModelError> {
        let model = &self.inner.model;
        let (provider, id) = (model.provider(), model.model_id());
        let span = telemetry::chat_span(provider, id, &state.request.messages);
        let started = std::time::Instant::now();
        let answer = self
            .call_model_now(state, hooks)
            .instrument(span.clone())
            .await
            .map(|m| self.priced(m, provider, id));
        telemetry::chat_ended(&span, provider, id, answer.as_ref(), started.elapsed());
        answer
    }

    /// The message with its cost, from its own provider and model names
    /// (a fallback's answer names the model that wrote it), else the
    /// model's. A cost the model gave is kept; no usage or a model the
    /// table does not price: no cost.
    fn priced(&self, mut m: Message, provider: &str, id: &str) -> Message {
        if m.cost.is_some() || m.role != parlance_format::Role::Assistant {
            return m;
        }
        let Some(usage) = m.usage else {
            return m;
        };
        let table = match &self.inner.prices {
            Some(t) => t.as_ref(),
            None => parlance_prices::PriceTable::builtin(),
        };
        let provider = m.provider.as_deref().unwrap_or(provider);
        let model = m.model.as_deref().unwrap_or(id);
        m.cost = table.cost(provider, model, &usage);
        m
    }

    async fn call_model_now(&self, state: &State, hooks: &Hooks) -> Result<Message, ModelError> {
        let model = &self.inner.model;
        // Artifacts are kept with the thread, never sent to a model: a
        // request that holds any is sent without them.
        let stripped;
        let request = if has_artifacts(&state.request.messages) {
            stripped = without_artifacts(&state.request);
            &stripped
        } else {
            &state.request
        };
        if !hooks.streaming() {
            return model.generate(request).await;
        }
        let mut stream = model.stream(request).await?;
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta { text, .. } => hooks.emit(RunEvent::TextDelta(text)),
                StreamEvent::ThinkingDelta { text, .. } => {
                    hooks.emit(RunEvent::ThinkingDelta(text))
                }
                StreamEvent::Done(message) => return Ok(message),
                _ => {}
            }
        }
        Err(ModelError::MalformedResponse {
            message: "the stream ended before the message was complete".into(),
        })
    }

    /// The model stopped: the output is its text, or its JSON value when an
    /// output schema is set. A value that does not fit goes back to the
    /// model with its problems while output retries remain.
    async fn complete(&self, state: &State) -> Ending {
        let last = state
            .request
            .messages
            .last()
            .expect("a message was just added");
        let Some(validator) = &self.inner.output else {
            return Ending::Done(state.response(RunStatus::Completed, Value::String(last.text())));
        };
        let value = last.content.iter().find_map(|b| match b {
            Block::Json { json } => Some(Ok(json.clone())),
            _ => None,
        });
        let value = value.unwrap_or_else(|| {
            serde_json::from_str::<Value>(&last.text()).map_err(|e| e.to_string())
        });
        let (summary, problems, cause) = match value {
            Err(e) => (
                "the final answer is not JSON",
                vec![e],
                Value::String(last.text()),
            ),
            Ok(v) => {
                let mut problems = validator.problems(&v);
                let summary = if !problems.is_empty() {
                    "the final answer does not match the output schema"
                } else if let Some(check) = &self.inner.output_validator {
                    if let Err(p) = check(v.clone()).await {
                        problems = p;
                    }
                    "the final answer was refused by the output validator"
                } else {
                    ""
                };
                if problems.is_empty() {
                    return Ending::Done(state.response(RunStatus::Completed, v));
                }
                (summary, problems, v)
            }
        };
        let used = output_retries(state.turn());
        if used < self.inner.limits.output_retries {
            let mut retry = Message::user(format!(
                "{summary}: {}. Answer again, with only the JSON of the output schema.",
                problems.join("; ")
            ));
            retry.metadata = Some(serde_json::Map::from_iter([(
                OUTPUT_RETRY.to_string(),
                Value::from(used + 1),
            )]));
            return Ending::Retry(retry);
        }
        let after = match used {
            0 => String::new(),
            1 => " (after 1 retry)".to_string(),
            n => format!(" (after {n} retries)"),
        };
        Ending::Done(
            state.failed(
                RunError::new(
                    "invalid_output",
                    format!("{summary}{after}: {}", problems.join("; ")),
                )
                .with_cause(cause),
            ),
        )
    }
}

/// How a turn without tool calls ends.
enum Ending {
    /// The run's response.
    Done(Response),
    /// The answer did not fit: this message tells the model why.
    Retry(Message),
}

/// The metadata key of a message that sent an answer back (its value:
/// which retry it is), so that retries are counted from the thread itself.
pub(super) const OUTPUT_RETRY: &str = "output_retry";

/// Output retries already spent in this turn.
fn output_retries(turn: &[Message]) -> u32 {
    turn.iter()
        .filter(|m| {
            m.role == parlance_format::Role::User
                && m.metadata
                    .as_ref()
                    .is_some_and(|d| d.contains_key(OUTPUT_RETRY))
        })
        .count() as u32
}

fn has_artifacts(messages: &[Message]) -> bool {
    messages
        .iter()
        .flat_map(|m| &m.content)
        .any(|b| matches!(b, Block::ToolResult { tool_result } if tool_result.artifact.is_some()))
}

fn without_artifacts(request: &ModelRequest) -> ModelRequest {
    let mut r = request.clone();
    for b in r.messages.iter_mut().flat_map(|m| m.content.iter_mut()) {
        if let Block::ToolResult { tool_result } = b {
            tool_result.artifact = None;
        }
    }
    r
}
