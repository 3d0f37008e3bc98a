//! Gemini `streamGenerateContent?alt=sse` chunks → canonical stream events.
//!
//! Text arrives as deltas and is joined into one block per part kind; a
//! thought signature that arrives on a trailing empty part is attached to
//! the block it ends, so a streamed answer equals the non-streamed one.
//! Function calls arrive whole, or (Vertex) as `partialArgs` fragments
//! closed by an empty `functionCall`.

use parlance_format::{Block, Message, Role, ToolCall};
use parlance_model::{ModelError, StreamEvent};
use serde_json::{Map, Value};

use super::PROVIDER;
use super::decode_response::{check_shape, finish_reason, part_block, usage};
use super::errors::error_object;
use crate::transport::StreamDecoder;
use crate::wire::malformed;

/// Decodes one Gemini stream.
#[derive(Debug, Default)]
pub struct GeminiStream {
    response_id: Option<String>,
    model: Option<String>,
    blocks: Vec<Block>,
    calls: usize,
    /// The block of a call whose arguments are still streaming.
    partial: Option<usize>,
    /// JSON path of the last string fragment that said `willContinue`.
    continuing: Option<String>,
    finish: Option<String>,
    usage: Option<Value>,
    done: bool,
}

impl GeminiStream {
    /// A fresh decoder.
    pub fn new() -> Self {
        GeminiStream::default()
    }

    fn start(&mut self, block: Block, out: &mut Vec<StreamEvent>) -> usize {
        let i = self.blocks.len();
        let shell = match &block {
            Block::Text(t) => Block::Text(parlance_format::Text {
                text: String::new(),
                ..t.clone()
            }),
            Block::Thinking(t) => Block::Thinking(parlance_format::Thinking {
                thinking: String::new(),
                ..t.clone()
            }),
            Block::ToolCall { tool_call } => Block::ToolCall {
                tool_call: ToolCall {
                    arguments: Value::Null,
                    ..tool_call.clone()
                },
            },
            other => other.clone(),
        };
        out.push(StreamEvent::BlockStart {
            index: i,
            block: shell,
        });
        match &block {
            Block::Text(t) if !t.text.is_empty() => out.push(StreamEvent::TextDelta {
                index: i,
                text: t.text.clone(),
            }),
            Block::Thinking(t) if !t.thinking.is_empty() => out.push(StreamEvent::ThinkingDelta {
                index: i,
                text: t.thinking.clone(),
            }),
            Block::ToolCall { tool_call } => out.push(StreamEvent::ToolArgumentsDelta {
                index: i,
                json: tool_call.arguments.to_string(),
            }),
            _ => {}
        }
        self.blocks.push(block);
        i
    }

    /// Appends text to the last block when it is the same kind and not yet
    /// closed by a signature; returns whether it did.
    fn extend(
        &mut self,
        thought: bool,
        text: &str,
        sig: Option<&str>,
        out: &mut Vec<StreamEvent>,
    ) -> bool {
        let i = self.blocks.len().wrapping_sub(1);
        match self.blocks.last_mut() {
            Some(Block::Thinking(t)) if thought && t.signature.is_none() => {
                t.thinking.push_str(text);
                t.signature = sig.map(str::to_string);
                if !text.is_empty() {
                    out.push(StreamEvent::ThinkingDelta {
                        index: i,
                        text: text.to_string(),
                    });
                }
                true
            }
            Some(Block::Text(t)) if !thought && t.signature.is_none() => {
                t.text.push_str(text);
                if let Some(s) = sig {
                    t.signature = Some(s.to_string());
                    t.provider = Some(PROVIDER.into());
                }
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta {
                        index: i,
                        text: text.to_string(),
                    });
                }
                true
            }
            _ => false,
        }
    }

    fn partial_args(&mut self, fc: &Value) -> Result<(), ModelError> {
        let Some(i) = self.partial else {
            return Ok(());
        };
        let Some(Block::ToolCall { tool_call }) = self.blocks.get_mut(i) else {
            return Ok(());
        };
        for pa in fc
            .get("partialArgs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(path) = pa.get("jsonPath").and_then(Value::as_str) else {
                continue;
            };
            let keys: Vec<&str> = path
                .trim_start_matches('$')
                .split('.')
                .filter(|k| !k.is_empty())
                .collect();
            // The path sizes the arguments: bounded by the format's limit.
            if keys.len() > parlance_format::MAX_VALUE_DEPTH {
                return Err(malformed(format!(
                    "partialArgs.jsonPath: deeper than {} levels",
                    parlance_format::MAX_VALUE_DEPTH
                )));
            }
            // Only scalars: a value of another kind would nest without bound.
            let (value, is_str) = match (
                pa.get("stringValue"),
                pa.get("numberValue"),
                pa.get("boolValue"),
            ) {
                (Some(s @ Value::String(_)), _, _) => (s.clone(), true),
                (None, Some(n @ Value::Number(_)), _) => (n.clone(), false),
                (None, None, Some(b @ Value::Bool(_))) => (b.clone(), false),
                (None, None, None) => (Value::Null, false),
                _ => {
                    return Err(malformed(
                        "partialArgs: stringValue, numberValue or boolValue of the wrong type",
                    ));
                }
            };
            let mut cur = &mut tool_call.arguments;
            for (k, key) in keys.iter().enumerate() {
                if !cur.is_object() {
                    *cur = Value::Object(Map::new());
                }
                let obj = cur.as_object_mut().expect("object");
                if k + 1 == keys.len() {
                    let append = is_str && self.continuing.as_deref() == Some(path);
                    match (obj.get_mut(*key), append) {
                        (Some(Value::String(prev)), true) => {
                            prev.push_str(value.as_str().unwrap_or(""))
                        }
                        _ => {
                            obj.insert(key.to_string(), value.clone());
                        }
                    }
                    break;
                }
                cur = obj
                    .entry(key.to_string())
                    .or_insert_with(|| Value::Object(Map::new()));
            }
            let more = pa.get("willContinue").and_then(Value::as_bool) == Some(true);
            self.continuing = (is_str && more).then(|| path.to_string());
        }
        Ok(())
    }

    /// One `data:` chunk.
    pub fn chunk(&mut self, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        let v: Value = serde_json::from_str(data)
            .map_err(|e| malformed(format!("stream chunk is not JSON: {e}")))?;
        if let Some(e) = v.get("error") {
            return Err(error_object(e, None));
        }
        check_shape(&v, "chunk.")?;
        if self.response_id.is_none() {
            self.response_id = v
                .get("responseId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        if let Some(m) = v.get("modelVersion").and_then(Value::as_str) {
            self.model = Some(m.to_string());
        }
        if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let mut out = Vec::new();
        let Some(c) = v
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            if let Some(r) = v
                .pointer("/promptFeedback/blockReason")
                .and_then(Value::as_str)
            {
                self.finish = Some(r.to_string());
            }
            return Ok(out);
        };
        for (j, p) in c
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let sig = p.get("thoughtSignature").and_then(Value::as_str);
            if let Some(fc) = p.get("functionCall") {
                if self.partial.is_some() {
                    if fc.get("partialArgs").is_some() {
                        self.partial_args(fc)?;
                        continue;
                    }
                    if fc.get("name").is_none() {
                        // The empty functionCall closes the streamed call.
                        let i = self.partial.take().expect("checked");
                        if let Block::ToolCall { tool_call } = &self.blocks[i] {
                            out.push(StreamEvent::ToolArgumentsDelta {
                                index: i,
                                json: tool_call.arguments.to_string(),
                            });
                        }
                        continue;
                    }
                }
                let streaming = fc.get("willContinue").and_then(Value::as_bool) == Some(true);
                let block = part_block(
                    p,
                    &format!("parts[{j}]"),
                    self.response_id.as_deref(),
                    self.calls,
                )?;
                self.calls += 1;
                if let Some(b) = block {
                    if streaming {
                        let i = self.blocks.len();
                        let mut shell = b;
                        if let Block::ToolCall { tool_call } = &mut shell {
                            tool_call.arguments = Value::Object(Map::new());
                        }
                        out.push(StreamEvent::BlockStart {
                            index: i,
                            block: shell.clone(),
                        });
                        self.blocks.push(shell);
                        self.partial = Some(i);
                        self.partial_args(fc)?;
                    } else {
                        self.start(b, &mut out);
                    }
                }
                continue;
            }
            if let Some(text) = p.get("text").and_then(Value::as_str) {
                let thought = p.get("thought").and_then(Value::as_bool) == Some(true);
                if self.extend(thought, text, sig, &mut out) {
                    continue;
                }
            }
            if let Some(b) = part_block(
                p,
                &format!("parts[{j}]"),
                self.response_id.as_deref(),
                self.calls,
            )? {
                self.start(b, &mut out);
            }
        }
        if let Some(r) = c.get("finishReason").and_then(Value::as_str) {
            self.finish = Some(r.to_string());
        }
        Ok(out)
    }

    /// The assembled message, once.
    pub fn finish(&mut self) -> Option<StreamEvent> {
        if self.done {
            return None;
        }
        self.done = true;
        let blocks = std::mem::take(&mut self.blocks);
        let has_calls = blocks.iter().any(|b| matches!(b, Block::ToolCall { .. }));
        let mut msg = Message::new(Role::Assistant, blocks);
        msg.id = self.response_id.clone();
        msg.usage = self.usage.as_ref().map(usage);
        msg.finish_reason = self.finish.as_deref().map(|r| finish_reason(r, has_calls));
        msg.finish_reason_raw = self.finish.clone();
        msg.provider = Some(PROVIDER.into());
        msg.model = self.model.clone();
        Some(StreamEvent::Done(msg))
    }
}

impl StreamDecoder for GeminiStream {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        self.chunk(data)
    }

    /// Gemini streams have no closing event: the end of the body is the end.
    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        if self.finish.is_none() {
            return Err(malformed(
                "the stream ended before a finishReason (truncated)",
            ));
        }
        Ok(self.finish().into_iter().collect())
    }
}
