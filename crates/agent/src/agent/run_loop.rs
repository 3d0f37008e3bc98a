//! One run, turn by turn: call the model, run the calls it makes (those
//! that need approval wait), and end each turn of tool calls (`turn`).

use std::panic::AssertUnwindSafe;

use futures::{FutureExt, StreamExt};
use parlance_format::{Block, Message, Response, RunError, RunStatus, ToolCall, ToolStatus};
use parlance_model::{ModelError, ModelRequest, StreamEvent, panic_message};
use serde_json::{Value, json};

use super::Agent;
use super::events::{Hooks, RunEvent, Step};
use super::guard::{Blocked, Output, Pending, rewritten, sentence_end};
use super::state::State;
use super::turn::{Place, not_stored};
use crate::engine::{BudgetExceeded, CallReport, InvalidArgumentsBudget};
use crate::guardrail::{OutputHold, note};
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
        // A provider's `context_too_long` makes the context policy cut at
        // once, and the request is made again: once per model call.
        let mut overflowed = false;
        loop {
            if state.model_calls() >= limits.max_model_calls {
                let n = limits.max_model_calls;
                return state.failed(RunError::new(
                    "max_model_calls",
                    format!("the model was called {n} times without finishing (limit {n})"),
                ));
            }
            if self.inner.budget.is_some()
                && let Some(end) = Box::pin(self.over_budget(state, hooks)).await
            {
                return end;
            }
            if let Err(e) = self.refresh_tools(state).await {
                return state.failed(e);
            }
            if self.inner.context.is_some()
                && let Err(e) = Box::pin(self.fit_context(state, hooks, false)).await
            {
                return state.failed(e);
            }
            // A model step that panics (a provider's decoder, a model of
            // the application's) fails this run, not the process; what
            // the run did so far stays in its response.
            let answer = AssertUnwindSafe(self.call_model(state, hooks))
                .catch_unwind()
                .await;
            let (message, released) = match answer {
                Ok(Ok(m)) => m,
                Err(payload) => {
                    let message = panic_message(&*payload);
                    return state.failed(
                        RunError::new("model_error", format!("the model panicked: {message}"))
                            .with_cause(json!({"kind": "panic", "message": message})),
                    );
                }
                Ok(Err(ModelError::ContextTooLong { .. }))
                    if !overflowed && self.cuts_on_overflow() =>
                {
                    overflowed = true;
                    match Box::pin(self.fit_context(state, hooks, true)).await {
                        Ok(true) => continue,
                        Ok(false) => {
                            return state.failed(RunError::new(
                                "context_too_long",
                                "the provider said the context is too long, and nothing was cut",
                            ));
                        }
                        Err(e) => return state.failed(e),
                    }
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
            overflowed = false;
            if let Some(u) = &message.usage {
                state.usage.add(u);
            }
            state.finish_reason = message.finish_reason;
            let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
            if calls.is_empty() {
                // The answer is checked before anyone sees it.
                let (message, ending) = self.complete(state, message).await;
                let message = match ending {
                    Ending::Blocked(b) => {
                        return self.end_blocked(state, b, hooks).await;
                    }
                    _ => message,
                };
                if let Err(e) = self.keep(state, message, released, hooks).await {
                    return state.failed(e);
                }
                match ending {
                    Ending::Done(output) => {
                        return state.response(RunStatus::Completed, output);
                    }
                    Ending::Failed(e) => return state.failed(e),
                    Ending::Blocked(_) => unreachable!("ended above"),
                    Ending::Retry(retry) => {
                        // The problems go back to the model, as a message
                        // of the thread like any other.
                        if let Err(e) = self.keep(state, retry, None, hooks).await {
                            return state.failed(e);
                        }
                        continue;
                    }
                }
            }
            if let Err(e) = self.keep(state, message, released, hooks).await {
                return state.failed(e);
            }

            // Calls pass the guardrails; those that need approval wait;
            // the others run now, together.
            let pending = calls
                .iter()
                .enumerate()
                .map(|(slot, call)| Pending {
                    slot,
                    call,
                    arguments: None,
                    approved: None,
                })
                .collect();
            let (settled, mut stop) = Box::pin(self.settle_calls(state, pending, hooks)).await;
            let mut slots: Vec<Option<Block>> = vec![None; calls.len()];
            for (i, block) in settled {
                if let Block::ToolResult { tool_result } = &block
                    && tool_result.status == ToolStatus::InvalidArguments
                    && let Err(e) = budget.record(&calls[i].name, &state.tools)
                {
                    stop.over_budget.get_or_insert(e);
                }
                slots[i] = Some(block);
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

    /// A new message of the run: its held text (if any) released to a
    /// streaming caller, reported, kept, then in the model's context.
    pub(super) async fn keep(
        &self,
        state: &mut State,
        message: Message,
        released: Option<String>,
        hooks: &Hooks,
    ) -> Result<(), RunError> {
        if let Some(text) = unreleased(hooks, &message, released) {
            hooks.emit(RunEvent::TextDelta(text));
        }
        // Kept, then reported: a `message` event names a committed step
        // (a stream's reconnect numbers its events by what is stored).
        hooks
            .commit(Step::Append(&message))
            .await
            .map_err(not_stored)?;
        hooks.emit(RunEvent::MessageCompleted(message.clone()));
        state.request.messages.push(message);
        Ok(())
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

    /// One model call, in its `chat` span; with the text already sent
    /// when it streamed held for the output guardrails (`None`: all of it).
    async fn call_model(
        &self,
        state: &State,
        hooks: &Hooks,
    ) -> Result<(Message, Option<String>), ModelError> {
        self.call_model_with(state, &self.sent(state), hooks).await
    }

    /// [`Self::call_model`] with `request` (what the run's state would
    /// send, or a variant of it).
    pub(super) async fn call_model_with(
        &self,
        state: &State,
        request: &ModelRequest,
        hooks: &Hooks,
    ) -> Result<(Message, Option<String>), ModelError> {
        let model = &self.inner.model;
        let (provider, id) = (model.provider(), model.model_id());
        let span = telemetry::chat_span(provider, id, &request.messages);
        let started = std::time::Instant::now();
        let answer = self
            .call_model_now(state, request, hooks)
            .instrument(span.clone())
            .await
            .map(|(m, released)| (self.priced(m, provider, id), released));
        let message = answer.as_ref().map(|(m, _)| m);
        telemetry::chat_ended(&span, provider, id, message, started.elapsed());
        answer
    }

    /// The message with its cost, from its own provider and model names
    /// (a fallback's answer names the model that wrote it), else the
    /// model's. A cost the model gave is kept; no usage or a model the
    /// table does not price: no cost.
    pub(super) fn priced(&self, mut m: Message, provider: &str, id: &str) -> Message {
        if m.cost.is_some() || m.role != parlance_format::Role::Assistant {
            return m;
        }
        let Some(usage) = m.usage else {
            return m;
        };
        let table = self.prices();
        let provider = m.provider.as_deref().unwrap_or(provider);
        let model = m.model.as_deref().unwrap_or(id);
        m.cost = table.cost(provider, model, &usage);
        m
    }

    async fn call_model_now(
        &self,
        state: &State,
        request: &ModelRequest,
        hooks: &Hooks,
    ) -> Result<(Message, Option<String>), ModelError> {
        let model = &self.inner.model;
        if !hooks.streaming() {
            return Ok((model.generate(request).await?, None));
        }
        // With an output guardrail, the text waits for it: all of it, or
        // each sentence until the answer so far is allowed.
        let mut held = self.holds_output().then(|| Held {
            text: String::new(),
            released: 0,
            stuck: self.inner.limits.output_hold == OutputHold::Answer,
        });
        let mut stream = model.stream(request).await?;
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta { text, .. } => match &mut held {
                    None => hooks.emit(RunEvent::TextDelta(text)),
                    Some(h) => {
                        h.text.push_str(&text);
                        // Boxed, as every guardrail wait here: a run
                        // without guardrails holds none of their state.
                        Box::pin(self.release_sentences(state, h, hooks)).await;
                    }
                },
                StreamEvent::ThinkingDelta { text, .. } => {
                    hooks.emit(RunEvent::ThinkingDelta(text))
                }
                StreamEvent::Done(message) => {
                    let released = held.map(|h| h.text[..h.released].to_string());
                    return Ok((message, released));
                }
                _ => {}
            }
        }
        Err(ModelError::MalformedResponse {
            message: "the stream ended before the message was complete".into(),
        })
    }

    /// Lets a held answer's complete sentences out once the output
    /// guardrails allow the answer so far ([`OutputHold::Sentence`]);
    /// after anything but `allow`, the rest waits for the whole answer.
    async fn release_sentences(&self, state: &State, h: &mut Held, hooks: &Hooks) {
        if h.stuck {
            return;
        }
        let Some(end) = sentence_end(&h.text).filter(|&e| e > h.released) else {
            return;
        };
        let so_far = Message::assistant(&h.text[..end]);
        let value = Value::String(so_far.text());
        match self.guard_output(state, &so_far, &value, true).await {
            Ok(Output::Allowed) => {
                hooks.emit(RunEvent::TextDelta(h.text[h.released..end].to_string()));
                h.released = end;
            }
            _ => h.stuck = true,
        }
    }

    /// The model stopped: the output is its text, or its JSON value when an
    /// output schema is set. A value that does not fit goes back to the
    /// model with its problems while output retries remain; then the
    /// output guardrails decide. Returns the answer as it is kept
    /// (rewritten by a guardrail, or as the model wrote it).
    async fn complete(&self, state: &State, last: Message) -> (Message, Ending) {
        let Some(validator) = &self.inner.output else {
            let value = Value::String(last.text());
            return self.guarded(state, last, value).await;
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
                    return self.guarded(state, last, v).await;
                }
                (summary, problems, v)
            }
        };
        let ending = self.send_back(
            state,
            format!(
                "{summary}: {}. Answer again, with only the JSON of the output schema.",
                problems.join("; ")
            ),
            |after| {
                RunError::new(
                    "invalid_output",
                    format!("{summary}{after}: {}", problems.join("; ")),
                )
                .with_cause(cause)
            },
        );
        (last, ending)
    }

    /// A valid answer through the output guardrails.
    pub(super) async fn guarded(
        &self,
        state: &State,
        last: Message,
        value: Value,
    ) -> (Message, Ending) {
        if !self.holds_output() {
            return (last, Ending::Done(value));
        }
        match Box::pin(self.guard_output(state, &last, &value, false)).await {
            Ok(Output::Allowed | Output::Hold) => (last, Ending::Done(value)),
            Err(e) => (last, Ending::Failed(e)),
            Ok(Output::Blocked(b)) => (last, Ending::Blocked(b)),
            Ok(Output::Replaced {
                text,
                value,
                records,
            }) => {
                let mut answer = rewritten(last, text, &value);
                note(&mut answer, records);
                (answer, Ending::Done(value))
            }
            Ok(Output::Retry { message, records }) => {
                let mut answer = last;
                note(&mut answer, records);
                let ending = self.send_back(
                    state,
                    format!("The answer was not accepted: {message}. Answer again."),
                    |after| {
                        RunError::new(
                            "invalid_output",
                            format!("an output guardrail refused the answer{after}: {message}"),
                        )
                    },
                );
                (answer, ending)
            }
        }
    }

    /// Whether the context policy cuts when the provider says the
    /// context is too long (all but `fail`, which leaves the provider's
    /// error as it is).
    fn cuts_on_overflow(&self) -> bool {
        self.inner
            .context
            .as_ref()
            .is_some_and(|c| c.strategy != crate::context::Strategy::Fail)
    }

    /// The answer goes back to the model with `why`, while output retries
    /// remain; then the run fails with `error(" (after N retries)")`.
    fn send_back(
        &self,
        state: &State,
        why: String,
        error: impl FnOnce(&str) -> RunError,
    ) -> Ending {
        let used = output_retries(state.turn());
        if used < self.inner.limits.output_retries {
            let mut retry = Message::user(why);
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
        Ending::Failed(error(&after))
    }
}

/// How a turn without tool calls ends.
#[allow(clippy::large_enum_variant)] // one per answer, never kept
pub(super) enum Ending {
    /// Completed, with this output.
    Done(Value),
    /// Failed (the answer did not fit, a guardrail failed).
    Failed(RunError),
    /// A guardrail blocked the answer.
    Blocked(Blocked),
    /// The answer did not fit: this message tells the model why.
    Retry(Message),
}

/// A streamed answer's text while the output guardrails hold it.
struct Held {
    text: String,
    /// Bytes of `text` already sent.
    released: usize,
    /// Nothing more goes out before the whole answer is checked.
    stuck: bool,
}

/// The text of `message` not yet sent to a streaming caller: all of it
/// when its text was held, what follows the part already sent when that
/// part is still its beginning (nothing when a guardrail rewrote it: the
/// `message` event carries the new text).
fn unreleased(hooks: &Hooks, message: &Message, released: Option<String>) -> Option<String> {
    let released = released.filter(|_| hooks.streaming())?;
    let text = message.text();
    let rest = text.strip_prefix(released.as_str())?;
    (!rest.is_empty()).then(|| rest.to_string())
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
