//! A Mistral chat completions response body → the canonical assistant
//! message. Like OpenAI Chat's, except: content may be a list of chunks
//! (`text`, and `thinking` from Magistral reasoning models, with an
//! optional signature), tool call arguments may be an object, and the
//! finish reasons include `model_length` and `error`.

use parlance_format::{Block, FinishReason, Message, Role, Thinking, ToolCall};
use parlance_model::{ModelError, set_arguments};
use serde_json::Value;

use super::PROVIDER;
use crate::openai_chat::decode_response::usage;
use crate::wire::{free_value, malformed, opt_str, str_field};

/// `finish_reason` → canonical.
pub fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        "stop" => FinishReason::Stop,
        "tool_calls" => FinishReason::ToolCalls,
        // `model_length`: the model's context is full.
        "length" | "model_length" => FinishReason::Length,
        "error" => FinishReason::Error,
        _ => FinishReason::Other,
    }
}

/// A `thinking` chunk → a thinking block, Mistral's (its signature kept).
pub(crate) fn thinking(chunk: &Value, what: &str) -> Result<Thinking, ModelError> {
    let parts = chunk
        .get("thinking")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed(format!("{what}.thinking: expected a list of chunks")))?;
    let mut text = String::new();
    for (i, p) in parts.iter().enumerate() {
        // Text; reference chunks carry no reasoning text.
        if p.get("type").and_then(Value::as_str).unwrap_or("text") == "text" {
            text.push_str(str_field(p, "text", &format!("{what}.thinking[{i}]"))?);
        }
    }
    // Tagged Mistral's even unsigned: reasoning goes back only to the
    // provider that produced it.
    Ok(Thinking {
        thinking: text,
        signature: opt_str(chunk, "signature"),
        provider: Some(PROVIDER.into()),
        ..Default::default()
    })
}

/// A `thinking` chunk → one thinking block per text part (a chunk may
/// hold several; they go back as one chunk again), its signature on the
/// first. A chunk with no text is one empty block (its signature kept).
pub(crate) fn thinking_blocks(chunk: &Value, what: &str) -> Result<Vec<Thinking>, ModelError> {
    let whole = thinking(chunk, what)?;
    let parts = chunk["thinking"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let texts: Vec<&str> = parts
        .iter()
        .filter(|p| p.get("type").and_then(Value::as_str).unwrap_or("text") == "text")
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    if texts.len() <= 1 {
        return Ok(vec![whole]);
    }
    Ok(texts
        .iter()
        .enumerate()
        .map(|(i, t)| Thinking {
            thinking: t.to_string(),
            signature: if i == 0 {
                whole.signature.clone()
            } else {
                None
            },
            ..whole.clone()
        })
        .collect())
}

/// Content (a string, or chunks) → blocks.
pub(crate) fn content(v: &Value, what: &str) -> Result<Vec<Block>, ModelError> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::String(s) if s.is_empty() => Ok(Vec::new()),
        Value::String(s) => Ok(vec![Block::text(s.clone())]),
        Value::Array(chunks) => {
            let mut out = Vec::with_capacity(chunks.len());
            for (i, c) in chunks.iter().enumerate() {
                let w = format!("{what}[{i}]");
                match c.get("type").and_then(Value::as_str) {
                    Some("text") => out.push(Block::text(str_field(c, "text", &w)?)),
                    Some("thinking") => {
                        out.extend(thinking_blocks(c, &w)?.into_iter().map(Block::Thinking))
                    }
                    // Anything else in an answer (references...) carries
                    // no text of its own.
                    Some(_) => {}
                    None => return Err(malformed(format!("{w}.type: missing"))),
                }
            }
            Ok(out)
        }
        _ => Err(malformed(format!(
            "{what}: expected a string or a list of chunks"
        ))),
    }
}

/// A tool call; its arguments a JSON string or an object.
pub(crate) fn tool_call(tc: &Value, what: &str) -> Result<ToolCall, ModelError> {
    let f = tc
        .get("function")
        .ok_or_else(|| malformed(format!("{what}.function: missing")))?;
    let fw = format!("{what}.function");
    let mut call = ToolCall::new(
        str_field(tc, "id", what)?,
        str_field(f, "name", &fw)?,
        Value::Null,
    );
    match f.get("arguments") {
        Some(Value::String(s)) => set_arguments(&mut call, s),
        Some(v @ Value::Object(_)) => call.arguments = free_value(v, &format!("{fw}.arguments"))?,
        None | Some(Value::Null) => set_arguments(&mut call, ""),
        Some(_) => {
            return Err(malformed(format!(
                "{fw}.arguments: expected a JSON string or an object"
            )));
        }
    }
    Ok(call)
}

/// A response body → the assistant message.
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    crate::wire::checked_message(decode(body)?)
}

fn decode(body: &Value) -> Result<Message, ModelError> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| malformed("choices: expected at least one choice"))?;
    let m = choice
        .get("message")
        .ok_or_else(|| malformed("choices[0].message: missing"))?;
    let mut blocks = content(
        m.get("content").unwrap_or(&Value::Null),
        "choices[0].message.content",
    )?;
    if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
        for (i, tc) in calls.iter().enumerate() {
            blocks.push(Block::ToolCall {
                tool_call: tool_call(tc, &format!("choices[0].message.tool_calls[{i}]"))?,
            });
        }
    }
    let raw = choice.get("finish_reason").and_then(Value::as_str);
    let mut msg = Message::new(Role::Assistant, blocks);
    msg.id = opt_str(body, "id");
    msg.usage = body.get("usage").filter(|u| u.is_object()).map(usage);
    msg.finish_reason = raw.map(finish_reason);
    msg.finish_reason_raw = raw.map(str::to_string);
    msg.provider = Some(PROVIDER.into());
    msg.model = opt_str(body, "model");
    Ok(msg)
}
