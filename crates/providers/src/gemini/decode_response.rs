//! A `GenerateContentResponse` → the canonical assistant message: parts to
//! blocks (thought signatures kept in place, ids made up for calls sent
//! without one), finish reasons (`STOP` with calls is `tool_calls`, safety
//! reasons are `content_filter`), usage. The stream decoder shares these
//! pieces.

use parlance_format::{Block, FinishReason, Media, Message, Role, Text, Thinking, ToolCall, Usage};
use parlance_model::ModelError;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::PROVIDER;
use super::errors::error_object;
use crate::wire::{free_value, malformed, opt_str, str_field, u64_at};

/// `finishReason` → canonical; `STOP` with function calls is `tool_calls`.
pub fn finish_reason(raw: &str, has_calls: bool) -> FinishReason {
    match raw {
        "STOP" if has_calls => FinishReason::ToolCalls,
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY"
        | "RECITATION"
        | "BLOCKLIST"
        | "PROHIBITED_CONTENT"
        | "SPII"
        | "IMAGE_SAFETY"
        | "IMAGE_PROHIBITED_CONTENT"
        | "IMAGE_RECITATION" => FinishReason::ContentFilter,
        "MALFORMED_FUNCTION_CALL"
        | "UNEXPECTED_TOOL_CALL"
        | "TOO_MANY_TOOL_CALLS"
        | "MISSING_THOUGHT_SIGNATURE"
        | "MALFORMED_RESPONSE" => FinishReason::Error,
        _ => FinishReason::Other,
    }
}

/// `usageMetadata` → canonical: the prompt count includes cached tokens;
/// the output is the candidates plus the thoughts.
pub fn usage(u: &Value) -> Usage {
    let thoughts = u64_at(u, &["thoughtsTokenCount"]);
    Usage {
        // Saturating: counts are the provider's numbers, not ours to trust.
        input_tokens: u64_at(u, &["promptTokenCount"])
            .unwrap_or(0)
            .saturating_add(u64_at(u, &["toolUsePromptTokenCount"]).unwrap_or(0)),
        output_tokens: u64_at(u, &["candidatesTokenCount"])
            .unwrap_or(0)
            .saturating_add(thoughts.unwrap_or(0)),
        cached_tokens: u64_at(u, &["cachedContentTokenCount"]).unwrap_or(0),
        cache_write_tokens: None,
        reasoning_tokens: thoughts,
    }
}

/// A canonical id for a call Gemini sent without one: stable for the same
/// response, call position, name and arguments.
pub(crate) fn synth_id(
    response_id: Option<&str>,
    index: usize,
    name: &str,
    args: &Value,
) -> String {
    let mut h = Sha256::new();
    h.update(response_id.unwrap_or("").as_bytes());
    h.update(index.to_le_bytes());
    h.update(name.as_bytes());
    h.update(args.to_string().as_bytes());
    format!("call_{}", hex::encode(&h.finalize()[..8]))
}

/// One response part → a canonical block (`None` for an empty text part
/// that carries nothing).
/// `call_index` (the call's position among the message's calls) only
/// feeds the id made up for a call Gemini sent without one.
pub(crate) fn part_block(
    p: &Value,
    what: &str,
    response_id: Option<&str>,
    call_index: usize,
) -> Result<Option<Block>, ModelError> {
    let sig = opt_str(p, "thoughtSignature");
    if let Some(fc) = p.get("functionCall") {
        let name = str_field(fc, "name", &format!("{what}.functionCall"))?;
        let args = match fc.get("args") {
            Some(a) => free_value(a, &format!("{what}.functionCall.args"))?,
            None => Value::Object(Map::new()),
        };
        let gid = opt_str(fc, "id");
        let id = gid
            .clone()
            .unwrap_or_else(|| synth_id(response_id, call_index, name, &args));
        let own = gid.is_some() || sig.is_some();
        return Ok(Some(Block::ToolCall {
            tool_call: ToolCall {
                item_id: gid,
                signature: sig,
                provider: own.then(|| PROVIDER.to_string()),
                ..ToolCall::new(id, name, args)
            },
        }));
    }
    if let Some(text) = p.get("text").and_then(Value::as_str) {
        if p.get("thought").and_then(Value::as_bool) == Some(true) {
            return Ok(Some(Block::Thinking(Thinking {
                thinking: text.to_string(),
                signature: sig,
                provider: Some(PROVIDER.into()),
                ..Thinking::default()
            })));
        }
        if text.is_empty() && sig.is_none() {
            return Ok(None);
        }
        return Ok(Some(Block::Text(Text {
            text: text.to_string(),
            provider: sig.as_ref().map(|_| PROVIDER.to_string()),
            signature: sig,
            item_id: None,
        })));
    }
    // A `Blob` needs both fields, a `FileData` its URI (as the canonical
    // reader needs a media type with inline data, and one source).
    if let Some(d) = p.get("inlineData") {
        let w = format!("{what}.inlineData");
        let media = Media {
            data: Some(str_field(d, "data", &w)?.to_string()),
            media_type: Some(str_field(d, "mimeType", &w)?.to_string()),
            ..Media::default()
        };
        return Ok(Some(media_block(media)));
    }
    if let Some(f) = p.get("fileData") {
        let media = Media {
            url: Some(str_field(f, "fileUri", &format!("{what}.fileData"))?.to_string()),
            media_type: opt_str(f, "mimeType"),
            ..Media::default()
        };
        return Ok(Some(media_block(media)));
    }
    let keys: Vec<&String> = p
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    Err(malformed(format!(
        "{what}: Parlance cannot keep parts with {keys:?} yet; nothing was dropped"
    )))
}

fn media_block(m: Media) -> Block {
    match m.media_type.as_deref() {
        Some(t) if t.starts_with("image/") => Block::Image { image: m },
        Some(t) if t.starts_with("audio/") => Block::Audio { audio: m },
        _ => Block::File { file: m },
    }
}

/// A response body → the assistant message.
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    // What the canonical reader refuses is a malformed response here.
    crate::wire::checked_message(decode(body)?)
}

fn decode(body: &Value) -> Result<Message, ModelError> {
    if let Some(e) = body.get("error") {
        return Err(error_object(e, None));
    }
    check_shape(body, "")?;
    let response_id = body.get("responseId").and_then(Value::as_str);
    let candidate = body
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    let mut blocks = Vec::new();
    let raw = match candidate {
        Some(c) => {
            let mut calls = 0;
            for (i, p) in c
                .pointer("/content/parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let b = part_block(
                    p,
                    &format!("candidates[0].content.parts[{i}]"),
                    response_id,
                    calls,
                )?;
                calls += usize::from(matches!(b, Some(Block::ToolCall { .. })));
                blocks.extend(b);
            }
            opt_str(c, "finishReason")
        }
        // Blocked prompt: no candidates, a block reason.
        None => body
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let has_calls = blocks.iter().any(|b| matches!(b, Block::ToolCall { .. }));
    let mut msg = Message::new(Role::Assistant, blocks);
    msg.id = response_id.map(str::to_string);
    msg.usage = body
        .get("usageMetadata")
        .filter(|u| u.is_object())
        .map(usage);
    msg.finish_reason = raw.as_deref().map(|r| {
        if candidate.is_none() {
            FinishReason::ContentFilter
        } else {
            finish_reason(r, has_calls)
        }
    });
    msg.finish_reason_raw = raw;
    msg.provider = Some(PROVIDER.into());
    msg.model = opt_str(body, "modelVersion");
    Ok(msg)
}

/// Refuses what is not a `GenerateContentResponse` (a whole response, or
/// one chunk of a stream), naming the path: it has candidates, prompt
/// feedback (a blocked prompt) or usage, each of its type. Another API's
/// answer (`choices`, `content`, `output`) is refused here instead of
/// decoding to an empty message. `at` prefixes the paths (`""` or
/// `"chunk."`).
pub(super) fn check_shape(body: &Value, at: &str) -> Result<(), ModelError> {
    let Some(b) = body.as_object() else {
        return Err(malformed(format!(
            "{}: expected a Gemini GenerateContentResponse object",
            if at.is_empty() {
                "(root)"
            } else {
                at.trim_end_matches('.')
            }
        )));
    };
    if !["candidates", "promptFeedback", "usageMetadata"]
        .iter()
        .any(|k| b.get(*k).is_some_and(|v| !v.is_null()))
    {
        let fields: Vec<&str> = b.keys().map(String::as_str).collect();
        return Err(malformed(format!(
            "{at}candidates: required in a Gemini response (or promptFeedback, usageMetadata); found only: {}",
            if fields.is_empty() {
                "nothing".to_string()
            } else {
                fields.join(", ")
            }
        )));
    }
    for k in ["promptFeedback", "usageMetadata"] {
        if let Some(v) = b.get(k).filter(|v| !v.is_null())
            && !v.is_object()
        {
            return Err(malformed(format!("{at}{k}: expected an object")));
        }
    }
    let candidates = match b.get("candidates") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(c)) => c,
        Some(_) => return Err(malformed(format!("{at}candidates: expected an array"))),
    };
    for (i, c) in candidates.iter().enumerate() {
        let what = format!("{at}candidates[{i}]");
        let c = c
            .as_object()
            .ok_or_else(|| malformed(format!("{what}: expected an object")))?;
        match c.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::Object(content)) => match content.get("parts") {
                None | Some(Value::Null) | Some(Value::Array(_)) => {}
                Some(_) => {
                    return Err(malformed(format!(
                        "{what}.content.parts: expected an array"
                    )));
                }
            },
            Some(_) => return Err(malformed(format!("{what}.content: expected an object"))),
        }
    }
    Ok(())
}
