//! Ollama's NDJSON stream → canonical stream events. Each line is an
//! answer object with `done: false` and a piece of `message` (content,
//! thinking, or whole tool calls); the last has `done: true`, the
//! `done_reason` and the counts. A line `{"error": "…"}` is a failure
//! after the stream started.

use parlance_format::{Block, Message, Role};
use parlance_model::{ModelError, StreamEvent};
use serde_json::Value;

use super::PROVIDER;
use super::decode_response::{done_finish, message_blocks, usage};
use crate::transport::StreamDecoder;
use crate::wire::{malformed, opt_str};

/// Assembles one streamed Ollama answer.
#[derive(Debug, Default)]
pub struct OllamaStream {
    blocks: Vec<Block>,
    text_at: Option<usize>,
    thinking_at: Option<usize>,
    calls: usize,
    model: Option<String>,
    stamp: Option<String>,
    done: bool,
    /// Reasoning written into the text (`<think>…</think>`: a thinking
    /// model asked without `think`).
    tags: crate::think_tags::Splitter,
}

impl OllamaStream {
    /// A fresh decoder.
    pub fn new() -> Self {
        OllamaStream::default()
    }

    fn line(&mut self, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| malformed(format!("stream line is not JSON: {e}")))?;
        if v.get("error").is_some() {
            return Err(super::errors::classify(0, data.as_bytes(), None));
        }
        let done = match v.get("done") {
            Some(Value::Bool(d)) => *d,
            _ => {
                return Err(malformed(
                    "done: missing (each line of an Ollama chat stream has it)",
                ));
            }
        };
        if self.model.is_none() {
            self.model = opt_str(&v, "model");
        }
        if self.stamp.is_none() {
            self.stamp = opt_str(&v, "created_at");
        }
        let mut out = Vec::new();
        if let Some(m) = v.get("message").filter(|m| !m.is_null()) {
            let stamp = self.stamp.clone().unwrap_or_default();
            for b in message_blocks(m, "message", self.calls, &stamp, true)? {
                self.piece(b, &mut out);
            }
        }
        if done {
            self.done = true;
            for p in self.tags.finish() {
                self.tagged(p, &mut out);
            }
            let raw = opt_str(&v, "done_reason");
            let has_calls = self.calls > 0;
            let mut msg = Message::new(Role::Assistant, std::mem::take(&mut self.blocks));
            msg.usage = usage(&v);
            msg.finish_reason = Some(done_finish(raw.as_deref(), has_calls));
            msg.finish_reason_raw = raw;
            msg.provider = Some(PROVIDER.into());
            msg.model = self.model.clone();
            out.push(StreamEvent::Done(msg));
        }
        Ok(out)
    }

    /// Appends a piece: text and thinking grow their block; a call is a
    /// block of its own, sent whole.
    fn piece(&mut self, b: Block, out: &mut Vec<StreamEvent>) {
        match b {
            Block::Text(t) => {
                for p in self.tags.push(&t.text) {
                    self.tagged(p, out);
                }
            }
            other => self.whole(other, out),
        }
    }

    /// Text told apart from tagged thinking.
    fn tagged(&mut self, p: crate::think_tags::Piece, out: &mut Vec<StreamEvent>) {
        use crate::think_tags::Piece;
        let block = match p {
            Piece::Text(t) => Block::text(t),
            Piece::Thinking(t) => Block::Thinking(parlance_format::Thinking {
                thinking: t,
                provider: Some(PROVIDER.into()),
                ..Default::default()
            }),
        };
        self.whole(block, out);
    }

    fn whole(&mut self, b: Block, out: &mut Vec<StreamEvent>) {
        match b {
            Block::Text(t) => {
                let i = *self.text_at.get_or_insert_with(|| {
                    self.blocks.push(Block::text(""));
                    out.push(StreamEvent::BlockStart {
                        index: self.blocks.len() - 1,
                        block: Block::text(""),
                    });
                    self.blocks.len() - 1
                });
                if let Block::Text(x) = &mut self.blocks[i] {
                    x.text.push_str(&t.text);
                }
                out.push(StreamEvent::TextDelta {
                    index: i,
                    text: t.text,
                });
            }
            Block::Thinking(t) => {
                let i = *self.thinking_at.get_or_insert_with(|| {
                    let shell = Block::Thinking(parlance_format::Thinking {
                        provider: Some(PROVIDER.into()),
                        ..Default::default()
                    });
                    self.blocks.push(shell.clone());
                    out.push(StreamEvent::BlockStart {
                        index: self.blocks.len() - 1,
                        block: shell,
                    });
                    self.blocks.len() - 1
                });
                if let Block::Thinking(x) = &mut self.blocks[i] {
                    x.thinking.push_str(&t.thinking);
                }
                out.push(StreamEvent::ThinkingDelta {
                    index: i,
                    text: t.thinking,
                });
            }
            Block::ToolCall { tool_call } => {
                self.calls += 1;
                let json = tool_call.arguments.to_string();
                let mut shell = tool_call.clone();
                shell.arguments = Value::Null;
                let index = self.blocks.len();
                out.push(StreamEvent::BlockStart {
                    index,
                    block: Block::ToolCall { tool_call: shell },
                });
                out.push(StreamEvent::ToolArgumentsDelta { index, json });
                self.blocks.push(Block::ToolCall { tool_call });
            }
            _ => {}
        }
    }
}

impl StreamDecoder for OllamaStream {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        self.line(data)
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        Err(malformed(
            "the stream ended before its final object (done: true): truncated",
        ))
    }
}
