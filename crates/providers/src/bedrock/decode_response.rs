//! A Converse response body → the canonical assistant message: content
//! blocks, stop reasons (the raw one kept), usage. The stream decoder
//! shares these pieces.

use parlance_format::{Block, FinishReason, Message, Role, Thinking, ToolCall, Usage};
use parlance_model::ModelError;
use serde_json::{Map, Value};

use super::PROVIDER;
use crate::wire::{free_value, malformed, obj, str_field, u64_at};

/// `stopReason` → canonical.
pub fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "guardrail_intervened" | "content_filtered" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

/// `usage` → canonical. Bedrock's `inputTokens` leaves out the tokens read
/// from and written to the cache (a recorded answer: `inputTokens` 2,
/// `cacheWriteInputTokens` 1322, `totalTokens` 1329 with 5 output), so the
/// whole input is their sum. Some answers repeat the cache counts as
/// `cacheReadInputTokenCount`/`cacheWriteInputTokenCount`; the
/// documented names win, the others stand in when they are alone.
pub fn usage(u: &Value) -> Usage {
    let either = |a: &str, b: &str| u64_at(u, &[a]).or_else(|| u64_at(u, &[b]));
    let uncached = u64_at(u, &["inputTokens"]).unwrap_or(0);
    let read = either("cacheReadInputTokens", "cacheReadInputTokenCount").unwrap_or(0);
    let write = either("cacheWriteInputTokens", "cacheWriteInputTokenCount");
    Usage {
        input_tokens: uncached
            .saturating_add(read)
            .saturating_add(write.unwrap_or(0)),
        output_tokens: u64_at(u, &["outputTokens"]).unwrap_or(0),
        cached_tokens: read,
        cache_write_tokens: write.filter(|n| *n > 0),
        reasoning_tokens: None,
    }
}

/// The one member a union object holds (Converse content blocks are
/// unions): its name and value. Zero or several members is malformed.
pub(crate) fn union_member<'a>(
    v: &'a Value,
    what: &str,
) -> Result<(&'a str, &'a Value), ModelError> {
    let m = obj(v, what)?;
    let mut set = m.iter().filter(|(_, x)| !x.is_null());
    match (set.next(), set.next()) {
        (Some((k, x)), None) => Ok((k.as_str(), x)),
        (None, _) => Err(malformed(format!("{what}: expected one member, got none"))),
        (Some((a, _)), Some((b, _))) => Err(malformed(format!(
            "{what}: expected one member, got several ({a}, {b}...)"
        ))),
    }
}

/// A `reasoningContent` union → a canonical thinking block.
pub(crate) fn reasoning(v: &Value, what: &str) -> Result<Thinking, ModelError> {
    let (k, x) = union_member(v, what)?;
    let mut t = Thinking {
        provider: Some(PROVIDER.into()),
        ..Thinking::default()
    };
    match k {
        "reasoningText" => {
            t.thinking = str_field(x, "text", &format!("{what}.reasoningText"))?.to_string();
            t.signature = match x.get("signature") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => {
                    return Err(malformed(format!(
                        "{what}.reasoningText.signature: expected a string"
                    )));
                }
            };
        }
        "redactedContent" => {
            t.redacted = Some(
                x.as_str()
                    .ok_or_else(|| {
                        malformed(format!("{what}.redactedContent: expected base64 text"))
                    })?
                    .to_string(),
            );
        }
        other => {
            return Err(malformed(format!(
                "{what}.{other}: unknown reasoning content"
            )));
        }
    }
    Ok(t)
}

/// A tool call's `toolUse` (response or request side).
pub(crate) fn tool_use(x: &Value, what: &str) -> Result<ToolCall, ModelError> {
    if let Some(ty) = x.get("type").and_then(Value::as_str)
        && ty == "server_tool_use"
    {
        return Err(malformed(format!(
            "{what}.type: server tool calls are not supported yet; nothing was dropped"
        )));
    }
    Ok(ToolCall::new(
        str_field(x, "toolUseId", what)?,
        str_field(x, "name", what)?,
        match x.get("input") {
            Some(input) if !input.is_null() => free_value(input, &format!("{what}.input"))?,
            _ => Value::Object(Map::new()),
        },
    ))
}

/// One assistant content block → canonical (`None` for an empty text).
pub(crate) fn block(b: &Value, what: &str) -> Result<Option<Block>, ModelError> {
    let (k, x) = union_member(b, what)?;
    let w = format!("{what}.{k}");
    Ok(Some(match k {
        "text" => Block::text(
            x.as_str()
                .ok_or_else(|| malformed(format!("{w}: expected a string")))?,
        ),
        "reasoningContent" => Block::Thinking(reasoning(x, &w)?),
        "toolUse" => Block::ToolCall {
            tool_call: tool_use(x, &w)?,
        },
        other => {
            return Err(malformed(format!(
                "{what}.{other}: Parlance cannot keep {other:?} blocks from Bedrock yet; nothing was dropped"
            )));
        }
    }))
}

/// A response body → the assistant message.
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    crate::wire::checked_message(decode(body)?)
}

fn decode(body: &Value) -> Result<Message, ModelError> {
    let content = body
        .pointer("/output/message/content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("output.message.content: expected an array"))?;
    let mut blocks = Vec::with_capacity(content.len());
    for (i, b) in content.iter().enumerate() {
        blocks.extend(block(b, &format!("output.message.content[{i}]"))?);
    }
    let mut msg = Message::new(Role::Assistant, blocks);
    let raw = body.get("stopReason").and_then(Value::as_str);
    msg.usage = body.get("usage").filter(|u| u.is_object()).map(usage);
    msg.finish_reason = raw.map(finish_reason);
    msg.finish_reason_raw = raw.map(str::to_string);
    msg.provider = Some(PROVIDER.into());
    Ok(msg)
}
