//! Canonical request → Mistral chat completions request body.
//!
//! The tools and options are OpenAI Chat's, written by that adapter and
//! then renamed where Mistral differs (`max_tokens`, `random_seed`, no
//! `stream_options`). The messages are Mistral's own: 9-character call
//! ids, `thinking` chunks sent back, `prefix` on a last assistant message,
//! document URLs, no cache breakpoints.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role};
use parlance_model::{ModelError, ModelRequest};
use serde_json::{Map, Value, json};

use super::ids::call_id;
use super::{NAME, PROVIDER};
use crate::openai_common::arguments_text;
use crate::wire::{Encoded, at, data_url, is_own, json_text, merge_extra, unsupported};

/// Builds the request body for `model`.
pub fn encode_request(
    req: &ModelRequest,
    model: &str,
    stream: bool,
) -> Result<Encoded, ModelError> {
    // Tools and options as OpenAI Chat writes them, from a request with
    // no messages and no extra options (Mistral's own are merged below).
    let mut options = req.options.clone();
    let extra = std::mem::take(&mut options.extra);
    let shell = ModelRequest {
        messages: Vec::new(),
        tools: req.tools.clone(),
        options,
    };
    let chat = crate::openai_chat::encode_request(&shell, model, false)?;
    let Value::Object(mut body) = chat.body else {
        unreachable!("a request body is an object")
    };
    let mut warnings: Vec<String> = chat
        .warnings
        .into_iter()
        // Magistral models return their reasoning: nothing to warn about.
        .filter(|w| !w.starts_with("reasoning.include_thoughts"))
        .map(|w| w.replace("OpenAI Chat", "Mistral"))
        .collect();
    if let Some(n) = body.remove("max_completion_tokens") {
        body.insert("max_tokens".into(), n);
    }
    if let Some(s) = body.remove("seed") {
        body.insert("random_seed".into(), s);
    }
    // Mistral's highest effort is `xhigh`.
    if body.get("reasoning_effort") == Some(&json!("max")) {
        body.insert("reasoning_effort".into(), json!("xhigh"));
        warnings.push("reasoning.effort max sent as xhigh (Mistral's highest level)".into());
    }
    for (i, t) in req.tools.iter().enumerate() {
        if t.cache_point.is_some() {
            warnings.retain(|w| !w.starts_with(&format!("tools[{i}]: cache point")));
            warnings.push(format!(
                "tools[{i}]: cache point dropped: Mistral has no cache breakpoints"
            ));
        }
    }
    let mut messages = Vec::with_capacity(req.messages.len());
    let mut ids = IdCheck::default();
    let last = req.messages.len().checked_sub(1);
    for (mi, m) in req.messages.iter().enumerate() {
        encode_message(
            mi,
            m,
            Some(mi) == last,
            &mut ids,
            &mut messages,
            &mut warnings,
        )?;
    }
    body.insert("messages".into(), Value::Array(messages));
    if stream {
        body.insert("stream".into(), json!(true));
    }
    merge_extra(&mut body, &extra, PROVIDER, NAME);
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

/// Two different call ids of one conversation must not map to the same
/// Mistral id (a one in 10^16 chance, refused rather than sent wrong).
#[derive(Default)]
struct IdCheck(HashMap<String, String>);

impl IdCheck {
    fn map(&mut self, id: &str, where_: &str) -> Result<String, ModelError> {
        let wire = call_id(id);
        match self.0.get(&wire) {
            Some(other) if other != id => Err(unsupported(format!(
                "{where_}: call ids {other:?} and {id:?} both map to Mistral id {wire:?}; rename one"
            ))),
            _ => {
                self.0.insert(wire.clone(), id.to_string());
                Ok(wire)
            }
        }
    }
}

fn cache_dropped(where_: &str, warnings: &mut Vec<String>) {
    warnings.push(format!(
        "{where_}: cache point dropped: Mistral has no cache breakpoints"
    ));
}

fn encode_message(
    mi: usize,
    m: &Message,
    is_last: bool,
    ids: &mut IdCheck,
    out: &mut Vec<Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ModelError> {
    match m.role {
        Role::System => {
            let mut text = String::new();
            for (bi, b) in m.content.iter().enumerate() {
                match b {
                    Block::Text(t) => text.push_str(&t.text),
                    Block::Json { json } => text.push_str(&json_text(json)),
                    Block::CachePoint { .. } => cache_dropped(&at(mi, bi), warnings),
                    other => {
                        return Err(unsupported(format!(
                            "{}: Mistral system messages take only text, not {} blocks",
                            at(mi, bi),
                            other.type_name()
                        )));
                    }
                }
            }
            out.push(json!({"role": "system", "content": text}));
        }
        Role::User => {
            out.push(json!({"role": "user", "content": user_content(mi, &m.content, warnings)?}))
        }
        Role::Assistant => out.push(assistant(mi, m, is_last, ids, warnings)?),
        Role::Tool => {
            for (bi, b) in m.content.iter().enumerate() {
                let w = at(mi, bi);
                match b {
                    Block::ToolResult { tool_result: r } => {
                        let mut text = String::new();
                        for (ci, c) in r.content.iter().enumerate() {
                            match c {
                                Block::Text(t) => text.push_str(&t.text),
                                Block::Json { json } => text.push_str(&json_text(json)),
                                Block::CachePoint { .. } => cache_dropped(
                                    &format!("{w}.tool_result.content[{ci}]"),
                                    warnings,
                                ),
                                other => {
                                    return Err(unsupported(format!(
                                        "{w}.tool_result.content[{ci}]: Mistral tool results take only text, not {} blocks",
                                        other.type_name()
                                    )));
                                }
                            }
                        }
                        let mut msg = Map::new();
                        msg.insert("role".into(), json!("tool"));
                        msg.insert("content".into(), json!(text));
                        msg.insert("tool_call_id".into(), json!(ids.map(&r.tool_call_id, &w)?));
                        if let Some(name) = &r.name {
                            msg.insert("name".into(), json!(name));
                        }
                        out.push(Value::Object(msg));
                    }
                    Block::CachePoint { .. } => cache_dropped(&w, warnings),
                    _ => {
                        return Err(unsupported(format!(
                            "{w}: a call still waiting for approval cannot be sent to a model"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

fn media_part(
    where_: &str,
    block: &Block,
    warnings: &mut Vec<String>,
) -> Result<Value, ModelError> {
    match block {
        Block::Image { image } => {
            let url = match (&image.url, &image.data) {
                (Some(u), _) => u.clone(),
                (None, Some(_)) => data_url(where_, image)?,
                _ => {
                    return Err(unsupported(format!(
                        "{where_}: Mistral takes images by URL or inline data, not file id"
                    )));
                }
            };
            let mut iu = json!({"url": url});
            match image.detail.as_deref() {
                Some(d) if ["low", "auto", "high"].contains(&d) => iu["detail"] = json!(d),
                Some(d) => warnings.push(format!(
                    "{where_}: image detail {d:?} dropped (Mistral takes low, auto or high)"
                )),
                None => {}
            }
            Ok(json!({"type": "image_url", "image_url": iu}))
        }
        Block::File { file } => document(where_, file),
        Block::Audio { audio } => match &audio.data {
            // Mistral's audio chunk is the base64 data alone.
            Some(d) => Ok(json!({"type": "input_audio", "input_audio": d})),
            None => Err(unsupported(format!(
                "{where_}: Mistral takes audio only as inline data"
            ))),
        },
        other => Err(unsupported(format!(
            "{where_}: {} blocks cannot be in a user message",
            other.type_name()
        ))),
    }
}

/// A file: Mistral's uploaded file id, else a document URL (a `data:` URL
/// for inline data).
fn document(where_: &str, file: &Media) -> Result<Value, ModelError> {
    if let (Some(id), true) = (&file.file_id, is_own(&file.provider, PROVIDER)) {
        return Ok(json!({"type": "file", "file_id": id}));
    }
    let url = match (&file.url, &file.data) {
        (Some(u), _) => u.clone(),
        (None, Some(_)) => data_url(where_, file)?,
        _ => {
            return Err(unsupported(format!(
                "{where_}: Mistral takes documents by URL, inline data or a Mistral file id"
            )));
        }
    };
    let mut part = json!({"type": "document_url", "document_url": url});
    if let Some(name) = &file.filename {
        part["document_name"] = json!(name);
    }
    Ok(part)
}

fn user_content(
    mi: usize,
    content: &[Block],
    warnings: &mut Vec<String>,
) -> Result<Value, ModelError> {
    if let [Block::Text(t)] = content {
        return Ok(json!(t.text));
    }
    let mut parts = Vec::with_capacity(content.len());
    for (bi, b) in content.iter().enumerate() {
        let w = at(mi, bi);
        match b {
            Block::Text(t) => parts.push(json!({"type": "text", "text": t.text})),
            Block::Json { json } => parts.push(json!({"type": "text", "text": json_text(json)})),
            Block::CachePoint { .. } => cache_dropped(&w, warnings),
            other => parts.push(media_part(&w, other, warnings)?),
        }
    }
    Ok(Value::Array(parts))
}

/// A thinking block as Mistral's chunk (its signature with it). Only
/// Mistral's own reasoning goes back; another provider's is dropped, text
/// included, by the one rule for foreign reasoning (docs/providers.md).
fn thinking_chunk(
    w: &str,
    t: &parlance_format::Thinking,
    warnings: &mut Vec<String>,
) -> Option<Value> {
    if !is_own(&t.provider, PROVIDER) {
        warnings.push(format!(
            "{w}: thinking from {} dropped (Mistral takes back only its own reasoning)",
            t.provider.as_deref().unwrap_or("an unknown provider")
        ));
        return None;
    }
    if t.redacted.is_some() || t.encrypted_content.is_some() {
        warnings.push(format!(
            "{w}: redacted or encrypted thinking dropped (Mistral has none)"
        ));
        if t.thinking.is_empty() {
            return None;
        }
    }
    let parts = if t.thinking.is_empty() {
        json!([])
    } else {
        json!([{"type": "text", "text": t.thinking}])
    };
    let mut chunk = json!({"type": "thinking", "thinking": parts});
    if let Some(sig) = &t.signature {
        chunk["signature"] = json!(sig);
    }
    Some(chunk)
}

fn assistant(
    mi: usize,
    m: &Message,
    is_last: bool,
    ids: &mut IdCheck,
    warnings: &mut Vec<String>,
) -> Result<Value, ModelError> {
    let mut calls = Vec::new();
    let mut parts = Vec::new();
    let mut has_thinking = false;
    for (bi, b) in m.content.iter().enumerate() {
        let w = at(mi, bi);
        match b {
            Block::Text(t) if !t.text.is_empty() => {
                parts.push(json!({"type": "text", "text": t.text}))
            }
            Block::Text(_) => {}
            Block::Json { json } => parts.push(json!({"type": "text", "text": json_text(json)})),
            Block::CachePoint { .. } => cache_dropped(&w, warnings),
            Block::Thinking(t) => {
                if let Some(chunk) = thinking_chunk(&w, t, warnings) {
                    // Thinking blocks in a row are the parts of one chunk
                    // (as a chunk of several parts is read).
                    let follows = bi > 0 && matches!(m.content[bi - 1], Block::Thinking(_));
                    match parts.last_mut() {
                        Some(last) if follows && last["type"] == "thinking" => {
                            if let (Some(to), Some(from)) = (
                                last["thinking"].as_array_mut(),
                                chunk["thinking"].as_array(),
                            ) {
                                to.extend(from.iter().cloned());
                            }
                            if last.get("signature").is_none()
                                && let Some(sig) = chunk.get("signature")
                            {
                                last["signature"] = sig.clone();
                            }
                        }
                        _ => parts.push(chunk),
                    }
                    has_thinking = true;
                }
            }
            Block::ToolCall { tool_call: c } => {
                if c.signature.is_some() || c.item_id.is_some() {
                    let from = c.provider.as_deref().unwrap_or("another provider");
                    warnings.push(format!("{w}: {from} tool call signature dropped"));
                }
                calls.push(json!({
                    "id": ids.map(&c.id, &w)?,
                    "type": "function",
                    "function": {"name": c.name, "arguments": arguments_text(c)},
                }));
            }
            other => {
                return Err(unsupported(format!(
                    "{w}: Mistral cannot take {} blocks in an assistant message",
                    other.type_name()
                )));
            }
        }
    }
    let mut msg = Map::new();
    msg.insert("role".into(), json!("assistant"));
    let content = if has_thinking {
        Value::Array(parts)
    } else {
        // Plain text as a string, the form every Mistral model takes.
        let text: String = parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .concat();
        if text.is_empty() && !calls.is_empty() {
            Value::Null
        } else {
            json!(text)
        }
    };
    msg.insert("content".into(), content);
    let has_calls = !calls.is_empty();
    if has_calls {
        msg.insert("tool_calls".into(), Value::Array(calls));
    }
    // A conversation ending with an assistant message asks the model to
    // continue it: Mistral requires `prefix: true` there (and refuses a
    // last assistant message without it).
    if is_last && !has_calls {
        msg.insert("prefix".into(), json!(true));
    }
    Ok(Value::Object(msg))
}
