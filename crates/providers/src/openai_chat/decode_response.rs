//! A Chat Completions response body → the canonical assistant message:
//! finish reasons, usage, tool calls, the non-standard reasoning fields of
//! compatible servers. The stream decoder shares these pieces.

use parlance_format::{Block, FinishReason, Message, Role, ToolCall, Usage};
use parlance_model::{ModelError, set_arguments};
use serde_json::Value;

use super::dialect::{self, Dialect};
use crate::wire::{malformed, opt_str, str_field, u64_at};

/// `finish_reason` → canonical.
pub fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        // Together's "eos": the model's end of sequence.
        "stop" | "eos" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

/// `usage` → canonical, read as OpenAI's own API counts (see
/// [`usage_in`] for the hosts that count differently).
pub fn usage(u: &Value) -> Usage {
    usage_in(&dialect::OPENAI, u)
}

/// `usage` of a host speaking `dialect` → canonical. The cached part of
/// the prompt is OpenAI's `prompt_tokens_details.cached_tokens`,
/// DeepSeek's `prompt_cache_hit_tokens` or Mistral's `num_cached_tokens`
/// (each already inside `prompt_tokens`). OpenAI's `completion_tokens`
/// includes the reasoning tokens; xAI's does not (its `total_tokens` adds
/// them on top), so there they are added: canonical `output_tokens` always
/// includes reasoning. The arithmetic decides when `total_tokens` is
/// there (`total = prompt + completion + reasoning`: reasoning beside the
/// completion, on any host); the host's known rule when it is not.
pub fn usage_in(dialect: &Dialect, u: &Value) -> Usage {
    let input = u64_at(u, &["prompt_tokens"]).unwrap_or(0);
    let completion = u64_at(u, &["completion_tokens"]).unwrap_or(0);
    let reasoning = u64_at(u, &["completion_tokens_details", "reasoning_tokens"]);
    // The total, when given, says which: it is the sum either way.
    let excluded = match (reasoning, u64_at(u, &["total_tokens"])) {
        (Some(r), Some(total)) if r > 0 => {
            input.checked_add(completion).and_then(|n| n.checked_add(r)) == Some(total)
        }
        (Some(r), None) if r > 0 => dialect.completion_excludes_reasoning,
        _ => false,
    };
    let output = if excluded {
        completion.saturating_add(reasoning.unwrap_or(0))
    } else {
        completion
    };
    Usage {
        input_tokens: input,
        output_tokens: output,
        cached_tokens: u64_at(u, &["prompt_tokens_details", "cached_tokens"])
            .or_else(|| u64_at(u, &["prompt_cache_hit_tokens"]))
            .or_else(|| u64_at(u, &["num_cached_tokens"]))
            .unwrap_or(0),
        cache_write_tokens: u64_at(u, &["prompt_tokens_details", "cache_write_tokens"])
            .filter(|n| *n > 0),
        reasoning_tokens: reasoning,
    }
}

pub(crate) fn tool_call(tc: &Value, what: &str) -> Result<ToolCall, ModelError> {
    let f = tc
        .get("function")
        .ok_or_else(|| malformed(format!("{what}.function: missing")))?;
    let mut call = ToolCall::new(
        str_field(tc, "id", what)?,
        str_field(f, "name", &format!("{what}.function"))?,
        Value::Null,
    );
    set_arguments(
        &mut call,
        f.get("arguments").and_then(Value::as_str).unwrap_or(""),
    );
    Ok(call)
}

/// Non-standard reasoning text of OpenAI-compatible servers (`reasoning_content`, `reasoning`).
pub(crate) fn reasoning_text(m: &Value) -> Option<&str> {
    ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| m.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
}

/// The thinking block of a host's reasoning: its text, marked with the
/// host's name (OpenAI's own API returns none); OpenRouter's
/// `reasoning_details` items are kept whole, as JSON text, in
/// `encrypted_content`, to go back to it unchanged.
pub(crate) fn thinking_block(dialect: &Dialect, text: &str, details: &[Value]) -> Block {
    let mut text = text.to_string();
    if text.is_empty() {
        // Only details: their readable parts.
        for d in details {
            for k in ["text", "summary"] {
                if let Some(t) = d.get(k).and_then(Value::as_str) {
                    text.push_str(t);
                }
            }
        }
    }
    let mut t = parlance_format::Thinking {
        thinking: text,
        ..Default::default()
    };
    // Opaque data is always marked with who made it (read as OpenAI's
    // Chat, OpenRouter's details are "openai"'s: sent back only through
    // the dialect that reads them).
    if *dialect != dialect::OPENAI || !details.is_empty() {
        t.provider = Some(dialect.provider.into());
    }
    if !details.is_empty() {
        t.encrypted_content = Some(Value::Array(details.to_vec()).to_string());
    }
    Block::Thinking(t)
}

/// The reasoning of an assistant message `m` (an answer, or one a
/// request sends back) as a thinking block of `dialect`'s host — from the
/// host's own field, OpenRouter's `reasoning_details`, or, with `tags` and
/// neither, `<think>…</think>` at the start of a string `content` — and
/// the content that is left: `m`'s own, or the text after the tags.
pub(crate) fn message_reasoning<'a>(
    dialect: &Dialect,
    m: &'a Value,
    tags: bool,
) -> (Option<Block>, std::borrow::Cow<'a, Value>) {
    use std::borrow::Cow;
    static NONE: Value = Value::Null;
    let details = m
        .get("reasoning_details")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut text = reasoning_text(m).map(str::to_string);
    let mut content = Cow::Borrowed(m.get("content").unwrap_or(&NONE));
    if let Value::String(s) = &*content
        && tags
        && text.is_none()
        && details.is_empty()
    {
        let (thinking, answer) = crate::think_tags::split(s);
        if let Some(t) = thinking {
            text = Some(t).filter(|t| !t.is_empty());
            content = Cow::Owned(Value::String(answer));
        }
    }
    let block = (text.is_some() || !details.is_empty())
        .then(|| thinking_block(dialect, text.as_deref().unwrap_or(""), details));
    (block, content)
}

/// A response body → the assistant message (OpenAI's own API).
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    decode_response_in(&dialect::OPENAI, body)
}

/// A response body of a host speaking `dialect` → the assistant message.
pub fn decode_response_in(dialect: &Dialect, body: &Value) -> Result<Message, ModelError> {
    // What the canonical reader refuses is a malformed response here.
    crate::wire::checked_message(decode(dialect, body)?)
}

fn decode(dialect: &Dialect, body: &Value) -> Result<Message, ModelError> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| malformed("choices: expected at least one choice"))?;
    // Azure leaves the message out of an answer its content filter
    // stopped (`finish_reason: content_filter`): an empty answer, so
    // finished.
    let empty = Value::Object(Default::default());
    let m = match choice.get("message") {
        Some(m) => m,
        None if choice["finish_reason"] == "content_filter" => &empty,
        None => return Err(malformed("choices[0].message: missing")),
    };
    let mut content = Vec::new();
    let (thinking, text) = message_reasoning(dialect, m, true);
    content.extend(thinking);
    match &*text {
        Value::String(a) if !a.is_empty() => content.push(Block::text(a.clone())),
        Value::Array(parts) => {
            for p in parts {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    content.push(Block::text(t));
                }
            }
        }
        _ => {}
    }
    let refusal = m
        .get("refusal")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    if let Some(r) = refusal {
        content.push(Block::text(r));
    }
    if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
        for (i, tc) in calls.iter().enumerate() {
            content.push(Block::ToolCall {
                tool_call: tool_call(tc, &format!("choices[0].message.tool_calls[{i}]"))?,
            });
        }
    }
    let raw = choice.get("finish_reason").and_then(Value::as_str);
    let mut msg = Message::new(Role::Assistant, content);
    msg.id = opt_str(body, "id");
    // Groq's compound models count only in `x_groq.usage`.
    msg.usage = body
        .get("usage")
        .filter(|u| u.is_object())
        .or_else(|| body.pointer("/x_groq/usage").filter(|u| u.is_object()))
        .map(|u| usage_in(dialect, u));
    msg.finish_reason = raw.map(|r| {
        if refusal.is_some() {
            FinishReason::ContentFilter
        } else {
            finish_reason(r)
        }
    });
    msg.finish_reason_raw = raw.map(str::to_string);
    msg.provider = Some(dialect.provider.into());
    msg.model = opt_str(body, "model");
    Ok(msg)
}
