//! A Responses API response → the canonical assistant message: output items
//! to blocks (reasoning items one block per summary part), the finish
//! reason inferred from the output, usage. The stream decoder builds its
//! final message with these.

use parlance_format::{Block, FinishReason, Message, Role, Text, Thinking, ToolCall, Usage};
use parlance_model::{ModelError, set_arguments};
use serde_json::Value;

use super::PROVIDER;
use super::errors::error_object;
use crate::wire::{malformed, opt_str, str_field, u64_at};

/// `usage` → canonical (input includes cached tokens; output includes reasoning).
pub fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(u, &["input_tokens"]).unwrap_or(0),
        output_tokens: u64_at(u, &["output_tokens"]).unwrap_or(0),
        cached_tokens: u64_at(u, &["input_tokens_details", "cached_tokens"]).unwrap_or(0),
        cache_write_tokens: u64_at(u, &["input_tokens_details", "cache_write_tokens"])
            .filter(|n| *n > 0),
        reasoning_tokens: u64_at(u, &["output_tokens_details", "reasoning_tokens"]),
    }
}

/// One output item → canonical blocks (a reasoning item gives one block
/// per summary part, all with the item's id; the first keeps the
/// encrypted content).
pub fn item_blocks(item: &Value, what: &str) -> Result<Vec<Block>, ModelError> {
    match str_field(item, "type", what)? {
        "reasoning" => {
            let id = opt_str(item, "id");
            let parts: Vec<String> = item
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_string))
                .collect();
            let parts = if parts.is_empty() {
                vec![String::new()]
            } else {
                parts
            };
            Ok(parts
                .into_iter()
                .enumerate()
                .map(|(i, text)| {
                    Block::Thinking(Thinking {
                        thinking: text,
                        encrypted_content: if i == 0 {
                            opt_str(item, "encrypted_content")
                        } else {
                            None
                        },
                        item_id: id.clone(),
                        provider: Some(PROVIDER.into()),
                        ..Thinking::default()
                    })
                })
                .collect())
        }
        "message" => {
            let id = opt_str(item, "id");
            let mut out = Vec::new();
            for (i, c) in item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let text = match c.get("type").and_then(Value::as_str) {
                    Some("output_text") | Some("input_text") => {
                        str_field(c, "text", &format!("{what}.content[{i}]"))?
                    }
                    Some("refusal") => str_field(c, "refusal", &format!("{what}.content[{i}]"))?,
                    other => {
                        return Err(malformed(format!(
                            "{what}.content[{i}].type: unsupported {other:?}"
                        )));
                    }
                };
                out.push(Block::Text(Text {
                    text: text.to_string(),
                    signature: None,
                    item_id: id.clone(),
                    provider: id.as_ref().map(|_| PROVIDER.to_string()),
                }));
            }
            Ok(out)
        }
        "function_call" => {
            let id = opt_str(item, "id");
            let mut call = ToolCall::new(
                str_field(item, "call_id", what)?,
                str_field(item, "name", what)?,
                Value::Null,
            );
            set_arguments(
                &mut call,
                item.get("arguments").and_then(Value::as_str).unwrap_or(""),
            );
            if id.is_some() {
                call.item_id = id;
                call.provider = Some(PROVIDER.into());
            }
            Ok(vec![Block::ToolCall { tool_call: call }])
        }
        other => Err(malformed(format!(
            "{what}.type: Parlance cannot keep {other:?} output items yet (built-in tools); nothing was dropped"
        ))),
    }
}

/// The finish reason, from the status, why it is incomplete, and whether
/// the output calls tools (the API has no finish_reason field).
pub fn finish_reason(response: &Value, blocks: &[Block]) -> (FinishReason, String) {
    let status = response
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("completed");
    let reason = response
        .pointer("/incomplete_details/reason")
        .and_then(Value::as_str);
    let refused = response
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|i| {
            i.get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .any(|c| c.get("type").and_then(Value::as_str) == Some("refusal"));
    match (status, reason) {
        ("incomplete", Some("max_output_tokens")) => {
            (FinishReason::Length, "max_output_tokens".into())
        }
        ("incomplete", Some("content_filter")) => {
            (FinishReason::ContentFilter, "content_filter".into())
        }
        ("incomplete", r) => (FinishReason::Other, r.unwrap_or("incomplete").into()),
        ("failed", _) => (FinishReason::Error, "failed".into()),
        _ if refused => (FinishReason::ContentFilter, "refusal".into()),
        _ if blocks.iter().any(|b| matches!(b, Block::ToolCall { .. })) => {
            (FinishReason::ToolCalls, status.into())
        }
        _ => (FinishReason::Stop, status.into()),
    }
}

/// A response body → the assistant message.
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    // What the canonical reader refuses is a malformed response here.
    crate::wire::checked_message(decode(body)?)
}

fn decode(body: &Value) -> Result<Message, ModelError> {
    if body.get("status").and_then(Value::as_str) == Some("failed") {
        let e = body.get("error").unwrap_or(&Value::Null);
        return Err(error_object(e));
    }
    let output = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("output: expected an array"))?;
    let mut blocks = Vec::new();
    for (i, item) in output.iter().enumerate() {
        blocks.extend(item_blocks(item, &format!("output[{i}]"))?);
    }
    let (finish, raw) = finish_reason(body, &blocks);
    let mut msg = Message::new(Role::Assistant, blocks);
    msg.id = opt_str(body, "id");
    msg.usage = body.get("usage").filter(|u| u.is_object()).map(usage);
    msg.finish_reason = Some(finish);
    msg.finish_reason_raw = Some(raw);
    msg.provider = Some(PROVIDER.into());
    msg.model = opt_str(body, "model");
    Ok(msg)
}
