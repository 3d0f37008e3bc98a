//! A Messages API response body → the canonical assistant message: content
//! blocks, stop reasons, usage (cache reads and writes added back to the
//! input). The stream decoder shares these pieces.

use parlance_format::{Block, FinishReason, Message, Role, Thinking, ToolCall, Usage};
use parlance_model::ModelError;
use serde_json::{Map, Value};

use super::PROVIDER;
use super::errors::classify;
use crate::wire::{free_value, malformed, opt_str, str_field, u64_at};

/// `stop_reason` → canonical.
pub fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

/// `usage` → canonical: Anthropic's `input_tokens` leaves out cache reads
/// and writes, so the whole input is their sum.
pub fn usage(u: &Value) -> Usage {
    let uncached = u64_at(u, &["input_tokens"]).unwrap_or(0);
    let read = u64_at(u, &["cache_read_input_tokens"]).unwrap_or(0);
    let write = u64_at(u, &["cache_creation_input_tokens"]);
    Usage {
        // Saturating: counts are the provider's numbers, not ours to trust.
        input_tokens: uncached
            .saturating_add(read)
            .saturating_add(write.unwrap_or(0)),
        output_tokens: u64_at(u, &["output_tokens"]).unwrap_or(0),
        cached_tokens: read,
        cache_write_tokens: write.filter(|n| *n > 0),
        reasoning_tokens: u64_at(u, &["output_tokens_details", "thinking_tokens"]),
    }
}

/// One response content block → canonical (`None` for blocks that carry
/// nothing, such as an empty text block).
pub(crate) fn block(b: &Value, what: &str) -> Result<Option<Block>, ModelError> {
    Ok(Some(match str_field(b, "type", what)? {
        "text" => Block::text(str_field(b, "text", what)?),
        "thinking" => Block::Thinking(Thinking {
            thinking: str_field(b, "thinking", what)?.to_string(),
            signature: opt_str(b, "signature"),
            provider: Some(PROVIDER.into()),
            ..Thinking::default()
        }),
        "redacted_thinking" => Block::Thinking(Thinking {
            redacted: Some(str_field(b, "data", what)?.to_string()),
            provider: Some(PROVIDER.into()),
            ..Thinking::default()
        }),
        "tool_use" => Block::ToolCall {
            tool_call: ToolCall::new(
                str_field(b, "id", what)?,
                str_field(b, "name", what)?,
                match b.get("input") {
                    Some(input) => free_value(input, &format!("{what}.input"))?,
                    None => Value::Object(Map::new()),
                },
            ),
        },
        other => {
            return Err(malformed(format!(
                "{what}.type: Parlance cannot keep {other:?} blocks yet (server tools); nothing was dropped"
            )));
        }
    }))
}

/// A response body → the assistant message.
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    // What the canonical reader refuses is a malformed response here.
    crate::wire::checked_message(decode(body)?)
}

fn decode(body: &Value) -> Result<Message, ModelError> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        return Err(classify(200, body.to_string().as_bytes(), None));
    }
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("content: expected an array"))?;
    let mut blocks = Vec::with_capacity(content.len());
    for (i, b) in content.iter().enumerate() {
        blocks.extend(block(b, &format!("content[{i}]"))?);
    }
    let mut msg = Message::new(Role::Assistant, blocks);
    let raw = body.get("stop_reason").and_then(Value::as_str);
    msg.id = opt_str(body, "id");
    msg.usage = body.get("usage").filter(|u| u.is_object()).map(usage);
    msg.finish_reason = raw.map(finish_reason);
    msg.finish_reason_raw = raw.map(str::to_string);
    msg.finish_details = stop_details(body.get("stop_details"), "stop_details")?;
    msg.provider = Some(PROVIDER.into());
    msg.model = opt_str(body, "model");
    Ok(msg)
}

/// `stop_details` (a refusal's `category` and `explanation`), kept next to
/// the raw finish reason; `null`, absent or empty is none.
pub(super) fn stop_details(
    v: Option<&Value>,
    what: &str,
) -> Result<Option<Map<String, Value>>, ModelError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) if m.is_empty() => Ok(None),
        Some(d @ Value::Object(m)) => {
            free_value(d, what)?;
            Ok(Some(m.clone()))
        }
        Some(_) => Err(malformed(format!("{what}: expected an object"))),
    }
}
