//! Mistral SSE chunks → canonical stream events: OpenAI Chat's chunk
//! decoder, after each chunk is put in OpenAI's words — content chunk
//! lists become text and `reasoning_content` (Magistral's `thinking`
//! chunks), tool calls (whole or in fragments, with or without `index`)
//! get an index each by their ids and their arguments as text — and the final
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
    /// The calls begun so far: (Mistral's `index` if it sent one, id), in
    /// order; a call's position here is its index for the Chat decoder.
    calls: Vec<(Option<u64>, String)>,
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
                tc["index"] = json!(self.index_of(tc));
                if let Some(args) = tc.pointer_mut("/function/arguments")
                    && args.is_object()
                {
                    *args = json!(args.to_string());
                }
            }
        }
        Ok(())
    }

    /// The Chat decoder's index for a tool call fragment. Mistral sends a
    /// call whole or in fragments, with or without `index`, and may give
    /// every call `index: 0`: a fragment with an id not seen yet begins a
    /// call; one without an id continues the call of its `index` (the
    /// latest one when it has none).
    fn index_of(&mut self, tc: &Value) -> usize {
        let index = tc.get("index").and_then(Value::as_u64);
        let id = tc
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty() && *s != "null");
        if let Some(id) = id {
            if let Some(k) = self.calls.iter().position(|(_, c)| c == id) {
                return k;
            }
            self.calls.push((index, id.to_string()));
            return self.calls.len() - 1;
        }
        // With no call begun yet, index 0: the Chat decoder then says the
        // first fragment has no id.
        index
            .and_then(|i| self.calls.iter().rposition(|(k, _)| *k == Some(i)))
            .or(self.calls.len().checked_sub(1))
            .unwrap_or(0)
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
