//! What a run sends its model, and keeping it inside the window: the
//! thread's messages less what is never sent (artifacts, a blocked input,
//! the range a compaction record stands for), and the context policy's
//! cut when it grows past its trigger (see [`crate::context`]).

use std::borrow::Cow;

use parlance_format::{Block, Message, RunError};
use parlance_model::{ModelError, ModelOptions, ModelRequest};

use super::Agent;
use super::events::{Hooks, RunEvent};
use super::state::State;
use crate::context::{
    Compaction, ContextPolicy, DEFAULT_SUMMARY_INSTRUCTIONS, SUMMARY_HEADING, Strategy, choose_cut,
    context_size, estimate_message, estimate_tools, is_record, transcript,
};
use crate::guardrail::withheld;

/// The messages a request is made of, as indices into
/// `state.request.messages`, in the order sent.
struct View {
    sent: Vec<usize>,
    /// Where the first message a cut may remove is in `sent` (after the
    /// instructions and the summary).
    first_cuttable: usize,
    /// The last compaction record, if any (its index in the request).
    record: Option<usize>,
}

/// Whether anything of `messages` is not sent as it is.
fn needs_view(messages: &[Message]) -> bool {
    messages.iter().any(|m| {
        (m.metadata.is_some() && (is_record(m) || withheld(m)))
            || m.content
                .iter()
                .any(|b| matches!(b, Block::ToolResult { tool_result } if tool_result.artifact.is_some()))
    })
}

fn view(state: &State) -> View {
    let messages = &state.request.messages;
    let start = state.thread_start;
    let mut sent: Vec<usize> = (0..start).collect();
    let record = messages.iter().rposition(is_record);
    let mut from = start;
    if let Some(r) = record {
        let c = Compaction::of(&messages[r]);
        // A record stands for messages before it, never for itself or
        // what follows (whatever its metadata says).
        from = c.as_ref().map_or(r, |c| (start + c.replaces).min(r));
        if c.is_some_and(|c| c.strategy == Strategy::Compact) {
            sent.push(r);
        }
    }
    let first_cuttable = sent.len();
    for (i, m) in messages.iter().enumerate().skip(from) {
        if !is_record(m) && !withheld(m) {
            sent.push(i);
        }
    }
    View {
        sent,
        first_cuttable,
        record,
    }
}

impl Agent {
    /// The request as it goes to the model.
    pub(super) fn sent<'s>(&self, state: &'s State) -> Cow<'s, ModelRequest> {
        if !needs_view(&state.request.messages) {
            return Cow::Borrowed(&state.request);
        }
        let v = view(state);
        let mut messages: Vec<Message> = v
            .sent
            .iter()
            .map(|&i| state.request.messages[i].clone())
            .collect();
        // Artifacts are kept with the thread, never sent to a model.
        for b in messages.iter_mut().flat_map(|m| m.content.iter_mut()) {
            if let Block::ToolResult { tool_result } = b {
                tool_result.artifact = None;
            }
        }
        Cow::Owned(ModelRequest {
            messages,
            tools: state.request.tools.clone(),
            options: state.request.options.clone(),
        })
    }

    /// Applies the context policy before a model request: past its
    /// trigger (or at once when the provider said the context was too
    /// long: `overflowed`), fails, or cuts the oldest turns and keeps a
    /// record of the cut. Whether it cut.
    pub(super) async fn fit_context(
        &self,
        state: &mut State,
        hooks: &Hooks,
        overflowed: bool,
    ) -> Result<bool, RunError> {
        let Some(policy) = &self.inner.context else {
            return Ok(false);
        };
        let v = view(state);
        let messages: Vec<&Message> = v.sent.iter().map(|&i| &state.request.messages[i]).collect();
        let fresh_from = v.record.map_or(0, |r| {
            v.sent.iter().position(|&i| i > r).unwrap_or(v.sent.len())
        });
        let size = context_size(&messages, fresh_from, &state.request.tools);
        let model = &self.inner.model;
        let window = policy.window.or_else(|| {
            self.prices()
                .context_window(model.provider(), model.model_id())
        });
        let window = match (window, overflowed) {
            (Some(w), false) if (size as f64) <= policy.trigger * w as f64 => return Ok(false),
            (Some(w), _) => w,
            (None, false) => return Ok(false),
            // What was sent did not fit: the window is smaller than it.
            (None, true) => size,
        };
        let what = || {
            format!(
                "the context is about {size} tokens, over {}% of the {window}-token window of {}",
                (policy.trigger * 100.0).round(),
                model.model_id()
            )
        };
        if policy.strategy == Strategy::Fail {
            return Err(RunError::new(
                "context_too_long",
                format!("{}; the agent's context policy is fail", what()),
            ));
        }
        let fixed = messages[..state.thread_start]
            .iter()
            .map(|m| estimate_message(m))
            .sum::<u64>()
            + estimate_tools(&state.request.tools);
        let budget = (policy.keep * window as f64) as u64;
        let Some(cut) = choose_cut(&messages, v.first_cuttable, fixed, budget) else {
            if !overflowed {
                // Nothing can go yet (one long turn): the provider decides.
                return Ok(false);
            }
            return Err(RunError::new(
                "context_too_long",
                format!(
                    "{}, and nothing can be cut: the newest turn alone does not fit",
                    what()
                ),
            ));
        };
        let compaction = Compaction {
            strategy: policy.strategy,
            replaces: v.sent[cut] - state.thread_start,
            tokens_before: size,
            tokens_after: fixed
                + messages[cut..]
                    .iter()
                    .map(|m| estimate_message(m))
                    .sum::<u64>(),
        };
        // The summary covers the last one's summary and what follows, up
        // to the cut.
        let covered = &messages[state.thread_start..cut];
        let record = match policy.strategy {
            Strategy::Compact => Box::pin(self.summary(policy, covered, &compaction)).await?,
            _ => {
                let mut m = Message::user(format!(
                    "{} earlier messages are left out of the model's context.",
                    compaction.replaces
                ));
                m.metadata = Some(compaction.to_metadata(None));
                m
            }
        };
        drop(messages);
        if let Some(u) = &record.usage {
            state.usage.add(u);
        }
        hooks.emit(RunEvent::ContextCompacted(compaction));
        self.keep(state, record, None, hooks).await?;
        Ok(true)
    }

    /// The record of a compaction: a summary of `covered` written by the
    /// policy's model (or the agent's), with its usage and cost.
    async fn summary(
        &self,
        policy: &ContextPolicy,
        covered: &[&Message],
        compaction: &Compaction,
    ) -> Result<Message, RunError> {
        let model = policy.model.as_ref().unwrap_or(&self.inner.model);
        let instructions = policy
            .instructions
            .as_deref()
            .unwrap_or(DEFAULT_SUMMARY_INSTRUCTIONS);
        let request = ModelRequest {
            messages: vec![
                Message::system(instructions),
                Message::user(format!(
                    "The conversation to summarize:\n\n{}",
                    transcript(covered.iter().copied())
                )),
            ],
            tools: Default::default(),
            options: ModelOptions::default(),
        };
        let failed = |e: String| RunError::new("compaction_failed", e);
        let answer = model
            .generate(&request)
            .await
            .map_err(|e: ModelError| failed(format!("the summary could not be written: {e}")))?;
        let answer = self.priced(answer, model.provider(), model.model_id());
        let text = answer.text();
        let text = text.trim();
        if text.is_empty() {
            return Err(failed(format!(
                "the summary could not be written: {} answered no text",
                model.model_id()
            )));
        }
        let mut record = Message::user(format!("{SUMMARY_HEADING}\n\n{text}"));
        let name = format!(
            "{}:{}",
            answer.provider.as_deref().unwrap_or(model.provider()),
            answer.model.as_deref().unwrap_or(model.model_id())
        );
        record.metadata = Some(compaction.to_metadata(Some(name)));
        record.usage = answer.usage;
        record.cost = answer.cost;
        record.provider = answer
            .provider
            .or_else(|| Some(model.provider().to_string()));
        record.model = answer.model.or_else(|| Some(model.model_id().to_string()));
        Ok(record)
    }
}
