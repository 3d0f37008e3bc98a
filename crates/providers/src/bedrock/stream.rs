//! ConverseStream events → canonical stream events.
//!
//! The transport cuts the AWS event stream into frames and hands each one
//! over as `(":event-type", payload JSON)`; an exception frame arrives with
//! its `:exception-type` as the name (the stream union's member,
//! `modelStreamErrorException`...). Recorded streams (decoded by an SDK)
//! are one `{"eventName": payload}` object per event with no name; both
//! are read.
//!
//! Events: `messageStart` → (`contentBlockStart` for tool calls)
//! `contentBlockDelta`* `contentBlockStop` ... → `messageStop` (the stop
//! reason) → `metadata` (usage). Text and reasoning blocks have no start
//! event: their first delta opens them.

use parlance_format::{Block, Message, Role, Thinking, ToolCall};
use parlance_model::{ModelError, StreamEvent, set_arguments};
use serde_json::Value;

use super::PROVIDER;
use super::decode_response::{finish_reason, union_member, usage};
use super::errors::stream_exception;
use crate::transport::StreamDecoder;
use crate::wire::{malformed, str_field};

/// The union members of `ConverseStreamOutput` that are exceptions.
const EXCEPTIONS: [&str; 5] = [
    "internalServerException",
    "modelStreamErrorException",
    "validationException",
    "throttlingException",
    "serviceUnavailableException",
];

/// Assembles one streamed Converse answer.
#[derive(Debug, Default)]
pub struct BedrockStream {
    /// Bedrock's block index → (canonical block, argument text).
    blocks: Vec<(Block, String)>,
    stop_reason: Option<String>,
    usage: Option<Value>,
    done: bool,
}

impl BedrockStream {
    /// A fresh decoder.
    pub fn new() -> Self {
        BedrockStream::default()
    }

    fn open(
        &mut self,
        i: usize,
        block: Block,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        // Blocks arrive in order, each opened once: an index is never
        // trusted to size anything.
        if i != self.blocks.len() {
            return Err(malformed(format!(
                "contentBlockIndex {i} out of order (the next block is {})",
                self.blocks.len()
            )));
        }
        self.blocks.push((block.clone(), String::new()));
        out.push(StreamEvent::BlockStart { index: i, block });
        Ok(())
    }

    /// One event by name with its payload.
    pub fn named(&mut self, name: &str, v: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        let mut out = Vec::new();
        let index = v
            .get("contentBlockIndex")
            .and_then(Value::as_u64)
            .map(|i| usize::try_from(i).unwrap_or(usize::MAX));
        match name {
            "messageStart" => {}
            "contentBlockStart" => {
                let i = index
                    .ok_or_else(|| malformed("contentBlockStart without contentBlockIndex"))?;
                let (k, x) = union_member(&v["start"], "contentBlockStart.start")?;
                match k {
                    "toolUse" => {
                        let w = "contentBlockStart.start.toolUse";
                        let mut call = ToolCall::new(
                            str_field(x, "toolUseId", w)?,
                            str_field(x, "name", w)?,
                            Value::Null,
                        );
                        call.arguments = Value::Null;
                        self.open(i, Block::ToolCall { tool_call: call }, &mut out)?;
                    }
                    other => {
                        return Err(malformed(format!(
                            "contentBlockStart.start.{other}: Parlance cannot keep {other:?} blocks from Bedrock yet"
                        )));
                    }
                }
            }
            "contentBlockDelta" => {
                let i = index
                    .ok_or_else(|| malformed("contentBlockDelta without contentBlockIndex"))?;
                let (k, d) = union_member(&v["delta"], "contentBlockDelta.delta")?;
                if i == self.blocks.len() {
                    // The first delta of a text or reasoning block opens it.
                    let shell = match k {
                        "text" => Block::text(""),
                        "reasoningContent" => Block::Thinking(Thinking {
                            provider: Some(PROVIDER.into()),
                            ..Thinking::default()
                        }),
                        other => {
                            return Err(malformed(format!(
                                "contentBlockDelta.delta.{other}: a delta for block {i}, which was never started"
                            )));
                        }
                    };
                    self.open(i, shell, &mut out)?;
                }
                let (b, args) = self
                    .blocks
                    .get_mut(i)
                    .ok_or_else(|| malformed(format!("contentBlockDelta for unknown block {i}")))?;
                match (k, b) {
                    ("text", Block::Text(t)) => {
                        let s = d.as_str().ok_or_else(|| {
                            malformed("contentBlockDelta.delta.text: expected a string")
                        })?;
                        t.text.push_str(s);
                        out.push(StreamEvent::TextDelta {
                            index: i,
                            text: s.to_string(),
                        });
                    }
                    ("toolUse", Block::ToolCall { .. }) => {
                        let s = str_field(d, "input", "contentBlockDelta.delta.toolUse")?;
                        args.push_str(s);
                        if !s.is_empty() {
                            out.push(StreamEvent::ToolArgumentsDelta {
                                index: i,
                                json: s.to_string(),
                            });
                        }
                    }
                    ("reasoningContent", Block::Thinking(t)) => {
                        let w = "contentBlockDelta.delta.reasoningContent";
                        let (rk, rx) = union_member(d, w)?;
                        let s = rx
                            .as_str()
                            .ok_or_else(|| malformed(format!("{w}.{rk}: expected a string")))?;
                        match rk {
                            "text" => {
                                t.thinking.push_str(s);
                                out.push(StreamEvent::ThinkingDelta {
                                    index: i,
                                    text: s.to_string(),
                                });
                            }
                            "signature" => t.signature.get_or_insert_with(String::new).push_str(s),
                            // Base64 of opaque bytes: whole in one delta.
                            "redactedContent" => {
                                t.redacted.get_or_insert_with(String::new).push_str(s)
                            }
                            other => {
                                return Err(malformed(format!(
                                    "{w}.{other}: unknown reasoning delta"
                                )));
                            }
                        }
                    }
                    ("citation", _) => {}
                    (other, b) => {
                        return Err(malformed(format!(
                            "contentBlockDelta.delta.{other}: does not fit block {i} ({})",
                            b.type_name()
                        )));
                    }
                }
            }
            "contentBlockStop" => {}
            "messageStop" => {
                self.stop_reason = Some(str_field(v, "stopReason", "messageStop")?.to_string());
            }
            "metadata" => {
                if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                    self.usage = Some(u.clone());
                }
                if self.stop_reason.is_some() {
                    out.extend(self.finish());
                }
            }
            ":error" => {
                return Err(stream_exception(
                    v.get("code").and_then(Value::as_str).unwrap_or("error"),
                    &v.to_string(),
                ));
            }
            e if EXCEPTIONS.contains(&e) => return Err(stream_exception(e, &v.to_string())),
            // Event types added later.
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
        msg.usage = self.usage.as_ref().map(usage);
        msg.finish_reason = self.stop_reason.as_deref().map(finish_reason);
        msg.finish_reason_raw = self.stop_reason.clone();
        msg.provider = Some(PROVIDER.into());
        Some(StreamEvent::Done(msg))
    }
}

impl StreamDecoder for BedrockStream {
    fn event(&mut self, name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        let v: Value = serde_json::from_str(data.trim())
            .map_err(|e| malformed(format!("stream event {name:?} is not JSON: {e}")))?;
        if name.is_empty() {
            // A recorded event: `{"eventName": payload}`.
            let (k, x) = union_member(&v, "stream event")?;
            let x = x.clone();
            return self.named(k, &x);
        }
        self.named(name, &v)
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        if self.stop_reason.is_some() {
            // messageStop came but no metadata: the message without usage.
            return Ok(self.finish().into_iter().collect());
        }
        Err(malformed("the stream ended before messageStop (truncated)"))
    }
}
