//! Ollama's answer object → the canonical assistant message: `thinking`
//! (tagged `ollama`), content, tool calls (arguments an object; an id
//! made up when the call has none), `done_reason`, and the counts
//! (`prompt_eval_count` in, `eval_count` out). Durations have no canonical
//! place and are not kept.

use parlance_format::{Block, FinishReason, Message, Role, Thinking, ToolCall, Usage};
use parlance_model::ModelError;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{MADE_UP_ID, PROVIDER};
use crate::wire::{free_value, malformed, opt_str, str_field};

/// `done_reason` → canonical (`stop` with tool calls is a tool-call turn:
/// Ollama says `stop` either way).
pub fn finish_reason(raw: &str, has_calls: bool) -> FinishReason {
    match raw {
        "stop" if has_calls => FinishReason::ToolCalls,
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        // `load`/`unload`: a request that only (un)loaded the model.
        _ => FinishReason::Other,
    }
}

/// The finish of a final object; older servers send `done: true` with
/// no `done_reason`: a normal end.
pub fn done_finish(raw: Option<&str>, has_calls: bool) -> FinishReason {
    finish_reason(raw.unwrap_or("stop"), has_calls)
}

/// The counts of a final object.
pub fn usage(v: &Value) -> Option<Usage> {
    let input = v.get("prompt_eval_count").and_then(Value::as_u64);
    let output = v.get("eval_count").and_then(Value::as_u64);
    (input.is_some() || output.is_some()).then(|| Usage {
        input_tokens: input.unwrap_or(0),
        output_tokens: output.unwrap_or(0),
        ..Usage::default()
    })
}

/// An id for a call that came without one: stable for the same answer
/// (a hash of when it was made, its position, name and arguments).
pub(crate) fn made_up_id(stamp: &str, index: usize, name: &str, arguments: &Value) -> String {
    let mut h = Sha256::new();
    h.update(stamp.as_bytes());
    h.update(index.to_be_bytes());
    h.update(name.as_bytes());
    h.update(arguments.to_string().as_bytes());
    format!("{MADE_UP_ID}{}", hex::encode(&h.finalize()[..6]))
}

/// A tool call (`index`: its position in the answer; `stamp`: what makes
/// made-up ids differ between answers).
pub(crate) fn tool_call(
    tc: &Value,
    what: &str,
    index: usize,
    stamp: &str,
) -> Result<ToolCall, ModelError> {
    let f = tc
        .get("function")
        .ok_or_else(|| malformed(format!("{what}.function: missing")))?;
    let fw = format!("{what}.function");
    let name = str_field(f, "name", &fw)?;
    let arguments = match f.get("arguments") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(v @ Value::Object(_)) => free_value(v, &format!("{fw}.arguments"))?,
        // Some servers speaking this API write the arguments as JSON text.
        Some(Value::String(s)) => {
            let mut call = ToolCall::new("x", name, Value::Null);
            parlance_model::set_arguments(&mut call, s);
            if call.arguments.is_null() {
                return Err(malformed(format!(
                    "{fw}.arguments: not JSON: {}",
                    s.chars().take(80).collect::<String>()
                )));
            }
            call.arguments
        }
        Some(_) => return Err(malformed(format!("{fw}.arguments: expected an object"))),
    };
    let id = match tc
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        Some(id) => id.to_string(),
        None => made_up_id(stamp, index, name, &arguments),
    };
    Ok(ToolCall::new(id, name, arguments))
}

/// The blocks of a `message` object: thinking, text, tool calls.
/// `first_call`: how many calls came before in the same answer.
/// `streamed`: a piece of a stream (its text is split by the stream's own
/// splitter, a tag may be cut between lines).
pub(crate) fn message_blocks(
    m: &Value,
    what: &str,
    first_call: usize,
    stamp: &str,
    streamed: bool,
) -> Result<Vec<Block>, ModelError> {
    if !m.is_object() {
        return Err(malformed(format!("{what}: expected an object")));
    }
    let mut out = Vec::new();
    let text = |key: &str| -> Result<Option<&str>, ModelError> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str()).filter(|s| !s.is_empty())),
            Some(_) => Err(malformed(format!("{what}.{key}: expected a string"))),
        }
    };
    let thinking = |t: String| {
        Block::Thinking(Thinking {
            thinking: t,
            provider: Some(PROVIDER.into()),
            ..Default::default()
        })
    };
    let field = text("thinking")?;
    if let Some(t) = field {
        out.push(thinking(t.to_string()));
    }
    match text("content")? {
        // A thinking model asked without `think` writes `<think>` tags.
        Some(t) if field.is_none() && !streamed => {
            let (tagged, answer) = crate::think_tags::split(t);
            if let Some(r) = tagged.filter(|r| !r.is_empty()) {
                out.push(thinking(r));
            }
            if !answer.is_empty() {
                out.push(Block::text(answer));
            }
        }
        Some(t) => out.push(Block::text(t)),
        None => {}
    }
    match m.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (i, tc) in calls.iter().enumerate() {
                let call = tool_call(
                    tc,
                    &format!("{what}.tool_calls[{i}]"),
                    first_call + i,
                    stamp,
                )?;
                out.push(Block::ToolCall { tool_call: call });
            }
        }
        Some(_) => return Err(malformed(format!("{what}.tool_calls: expected an array"))),
    }
    Ok(out)
}

/// A response body → the assistant message.
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    crate::wire::checked_message(decode(body)?)
}

fn decode(body: &Value) -> Result<Message, ModelError> {
    if let Some(e) = body.get("error") {
        let body = serde_json::json!({ "error": e }).to_string();
        return Err(super::errors::classify(0, body.as_bytes(), None));
    }
    let m = body
        .get("message")
        .ok_or_else(|| malformed("message: missing (an Ollama chat answer has one)"))?;
    let stamp = opt_str(body, "created_at").unwrap_or_default();
    let blocks = message_blocks(m, "message", 0, &stamp, false)?;
    let raw = opt_str(body, "done_reason");
    let has_calls = blocks.iter().any(|b| matches!(b, Block::ToolCall { .. }));
    let mut msg = Message::new(Role::Assistant, blocks);
    msg.usage = usage(body);
    msg.finish_reason = Some(done_finish(raw.as_deref(), has_calls));
    msg.finish_reason_raw = raw;
    msg.provider = Some(PROVIDER.into());
    msg.model = opt_str(body, "model");
    Ok(msg)
}
