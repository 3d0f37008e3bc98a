//! The built-in runner of the state machine (`machine`): a model step and
//! a tools step, each committing one message, and what a model step does
//! with an answer (the output schema, the output guardrails, retries).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::{FutureExt, StreamExt};
use parlance_format::{Block, Message, Response, RunError, RunStatus, ToolCall, ToolStatus};
use parlance_model::{ModelError, ModelRequest, StreamEvent, panic_message};
use serde_json::{Value, json};

use super::Agent;
use super::events::{Hooks, RunEvent, Step};
use super::guard::{Output, Pending, rewritten, sentence_end};
use super::machine::Next;
use super::state::State;
use super::stop::{Blocked, not_stored};
use super::turn::Place;
use crate::engine::{BudgetExceeded, CallReport, InvalidArgumentsBudget};
use crate::guardrail::{OutputHold, note};
use crate::telemetry;
use tracing::Instrument;

/// What a step leaves the loop with: go on (the machine says where), or
/// the run's response.
#[allow(clippy::large_enum_variant)] // one per step, returned at once
enum Flow {
    Next,
    End(Response),
    /// The conversation was handed to this agent: it goes on.
    Handoff(Agent),
}

/// What the loop carries from step to step besides the run's messages.
struct Loop {
    /// Invalid calls left before the run stops.
    budget: InvalidArgumentsBudget,
    /// The provider said the context was too long, and the context policy
    /// cut: once per model call.
    overflowed: bool,
}

impl Agent {
    /// The loop: each step commits one message, then the state machine
    /// ([`machine::next`]) says what comes next, from the run's messages
    /// alone — model, tools, a pause for decisions, or the end.
    pub(super) async fn drive(&self, state: &mut State, hooks: &Hooks) -> Response {
        let budget = match self.budget_so_far(state) {
            Ok(b) => b,
            Err(e) => {
                return state.failed(RunError::new("invalid_arguments_budget", e.to_string()));
            }
        };
        let mut run = Loop {
            budget,
            overflowed: false,
        };
        loop {
            let flow = match state.next(self.inner.limits.max_model_calls) {
                Next::Model => self.model_step(state, &mut run, hooks).await,
                // Boxed: a turn of calls holds more than waiting for the
                // model does, and the loop's future is as large as its
                // largest wait.
                Next::Tools => Box::pin(self.tools_step(state, &mut run, hooks)).await,
                Next::Decide(pending) => {
                    hooks.emit(RunEvent::ApprovalRequired(pending.clone()));
                    let mut r = state.response(RunStatus::RequiresApproval, Value::Null);
                    r.pending = pending;
                    return r;
                }
                Next::End => return self.answered(state),
                Next::OutOfModelCalls { limit: n } => {
                    return state.failed(RunError::new(
                        "max_model_calls",
                        format!("the model was called {n} times without finishing (limit {n})"),
                    ));
                }
            };
            match flow {
                Flow::Next => {}
                Flow::End(r) => return r,
                Flow::Handoff(to) => return to.take_over(state, hooks).await,
            }
        }
    }

    /// Model: the budget and the context checked, the model asked; its
    /// answer, checked when it has no calls, is committed.
    async fn model_step(&self, state: &mut State, run: &mut Loop, hooks: &Hooks) -> Flow {
        if self.inner.budget.is_some()
            && let Some(end) = Box::pin(self.over_budget(state, hooks)).await
        {
            return Flow::End(end);
        }
        if let Err(e) = self.refresh_tools(state).await {
            return Flow::End(state.failed(e));
        }
        if self.inner.context.is_some()
            && let Err(e) = Box::pin(self.fit_context(state, hooks, false)).await
        {
            return Flow::End(state.failed(e));
        }
        // A model step that panics (a provider's decoder, a model of the
        // application's) fails this run, not the process; what the run did
        // so far stays in its response.
        let answer = AssertUnwindSafe(self.call_model(state, hooks))
            .catch_unwind()
            .await;
        let (message, released) = match answer {
            Ok(Ok(m)) => m,
            Err(payload) => {
                let message = panic_message(&*payload);
                return Flow::End(
                    state.failed(
                        RunError::new("model_error", format!("the model panicked: {message}"))
                            .with_cause(json!({"kind": "panic", "message": message})),
                    ),
                );
            }
            Ok(Err(ModelError::ContextTooLong { .. }))
                if !run.overflowed && self.cuts_on_overflow() =>
            {
                run.overflowed = true;
                return match Box::pin(self.fit_context(state, hooks, true)).await {
                    Ok(true) => Flow::Next,
                    Ok(false) => Flow::End(state.failed(RunError::new(
                        "context_too_long",
                        "the provider said the context is too long, and nothing was cut",
                    ))),
                    Err(e) => Flow::End(state.failed(e)),
                };
            }
            Ok(Err(e)) => {
                let cause = json!({"kind": e.kind(), "message": e.to_string()});
                return Flow::End(
                    state.failed(
                        RunError::new("model_error", e.to_string())
                            .with_cause(cause)
                            .with_source(std::sync::Arc::new(e)),
                    ),
                );
            }
        };
        run.overflowed = false;
        if let Some(u) = &message.usage {
            state.usage.add(u);
        }
        state.finish_reason = message.finish_reason;
        if message.tool_calls().next().is_some() {
            return match self.keep(state, message, released, hooks).await {
                Ok(()) => Flow::Next,
                Err(e) => Flow::End(state.failed(e)),
            };
        }
        // The answer is checked before anyone sees it.
        let (message, ending) = self.complete(state, message).await;
        if let Ending::Blocked(b) = ending {
            return Flow::End(self.end_blocked(state, b, hooks).await);
        }
        if let Err(e) = self.keep(state, message, released, hooks).await {
            return Flow::End(state.failed(e));
        }
        match ending {
            Ending::Done(output) => Flow::End(state.response(RunStatus::Completed, output)),
            Ending::Failed(e) => Flow::End(state.failed(e)),
            Ending::Blocked(_) => unreachable!("ended above"),
            // The problems go back to the model, as a message of the
            // thread like any other.
            Ending::Retry(retry) => match self.keep(state, retry, None, hooks).await {
                Ok(()) => Flow::Next,
                Err(e) => Flow::End(state.failed(e)),
            },
        }
    }

    /// Tools: the last answer's calls pass the guardrails; those that need
    /// approval wait, the others run now, together; their message is
    /// committed (the machine then pauses the run for the waiting ones).
    async fn tools_step(&self, state: &mut State, run: &mut Loop, hooks: &Hooks) -> Flow {
        let last = state.request.messages.last().expect("an answer with calls");
        let calls: Vec<ToolCall> = last.tool_calls().cloned().collect();
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
        let (settled, mut stop) = self.settle_calls(state, pending, hooks).await;
        let mut slots: Vec<Option<Block>> = vec![None; calls.len()];
        for (i, block) in settled {
            if let Block::ToolResult { tool_result } = &block
                && tool_result.status == ToolStatus::InvalidArguments
                && let Err(e) = run.budget.record(&calls[i].name, &state.tools)
            {
                stop.over_budget.get_or_insert(e);
            }
            slots[i] = Some(block);
        }
        let content: Vec<Block> = slots.into_iter().flatten().collect();
        // The first handoff that went through hands the run over.
        let handoff = if self.inner.handoffs.is_empty() {
            None
        } else {
            content
                .iter()
                .filter_map(Block::as_tool_result)
                .filter(|r| r.status == ToolStatus::Ok)
                .find_map(|r| self.handoff_target(r.name.as_deref()?))
                .cloned()
        };
        if let Some(to) = &handoff {
            stop.handoff = Some(super::handoff::record(self, to));
        }
        match self
            .end_tool_turn(state, content, Place::Append, stop, hooks)
            .await
        {
            Some(end) => Flow::End(end),
            None => match handoff {
                Some(to) => Flow::Handoff(Agent {
                    inner: to.inner,
                    deps: self.deps.clone(),
                }),
                None => Flow::Next,
            },
        }
    }

    /// End, reached when a run starts at an answer it had committed (its
    /// process died before its outcome was stored): the output is that
    /// answer's, as it was checked before it was committed.
    fn answered(&self, state: &State) -> Response {
        let last = state.turn().last().expect("an answer");
        if crate::guardrail::blocked(last) {
            return state.failed(RunError::new(
                "blocked",
                "the run was blocked by a guardrail",
            ));
        }
        let output = match &self.inner.output {
            None => Value::String(last.text()),
            Some(_) => last
                .content
                .iter()
                .find_map(|b| match b {
                    Block::Json { json } => Some(json.clone()),
                    _ => None,
                })
                .or_else(|| serde_json::from_str(&last.text()).ok())
                .unwrap_or(Value::Null),
        };
        state.response(RunStatus::Completed, output)
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
        let mut settings = self.call_settings(state);
        // Agents used as tools keep their runs where this one is kept.
        settings.host = hooks
            .checkpoint
            .as_ref()
            .map(|c| Arc::new(super::subagent::HostLink(Arc::clone(c))) as crate::tool::Host);
        state.tools.run_calls(calls, &settings, sink.as_ref()).await
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

#[cfg(test)]
mod tests {
    use parlance_format::Message;
    use parlance_model::scripted::ScriptedModel;
    use serde_json::json;

    use super::*;

    /// No answer left to give: a model asked here fails the run.
    fn silent() -> ScriptedModel {
        ScriptedModel::new(Vec::<Message>::new())
    }

    /// A loop handed a run at its committed answer (another executor's,
    /// or a checkpoint that kept the answer but lost the outcome) ends
    /// with that answer, without asking the model again.
    #[tokio::test]
    async fn a_run_handed_over_at_its_answer_ends_with_it() {
        let agent = Agent::builder(silent()).build().expect("an agent");
        let mut state = agent.state(&[], None, None);
        state.request.messages.push(Message::user("hi"));
        state.request.messages.push(Message::assistant("Hello."));
        let r = agent.drive(&mut state, &Hooks::default()).await;
        assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
        assert_eq!(r.output, json!("Hello."));
    }

    #[tokio::test]
    async fn a_structured_answer_handed_over_ends_with_its_value() {
        let agent = Agent::builder(silent())
            .output_schema("answer", json!({"type": "object"}))
            .build()
            .expect("an agent");
        let mut state = agent.state(&[], None, None);
        state
            .request
            .messages
            .push(Message::assistant(r#"{"ok": true}"#));
        let r = agent.drive(&mut state, &Hooks::default()).await;
        assert_eq!(r.output, json!({"ok": true}));
    }

    /// A run handed over with calls still waiting pauses at once, naming
    /// them; nothing runs and the model is not asked.
    #[tokio::test]
    async fn a_run_handed_over_with_waiting_calls_pauses() {
        let agent = Agent::builder(silent()).build().expect("an agent");
        let mut state = agent.state(&[], None, None);
        let call = ToolCall::new("c1", "refund", json!({"amount": 5}));
        state.request.messages.push(Message::new(
            parlance_format::Role::Assistant,
            vec![Block::ToolCall {
                tool_call: call.clone(),
            }],
        ));
        state.request.messages.push(Message::new(
            parlance_format::Role::Tool,
            vec![Block::ApprovalRequest {
                approval_request: parlance_format::ApprovalRequest::for_call(&call),
            }],
        ));
        let r = agent.drive(&mut state, &Hooks::default()).await;
        assert_eq!(r.status, RunStatus::RequiresApproval);
        assert_eq!(r.pending.len(), 1);
        assert_eq!(r.pending[0].tool_call_id, "c1");
    }

    #[tokio::test]
    async fn a_new_run_whose_input_ends_with_an_answer_asks_the_model() {
        let model = ScriptedModel::new([Message::assistant("Asked.")]);
        let agent = Agent::builder(model).build().expect("an agent");
        let input =
            super::super::RunInput::from(vec![Message::user("hi"), Message::assistant("Hello.")]);
        let mut state = agent.start(input);
        let r = agent.drive(&mut state, &Hooks::default()).await;
        assert_eq!(r.output, json!("Asked."));
    }
}
