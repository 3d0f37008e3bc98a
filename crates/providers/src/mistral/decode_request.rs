//! A Mistral request body → canonical (for `parlance convert`).
//!
//! Read by OpenAI Chat's decoder after the body is put in OpenAI's words;
//! what OpenAI has no words for (`thinking`, `document_url`, `file` and
//! `input_audio` chunks) stands in as a marked text part and is put back
//! as its canonical block afterwards, at the same place. `prefix: true` on
//! the last assistant message is what a conversation ending with an
//! assistant message means (it is written back so); anywhere else it is
//! named in a warning. Mistral's own top-level fields (`safe_prompt`,
//! `prompt_mode`, `guardrails`, `prediction`…) are kept for this API
//! (`extra.mistral`). Errors and warnings name the field's path in the
//! Mistral body.

use parlance_format::{Block, Media, Message};
use parlance_model::ModelError;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::NAME;
use super::decode_response::thinking_blocks;
use crate::wire::{DecodedRequest, checked_request, malformed, obj, opt_str, str_field};

/// What stands in for a chunk OpenAI has no part for: a text no request
/// can hold, as it names a hash of the request itself.
fn mark(body: &Value) -> String {
    let hash = Sha256::digest(body.to_string().as_bytes());
    format!("\u{0}mistral-chunk-{}:", hex::encode(&hash[..8]))
}

/// A request body → the conversation, tools and options it carries.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    checked_request(body, decode)
}

fn decode(body: &Value) -> Result<DecodedRequest, ModelError> {
    obj(body, "request")?;
    let mark = mark(body);
    let mut chat = body.clone();
    let mut stand_ins: Vec<Vec<Block>> = Vec::new();
    let mut warnings = Vec::new();
    let b = chat.as_object_mut().expect("an object");
    if let Some(s) = b.remove("random_seed") {
        b.insert("seed".into(), s);
    }
    if let Some(n) = b.remove("max_tokens") {
        b.insert("max_completion_tokens".into(), n);
    }
    if b.get("tool_choice").and_then(Value::as_str) == Some("any") {
        // Mistral's older name for `required`.
        b.insert("tool_choice".into(), json!("required"));
    }
    let msgs = b
        .get_mut("messages")
        .and_then(Value::as_array_mut)
        .ok_or_else(|| malformed("messages: expected an array"))?;
    let last = msgs.len().checked_sub(1);
    for (i, m) in msgs.iter_mut().enumerate() {
        let what = format!("messages[{i}]");
        let Some(mo) = m.as_object_mut() else {
            return Err(malformed(format!("{what}: expected an object")));
        };
        let role = mo
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if role == "assistant" {
            match mo.remove("prefix") {
                Some(Value::Bool(true)) if Some(i) != last => warnings.push(format!(
                    "{what}.prefix: dropped: only the last message can be a prefix (a conversation ending with an assistant message is one)"
                )),
                Some(Value::Bool(false)) if Some(i) == last => warnings.push(format!(
                    "{what}.prefix: false on the last message read as a prefix (Mistral takes a last assistant message only as one; written back as true)"
                )),
                Some(Value::Bool(_)) | Some(Value::Null) | None => {}
                Some(_) => return Err(malformed(format!("{what}.prefix: expected a boolean"))),
            }
            if let Some(Value::Array(calls)) = mo.get_mut("tool_calls") {
                for (j, tc) in calls.iter_mut().enumerate() {
                    let w = format!("{what}.tool_calls[{j}]");
                    let Some(tco) = tc.as_object_mut() else {
                        return Err(malformed(format!("{w}: expected an object")));
                    };
                    // The position in a streamed answer: nothing to keep.
                    tco.remove("index");
                    if let Some(args) = tc.pointer_mut("/function/arguments")
                        && args.is_object()
                    {
                        *args = json!(args.to_string());
                    }
                }
            }
        }
        if role == "tool" {
            // The tool's name: canonical results take it from their call.
            mo.remove("name");
        }
        if let Some(Value::Array(parts)) = mo.get_mut("content") {
            for (j, p) in parts.iter_mut().enumerate() {
                let w = format!("{what}.content[{j}]");
                if let Some(block) = stand_in(p, &w, &mut warnings)? {
                    *p = json!({"type": "text", "text": format!("{mark}{}", stand_ins.len())});
                    stand_ins.push(block);
                }
            }
        }
    }
    let mut decoded = crate::openai_chat::decode_request(&chat)?;
    for m in &mut decoded.request.messages {
        put_back(m, &mark, &stand_ins)?;
    }
    // Fields with no canonical name are this API's, not OpenAI Chat's.
    let extra = &mut decoded.request.options.extra;
    if let Some(own) = extra.remove(crate::openai_chat::NAME) {
        extra.insert(NAME.into(), own);
    }
    warnings.append(&mut decoded.warnings);
    decoded.warnings = warnings;
    Ok(decoded)
}

/// The canonical block for a chunk OpenAI Chat has no part for.
fn stand_in(
    p: &Value,
    w: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<Vec<Block>>, ModelError> {
    let unread = |p: &Value, read: &[&str], warnings: &mut Vec<String>| {
        crate::wire::unread(p, read, w, &[], warnings)
    };
    Ok(Some(vec![match p.get("type").and_then(Value::as_str) {
        Some("thinking") => {
            unread(p, &["type", "thinking", "signature", "closed"], warnings);
            for (k, part) in p
                .get("thinking")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let pw = format!("{w}.thinking[{k}]");
                match part.get("type").and_then(Value::as_str).unwrap_or("text") {
                    "text" => crate::wire::unread(part, &["type", "text"], &pw, &[], warnings),
                    other => warnings.push(format!(
                        "{pw}: dropped: a {other} chunk in reasoning has no canonical form (only its text parts are kept)"
                    )),
                }
            }
            if p.get("closed") == Some(&json!(false)) {
                warnings.push(format!(
                    "{w}.closed: an unfinished thinking chunk read as finished"
                ));
            }
            return Ok(Some(
                thinking_blocks(p, w)?
                    .into_iter()
                    .map(Block::Thinking)
                    .collect(),
            ));
        }
        Some("document_url") => {
            unread(p, &["type", "document_url", "document_name"], warnings);
            let url = str_field(p, "document_url", w)?;
            let mut m = match crate::wire::split_data_url(url) {
                Some((media_type, data)) => Media {
                    data: Some(data),
                    media_type: Some(media_type),
                    ..Media::default()
                },
                None => Media {
                    url: Some(url.to_string()),
                    ..Media::default()
                },
            };
            m.filename = opt_str(p, "document_name");
            Block::File { file: m }
        }
        Some("file") => {
            unread(p, &["type", "file_id"], warnings);
            Block::File {
                file: Media {
                    file_id: Some(str_field(p, "file_id", w)?.to_string()),
                    provider: Some(super::PROVIDER.into()),
                    ..Media::default()
                },
            }
        }
        Some("input_audio") => {
            unread(p, &["type", "input_audio"], warnings);
            let data = str_field(p, "input_audio", w)?;
            warnings.push(format!(
                "{w}.input_audio: audio of unknown type read as audio/wav (Mistral sends no media type)"
            ));
            Block::Audio {
                audio: Media {
                    data: Some(data.to_string()),
                    media_type: Some("audio/wav".into()),
                    ..Media::default()
                },
            }
        }
        _ => return Ok(None),
    }]))
}

/// Replaces the stand-in text parts by their blocks.
fn put_back(m: &mut Message, mark: &str, stand_ins: &[Vec<Block>]) -> Result<(), ModelError> {
    fn walk(
        blocks: &mut Vec<Block>,
        mark: &str,
        stand_ins: &[Vec<Block>],
    ) -> Result<(), ModelError> {
        let mut out = Vec::with_capacity(blocks.len());
        for mut b in std::mem::take(blocks) {
            match &mut b {
                Block::Text(t) if t.text.starts_with(mark) => {
                    let i: usize = t.text[mark.len()..]
                        .parse()
                        .map_err(|_| malformed("a text part looks like a stand-in"))?;
                    let with = stand_ins
                        .get(i)
                        .ok_or_else(|| malformed("a text part looks like a stand-in"))?;
                    out.extend(with.iter().cloned());
                    continue;
                }
                Block::ToolResult { tool_result } => {
                    walk(&mut tool_result.content, mark, stand_ins)?
                }
                _ => {}
            }
            out.push(b);
        }
        *blocks = out;
        Ok(())
    }
    walk(&mut m.content, mark, stand_ins)
}
