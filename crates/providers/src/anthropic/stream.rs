//! Messages API SSE events → canonical stream events.

use parlance_format::{Block, Message, Role};
use parlance_model::{ModelError, StreamEvent, set_arguments};
use serde_json::Value;

use super::PROVIDER;
use super::decode_response::{block, finish_reason, stop_details, usage};
use super::errors::from_error;
use crate::transport::StreamDecoder;
use crate::wire::malformed;

/// Assembles one streamed Messages API answer.
#[derive(Debug, Default)]
pub struct AnthropicStream {
    id: Option<String>,
    model: Option<String>,
    /// Anthropic's block index → (canonical block, argument text).
    blocks: Vec<(Block, String)>,
    usage: Option<Value>,
    stop_reason: Option<String>,
    stop_details: Option<serde_json::Map<String, Value>>,
    done: bool,
}

impl AnthropicStream {
    /// A fresh decoder.
    pub fn new() -> Self {
        AnthropicStream::default()
    }

    /// One event's `data:` JSON (its `type` names the event).
    pub fn data(&mut self, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        let v: Value = serde_json::from_str(data.trim())
            .map_err(|e| malformed(format!("stream event is not JSON: {e}")))?;
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        let index = v.get("index").and_then(Value::as_u64).map(|i| i as usize);
        let mut out = Vec::new();
        match ty {
            "message_start" => {
                let m = &v["message"];
                self.id = m.get("id").and_then(Value::as_str).map(str::to_string);
                self.model = m.get("model").and_then(Value::as_str).map(str::to_string);
                if let Some(u) = m.get("usage").filter(|u| u.is_object()) {
                    self.usage = Some(u.clone());
                }
            }
            "content_block_start" => {
                let i = index.ok_or_else(|| malformed("content_block_start without index"))?;
                let b =
                    block(&v["content_block"], "content_block")?.unwrap_or_else(|| Block::text(""));
                // The shell: text empty, tool input filled from the deltas.
                let shell = match b {
                    Block::ToolCall { mut tool_call } => {
                        tool_call.arguments = Value::Null;
                        Block::ToolCall { tool_call }
                    }
                    other => other,
                };
                // Blocks arrive in order, each started once: an index is
                // never trusted to size anything (one event with a huge
                // index must not allocate without bound).
                if i != self.blocks.len() {
                    return Err(malformed(format!(
                        "content_block_start: index {i} out of order (the next block is {})",
                        self.blocks.len()
                    )));
                }
                self.blocks.push((shell.clone(), String::new()));
                out.push(StreamEvent::BlockStart {
                    index: i,
                    block: shell,
                });
            }
            "content_block_delta" => {
                let i = index.ok_or_else(|| malformed("content_block_delta without index"))?;
                let (b, args) = self.blocks.get_mut(i).ok_or_else(|| {
                    malformed(format!("content_block_delta for unknown block {i}"))
                })?;
                let d = &v["delta"];
                match (d.get("type").and_then(Value::as_str), b) {
                    (Some("text_delta"), Block::Text(t)) => {
                        let s = d["text"].as_str().unwrap_or_default();
                        t.text.push_str(s);
                        out.push(StreamEvent::TextDelta {
                            index: i,
                            text: s.to_string(),
                        });
                    }
                    (Some("thinking_delta"), Block::Thinking(t)) => {
                        let s = d["thinking"].as_str().unwrap_or_default();
                        t.thinking.push_str(s);
                        out.push(StreamEvent::ThinkingDelta {
                            index: i,
                            text: s.to_string(),
                        });
                    }
                    (Some("signature_delta"), Block::Thinking(t)) => {
                        let s = d["signature"].as_str().unwrap_or_default();
                        t.signature.get_or_insert_with(String::new).push_str(s);
                    }
                    (Some("input_json_delta"), Block::ToolCall { .. }) => {
                        let s = d["partial_json"].as_str().unwrap_or_default();
                        args.push_str(s);
                        if !s.is_empty() {
                            out.push(StreamEvent::ToolArgumentsDelta {
                                index: i,
                                json: s.to_string(),
                            });
                        }
                    }
                    // Citations and deltas for blocks we keep whole.
                    _ => {}
                }
            }
            "content_block_stop" => {}
            "message_delta" => {
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_string());
                }
                if let Some(d) =
                    stop_details(v.pointer("/delta/stop_details"), "delta.stop_details")?
                {
                    self.stop_details = Some(d);
                }
                // Cumulative: the last value of each field wins.
                if let Some(Value::Object(u)) = v.get("usage") {
                    let merged = self
                        .usage
                        .get_or_insert_with(|| Value::Object(Default::default()));
                    for (k, val) in u {
                        if !val.is_null() {
                            merged[k] = val.clone();
                        }
                    }
                }
            }
            "message_stop" => out.extend(self.finish()),
            "error" => {
                let e = &v["error"];
                let message = e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("error in stream")
                    .to_string();
                return Err(from_error(
                    0,
                    e.get("type").and_then(Value::as_str).unwrap_or(""),
                    message,
                    None,
                ));
            }
            // ping, and event types added later.
            _ => {}
        }
        Ok(out)
    }

    /// The assembled message, once.
    pub fn finish(&mut self) -> Option<StreamEvent> {
        if self.done {
            return None;
        }
        self.done = true;
        let blocks = std::mem::take(&mut self.blocks)
            .into_iter()
            .map(|(mut b, args)| {
                if let Block::ToolCall { tool_call } = &mut b {
                    set_arguments(tool_call, &args);
                }
                b
            })
            .collect();
        let mut msg = Message::new(Role::Assistant, blocks);
        msg.id = self.id.clone();
        msg.usage = self.usage.as_ref().map(usage);
        msg.finish_reason = self.stop_reason.as_deref().map(finish_reason);
        msg.finish_reason_raw = self.stop_reason.clone();
        msg.finish_details = self.stop_details.clone();
        msg.provider = Some(PROVIDER.into());
        msg.model = self.model.clone();
        Some(StreamEvent::Done(msg))
    }
}

impl StreamDecoder for AnthropicStream {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        self.data(data)
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        Err(malformed(
            "the stream ended before message_stop (truncated)",
        ))
    }
}
