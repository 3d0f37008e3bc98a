//! Mistral SSE chunks → canonical stream events: OpenAI Chat's chunk
//! decoder, after each chunk is put in OpenAI's words — content chunk
//! lists become text and `reasoning_content` (Magistral's `thinking`
//! chunks), tool calls (sent whole, in one delta, possibly without
//! `index`) get an index each and their arguments as text — and the final
//! message made Mistral's (provider, finish reasons, thinking signature).

use parlance_format::{Block, Message};
use parlance_model::{ModelError, StreamEvent};
use serde_json::{Value, json};

use super::PROVIDER;
use super::decode_response::{finish_reason, thinking};
use crate::openai_chat::stream::ChatStream;
use crate::transport::StreamDecoder;
use crate::wire::malformed;

/// Assembles one streamed Mistral answer.
#[derive(Debug, Default)]
pub struct MistralStream {
    chat: ChatStream,
    calls: u64,
    signature: Option<String>,
}

impl MistralStream {
    /// A fresh decoder.
    pub fn new() -> Self {
        MistralStream::default()
    }

    fn put_in_chat_words(&mut self, v: &mut Value) -> Result<(), ModelError> {
        let Some(delta) = v.pointer_mut("/choices/0/delta") else {
            return Ok(());
        };
        if let Some(Value::Array(chunks)) = delta.get("content").cloned() {
            let mut text = String::new();
            let mut reasoning = String::new();
            for (i, c) in chunks.iter().enumerate() {
                let w = format!("choices[0].delta.content[{i}]");
                match c.get("type").and_then(Value::as_str) {
                    Some("text") => text.push_str(c["text"].as_str().unwrap_or_default()),
                    Some("thinking") => {
                        let t = thinking(c, &w)?;
                        reasoning.push_str(&t.thinking);
                        if t.signature.is_some() {
                            self.signature = t.signature;
                        }
                    }
                    Some(_) => {}
                    None => return Err(malformed(format!("{w}.type: missing"))),
                }
            }
            delta["content"] = json!(text);
            if !reasoning.is_empty() {
                delta["reasoning_content"] = json!(reasoning);
            }
        }
        if let Some(Value::Array(calls)) = delta.get_mut("tool_calls") {
            for tc in calls {
                // Each call arrives whole: a new index for each.
                tc["index"] = json!(self.calls);
                self.calls += 1;
                if let Some(args) = tc.pointer_mut("/function/arguments")
                    && args.is_object()
                {
                    *args = json!(args.to_string());
                }
            }
        }
        Ok(())
    }

    fn finish(&self, events: Vec<StreamEvent>) -> Vec<StreamEvent> {
        events
            .into_iter()
            .map(|e| match e {
                StreamEvent::Done(m) => StreamEvent::Done(self.mistral_message(m)),
                other => other,
            })
            .collect()
    }

    fn mistral_message(&self, mut m: Message) -> Message {
        m.provider = Some(PROVIDER.into());
        m.finish_reason = m.finish_reason_raw.as_deref().map(finish_reason);
        for b in &mut m.content {
            if let Block::Thinking(t) = b {
                t.signature = self.signature.clone();
                t.provider = Some(PROVIDER.into());
            }
        }
        m
    }
}

impl StreamDecoder for MistralStream {
    fn event(&mut self, _name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        if data.trim() == "[DONE]" {
            let events = self.chat.chunk(data)?;
            return Ok(self.finish(events));
        }
        let mut v: Value = serde_json::from_str(data)
            .map_err(|e| malformed(format!("stream chunk is not JSON: {e}")))?;
        self.put_in_chat_words(&mut v)?;
        let events = self.chat.chunk(&v.to_string())?;
        Ok(self.finish(events))
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        let events = self.chat.end()?;
        Ok(self.finish(events))
    }
}
