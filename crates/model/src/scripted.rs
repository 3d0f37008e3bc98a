//! A scripted model for tests: it answers from a script of canonical
//! messages and records every request it was sent. It is not a stand-in
//! for a real provider (those are tested against recorded payloads); it
//! lets the run loop be tested exactly.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use parlance_format::{Block, Message, Role};

use crate::{EventStream, Model, ModelError, ModelRequest, StreamEvent};

/// One scripted answer.
pub type Step = Box<dyn Fn(&ModelRequest) -> Result<Message, ModelError> + Send + Sync>;

/// A model that plays back a script.
#[derive(Clone)]
pub struct ScriptedModel {
    steps: Arc<Mutex<VecDeque<Step>>>,
    received: Arc<Mutex<Vec<ModelRequest>>>,
}

impl std::fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedModel").finish_non_exhaustive()
    }
}

impl ScriptedModel {
    /// A model that answers with these messages, in order.
    pub fn new(messages: impl IntoIterator<Item = Message>) -> Self {
        let m = ScriptedModel {
            steps: Arc::default(),
            received: Arc::default(),
        };
        for msg in messages {
            m.push(msg);
        }
        m
    }

    /// Appends an answer.
    pub fn push(&self, message: Message) {
        self.push_step(Box::new(move |_| Ok(message.clone())));
    }

    /// Appends an error answer.
    pub fn push_error(&self, error: ModelError) {
        self.push_step(Box::new(move |_| Err(error.clone())));
    }

    /// Appends an answer computed from the request.
    pub fn push_step(&self, step: Step) {
        self.steps.lock().expect("script lock").push_back(step);
    }

    /// Every request received so far.
    pub fn received(&self) -> Vec<ModelRequest> {
        self.received.lock().expect("script lock").clone()
    }

    /// Forgets the requests received so far (a benchmark's runs would
    /// otherwise keep every one).
    pub fn forget_received(&self) {
        self.received.lock().expect("script lock").clear();
    }

    /// How many answers are left.
    pub fn remaining(&self) -> usize {
        self.steps.lock().expect("script lock").len()
    }

    fn answer(&self, request: &ModelRequest) -> Result<Message, ModelError> {
        self.received
            .lock()
            .expect("script lock")
            .push(request.clone());
        let step = self.steps.lock().expect("script lock").pop_front();
        let mut msg = match step {
            Some(step) => step(request)?,
            None => {
                return Err(ModelError::InvalidRequest {
                    message: "the scripted model has no more answers".into(),
                });
            }
        };
        msg.role = Role::Assistant;
        if msg.provider.is_none() {
            msg.provider = Some("scripted".into());
        }
        Ok(msg)
    }
}

/// The events a provider would stream for `msg`: block shells, text in
/// word-sized pieces, tool arguments in two fragments, then `Done`.
pub fn events_for(msg: &Message) -> Vec<StreamEvent> {
    let mut out = Vec::new();
    for (index, block) in msg.content.iter().enumerate() {
        match block {
            Block::Text(t) => {
                let mut shell = t.clone();
                shell.text.clear();
                out.push(StreamEvent::BlockStart {
                    index,
                    block: Block::Text(shell),
                });
                for piece in t.text.split_inclusive(' ') {
                    out.push(StreamEvent::TextDelta {
                        index,
                        text: piece.to_string(),
                    });
                }
            }
            Block::Thinking(t) => {
                let mut shell = t.clone();
                shell.thinking.clear();
                out.push(StreamEvent::BlockStart {
                    index,
                    block: Block::Thinking(shell),
                });
                for piece in t.thinking.split_inclusive(' ') {
                    out.push(StreamEvent::ThinkingDelta {
                        index,
                        text: piece.to_string(),
                    });
                }
            }
            Block::ToolCall { tool_call } => {
                let mut shell = tool_call.clone();
                shell.arguments = serde_json::Value::Null;
                shell.raw_arguments = None;
                out.push(StreamEvent::BlockStart {
                    index,
                    block: Block::ToolCall { tool_call: shell },
                });
                let text = match &tool_call.raw_arguments {
                    Some(raw) => raw.clone(),
                    None => serde_json::to_string(&tool_call.arguments).expect("json"),
                };
                let mid = text
                    .char_indices()
                    .nth(text.chars().count() / 2)
                    .map_or(0, |(i, _)| i);
                for piece in [&text[..mid], &text[mid..]] {
                    out.push(StreamEvent::ToolArgumentsDelta {
                        index,
                        json: piece.to_string(),
                    });
                }
            }
            other => out.push(StreamEvent::BlockStart {
                index,
                block: other.clone(),
            }),
        }
    }
    out.push(StreamEvent::Done(msg.clone()));
    out
}

impl Model for ScriptedModel {
    fn provider(&self) -> &str {
        "scripted"
    }

    fn model_id(&self) -> &str {
        "scripted"
    }

    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(async move { self.answer(request) })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        Box::pin(async move {
            let msg = self.answer(request)?;
            let events = events_for(&msg).into_iter().map(Ok);
            Ok(Box::pin(futures::stream::iter(events)) as EventStream<'a>)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Assembler;
    use serde_json::json;

    #[test]
    fn streamed_events_assemble_into_the_message() {
        let mut msg = Message::new(
            Role::Assistant,
            vec![
                Block::Thinking(parlance_format::Thinking {
                    thinking: "Let me think about it.".into(),
                    signature: Some("sig".into()),
                    provider: Some("anthropic".into()),
                    ..Default::default()
                }),
                Block::text("Checking two orders now."),
                Block::tool_call(
                    "c1",
                    "get_order",
                    json!({"order_id": "A-1", "z": [1, 2], "a": null}),
                ),
                Block::tool_call("c2", "get_order", json!({})),
            ],
        );
        msg.finish_reason = Some(parlance_format::FinishReason::ToolCalls);
        let mut asm = Assembler::new();
        for e in events_for(&msg) {
            asm.push(&e);
        }
        assert_eq!(asm.finish(), msg.content);
    }
}
