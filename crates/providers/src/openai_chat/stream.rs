//! Chat Completions SSE chunks → canonical stream events.

use parlance_format::{Block, Message, Role, ToolCall};
use parlance_model::{ModelError, StreamEvent, set_arguments};
use serde_json::Value;

use super::decode_response::{finish_reason, reasoning_text, thinking_block, usage_in};
use super::dialect::{self, Dialect};
use crate::openai_common::from_error;
use crate::think_tags::{Piece, Splitter};
use crate::transport::StreamDecoder;
use crate::wire::malformed;

/// Assembles one streamed Chat Completions answer.
#[derive(Debug)]
pub struct ChatStream {
    dialect: &'static Dialect,
    /// OpenRouter's `reasoning_details` items, their fragments joined.
    details: Vec<Value>,
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
    /// Reasoning written into the text (`<think>…</think>`).
    tags: Splitter,
}

impl Default for ChatStream {
    fn default() -> Self {
        ChatStream::in_dialect(&dialect::OPENAI)
    }
}

impl ChatStream {
    /// A fresh decoder (OpenAI's own API).
    pub fn new() -> Self {
        ChatStream::default()
    }

    /// A fresh decoder for a host speaking `dialect`.
    pub fn in_dialect(dialect: &'static Dialect) -> Self {
        ChatStream {
            dialect,
            details: Vec::new(),
            id: None,
            model: None,
            blocks: Vec::new(),
            arguments: Vec::new(),
            text_at: None,
            thinking_at: None,
            calls_at: Vec::new(),
            finish: None,
            usage: None,
            done: false,
            tags: Splitter::new(),
        }
    }

    /// Joins a `reasoning_details` fragment to the item of the same
    /// `index` (its text, summary or data appended, other fields set).
    fn add_detail(&mut self, frag: &Value) {
        let Some(f) = frag.as_object() else { return };
        let index = f.get("index").and_then(Value::as_u64);
        let same = self.details.iter_mut().find(|d| {
            index.is_some()
                && d.get("index").and_then(Value::as_u64) == index
                && d.get("type") == f.get("type")
        });
        let Some(Value::Object(item)) = same else {
            self.details.push(frag.clone());
            return;
        };
        for (k, v) in f {
            match (item.get_mut(k), v) {
                (Some(Value::String(a)), Value::String(b))
                    if matches!(k.as_str(), "text" | "summary" | "data") =>
                {
                    a.push_str(b)
                }
                (_, Value::Null) => {}
                _ => {
                    item.insert(k.clone(), v.clone());
                }
            }
        }
    }

    /// Starts the thinking block if there is none yet.
    fn thinking_index(&mut self, out: &mut Vec<StreamEvent>) -> usize {
        if let Some(i) = self.thinking_at {
            return i;
        }
        let shell = thinking_block(self.dialect, "", &[]);
        let i = self.push_block(shell.clone());
        self.thinking_at = Some(i);
        out.push(StreamEvent::BlockStart {
            index: i,
            block: shell,
        });
        i
    }

    /// Thinking or text of the answer, to its block.
    fn piece(&mut self, piece: Piece, out: &mut Vec<StreamEvent>) {
        match piece {
            Piece::Thinking(text) => {
                let i = self.thinking_index(out);
                if let Block::Thinking(t) = &mut self.blocks[i] {
                    t.thinking.push_str(&text);
                }
                out.push(StreamEvent::ThinkingDelta { index: i, text });
            }
            Piece::Text(text) => {
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
                    t.text.push_str(&text);
                }
                out.push(StreamEvent::TextDelta { index: i, text });
            }
        }
    }

    fn push_block(&mut self, block: Block) -> usize {
        self.blocks.push(block);
        self.arguments.push(String::new());
        self.blocks.len() - 1
    }

    /// One `data:` payload.
    pub fn chunk(&mut self, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        if data.trim() == "[DONE]" {
            return Ok(self.finish());
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
        // Azure's first chunk (prompt filter results) has `"id": ""` and
        // `"model": ""`: the real ones come later.
        let named = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        if self.id.is_none() {
            self.id = named("id");
        }
        if self.model.is_none() {
            self.model = named("model");
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        } else if let Some(u) = v.pointer("/x_groq/usage").filter(|u| u.is_object())
            && self.usage.is_none()
        {
            // Groq's compound models count only there.
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
            let details = delta.get("reasoning_details").and_then(Value::as_array);
            for d in details.into_iter().flatten() {
                self.thinking_index(&mut out);
                self.add_detail(d);
            }
            // The readable text: the `reasoning` field, or (OpenRouter
            // without it) the details' text.
            let detail_text: String = details
                .into_iter()
                .flatten()
                .filter_map(|d| d.get("text").or(d.get("summary")).and_then(Value::as_str))
                .collect();
            let text =
                reasoning_text(delta).or(Some(detail_text.as_str()).filter(|s| !s.is_empty()));
            if let Some(r) = text {
                let i = self.thinking_index(&mut out);
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
                    let pieces = if key == "content" {
                        self.tags.push(text)
                    } else {
                        vec![Piece::Text(text.to_string())]
                    };
                    for p in pieces {
                        self.piece(p, &mut out);
                    }
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

    /// The last pieces of text held back, then the assembled message,
    /// once (nothing after the first time).
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        if self.done {
            return Vec::new();
        }
        self.done = true;
        let mut out = Vec::new();
        for p in self.tags.finish() {
            self.piece(p, &mut out);
        }
        let mut blocks = std::mem::take(&mut self.blocks);
        if let Some(Block::Thinking(t)) = self.thinking_at.map(|i| &mut blocks[i])
            && !self.details.is_empty()
        {
            t.encrypted_content = Some(Value::Array(std::mem::take(&mut self.details)).to_string());
            // Opaque data names its maker (see `thinking_block`).
            t.provider = Some(self.dialect.provider.into());
        }
        for (b, args) in blocks.iter_mut().zip(&self.arguments) {
            if let Block::ToolCall { tool_call } = b {
                set_arguments(tool_call, args);
            }
        }
        let mut msg = Message::new(Role::Assistant, blocks);
        msg.id = self.id.clone();
        msg.usage = self.usage.as_ref().map(|u| usage_in(self.dialect, u));
        msg.finish_reason = self.finish.as_deref().map(finish_reason);
        msg.finish_reason_raw = self.finish.clone();
        msg.provider = Some(self.dialect.provider.into());
        msg.model = self.model.clone();
        out.push(StreamEvent::Done(msg));
        out
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
        Ok(self.finish())
    }
}
