//! Responses API stream events → canonical stream events. The final
//! message is built from `response.completed` (the full response), not
//! from the deltas, as OpenAI recommends; deltas feed the live events.

use parlance_format::{Block, ToolCall};
use parlance_model::{ModelError, StreamEvent};
use serde_json::Value;

use super::decode_response::decode_response;
use super::errors::error_object;
use crate::transport::StreamDecoder;
use crate::wire::malformed;

/// Decodes one Responses stream.
#[derive(Debug, Default)]
pub struct ResponsesStream {
    /// (output_index, part index) → live block index.
    live: Vec<((u64, u64), usize)>,
    next: usize,
    done: bool,
}

impl ResponsesStream {
    /// A fresh decoder.
    pub fn new() -> Self {
        ResponsesStream::default()
    }

    fn slot(
        &mut self,
        key: (u64, u64),
        shell: impl FnOnce() -> Block,
        out: &mut Vec<StreamEvent>,
    ) -> usize {
        if let Some((_, i)) = self.live.iter().find(|(k, _)| *k == key) {
            return *i;
        }
        let i = self.next;
        self.next += 1;
        self.live.push((key, i));
        out.push(StreamEvent::BlockStart {
            index: i,
            block: shell(),
        });
        i
    }

    /// One event's `data:` JSON.
    pub fn data(&mut self, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        let v: Value = serde_json::from_str(data)
            .map_err(|e| malformed(format!("stream event is not JSON: {e}")))?;
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        let oi = v.get("output_index").and_then(Value::as_u64).unwrap_or(0);
        let mut out = Vec::new();
        match ty {
            "response.output_item.added"
                if v.pointer("/item/type").and_then(Value::as_str) == Some("function_call") =>
            {
                let item = &v["item"];
                let field = |k: &str| {
                    item.get(k)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                let (id, name) = (field("call_id"), field("name"));
                self.slot(
                    (oi, 0),
                    || Block::ToolCall {
                        tool_call: ToolCall::new(id, name, Value::Null),
                    },
                    &mut out,
                );
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let ci = v.get("content_index").and_then(Value::as_u64).unwrap_or(0);
                let i = self.slot((oi, ci), || Block::text(""), &mut out);
                let text = v
                    .get("delta")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                out.push(StreamEvent::TextDelta { index: i, text });
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                let si = v
                    .get("summary_index")
                    .or_else(|| v.get("content_index"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                let i = self.slot((oi, si), || Block::thinking(""), &mut out);
                let text = v
                    .get("delta")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                out.push(StreamEvent::ThinkingDelta { index: i, text });
            }
            "response.function_call_arguments.delta" => {
                let i = self.slot(
                    (oi, 0),
                    || Block::ToolCall {
                        tool_call: ToolCall::new("", "", Value::Null),
                    },
                    &mut out,
                );
                let json = v
                    .get("delta")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                out.push(StreamEvent::ToolArgumentsDelta { index: i, json });
            }
            "response.completed" | "response.incomplete" => {
                self.done = true;
                out.push(StreamEvent::Done(decode_response(&v["response"])?));
            }
            "response.failed" => {
                self.done = true;
                return Err(error_object(
                    v.pointer("/response/error").unwrap_or(&Value::Null),
                ));
            }
            // Nested (as recorded) or flat (as specified).
            "error" => return Err(error_object(&v)),
            _ => {}
        }
        Ok(out)
    }
}

impl StreamDecoder for ResponsesStream {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        self.data(data)
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        Err(malformed(
            "the stream ended before response.completed (truncated)",
        ))
    }
}
