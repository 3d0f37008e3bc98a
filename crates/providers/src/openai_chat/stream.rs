//! Chat Completions SSE chunks → canonical stream events.

use parlance_format::{Block, Message, Role, ToolCall};
use parlance_model::{ModelError, StreamEvent, set_arguments};
use serde_json::Value;

use super::PROVIDER;
use super::decode_response::{finish_reason, reasoning_text, usage};
use crate::openai_common::from_error;
use crate::transport::StreamDecoder;
use crate::wire::malformed;

/// Assembles one streamed Chat Completions answer.
#[derive(Debug, Default)]
pub struct ChatStream {
    id: Option<String>,
    model: Option<String>,
    blocks: Vec<Block>,
    arguments: Vec<String>,
    text_at: Option<usize>,
    thinking_at: Option<usize>,
    /// OpenAI's tool call `index` → position in `blocks`.
    calls_at: Vec<(u64, usize)>,
    finish: Option<String>,
    usage: Option<Value>,
    done: bool,
}

impl ChatStream {
    /// A fresh decoder.
    pub fn new() -> Self {
        ChatStream::default()
    }

    fn push_block(&mut self, block: Block) -> usize {
        self.blocks.push(block);
        self.arguments.push(String::new());
        self.blocks.len() - 1
    }

    /// One `data:` payload.
    pub fn chunk(&mut self, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        if data.trim() == "[DONE]" {
            return Ok(self.finish().into_iter().collect());
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| malformed(format!("stream chunk is not JSON: {e}")))?;
        if let Some(e) = v.get("error") {
            let message = e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error in stream")
                .to_string();
            let code = e.get("code").and_then(Value::as_str).unwrap_or("");
            let ty = e.get("type").and_then(Value::as_str).unwrap_or("");
            return Err(from_error(0, code, ty, message, None));
        }
        if self.id.is_none() {
            self.id = v.get("id").and_then(Value::as_str).map(str::to_string);
        }
        if self.model.is_none() {
            self.model = v.get("model").and_then(Value::as_str).map(str::to_string);
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let mut out = Vec::new();
        // Azure may send chunks with no choices (content-filter results).
        let Some(choice) = v
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(out);
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(r) = reasoning_text(delta) {
                let i = match self.thinking_at {
                    Some(i) => i,
                    None => {
                        let i = self.push_block(Block::thinking(""));
                        self.thinking_at = Some(i);
                        out.push(StreamEvent::BlockStart {
                            index: i,
                            block: Block::thinking(""),
                        });
                        i
                    }
                };
                if let Block::Thinking(t) = &mut self.blocks[i] {
                    t.thinking.push_str(r);
                }
                out.push(StreamEvent::ThinkingDelta {
                    index: i,
                    text: r.to_string(),
                });
            }
            for key in ["content", "refusal"] {
                if let Some(text) = delta
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    let i = match self.text_at {
                        Some(i) => i,
                        None => {
                            let i = self.push_block(Block::text(""));
                            self.text_at = Some(i);
                            out.push(StreamEvent::BlockStart {
                                index: i,
                                block: Block::text(""),
                            });
                            i
                        }
                    };
                    if let Block::Text(t) = &mut self.blocks[i] {
                        t.text.push_str(text);
                    }
                    out.push(StreamEvent::TextDelta {
                        index: i,
                        text: text.to_string(),
                    });
                }
            }
            for tc in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let idx = tc.get("index").and_then(Value::as_u64).unwrap_or(0);
                let at = match self.calls_at.iter().find(|(k, _)| *k == idx) {
                    Some((_, at)) => *at,
                    None => {
                        // The first fragment of a call names it: a call
                        // without its id or name cannot be answered.
                        let f = tc.get("function");
                        let what = format!("choices[0].delta.tool_calls[index {idx}]");
                        let id = tc
                            .get("id")
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .ok_or_else(|| {
                                malformed(format!("{what}.id: the call's first fragment has no id"))
                            })?;
                        let name = f
                            .and_then(|f| f.get("name"))
                            .and_then(Value::as_str)
                            .filter(|s| !s.is_empty())
                            .ok_or_else(|| {
                                malformed(format!(
                                    "{what}.function.name: the call's first fragment has no name"
                                ))
                            })?;
                        let shell = Block::ToolCall {
                            tool_call: ToolCall::new(id, name, Value::Null),
                        };
                        let at = self.push_block(shell.clone());
                        self.calls_at.push((idx, at));
                        out.push(StreamEvent::BlockStart {
                            index: at,
                            block: shell,
                        });
                        at
                    }
                };
                if let Some(frag) = tc
                    .pointer("/function/arguments")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    self.arguments[at].push_str(frag);
                    out.push(StreamEvent::ToolArgumentsDelta {
                        index: at,
                        json: frag.to_string(),
                    });
                }
            }
        }
        if let Some(f) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(f.to_string());
        }
        Ok(out)
    }

    /// The assembled message, once (None after the first time).
    pub fn finish(&mut self) -> Option<StreamEvent> {
        if self.done {
            return None;
        }
        self.done = true;
        let mut blocks = std::mem::take(&mut self.blocks);
        for (b, args) in blocks.iter_mut().zip(&self.arguments) {
            if let Block::ToolCall { tool_call } = b {
                set_arguments(tool_call, args);
            }
        }
        let mut msg = Message::new(Role::Assistant, blocks);
        msg.id = self.id.clone();
        msg.usage = self.usage.as_ref().map(usage);
        msg.finish_reason = self.finish.as_deref().map(finish_reason);
        msg.finish_reason_raw = self.finish.clone();
        msg.provider = Some(PROVIDER.into());
        msg.model = self.model.clone();
        Some(StreamEvent::Done(msg))
    }
}

impl StreamDecoder for ChatStream {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        self.chunk(data)
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        if self.finish.is_none() {
            return Err(malformed(
                "the stream ended before the answer was finished (truncated)",
            ));
        }
        Ok(self.finish().into_iter().collect())
    }
}
