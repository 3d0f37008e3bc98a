//! Messages API response / request body → canonical.

use std::collections::HashMap;

use parlance_format::{
    Block, FinishReason, Media, Message, Role, Thinking, ToolCall, ToolResult, ToolSpec,
    ToolStatus, Usage,
};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};

use super::PROVIDER;
use crate::wire::{DecodedRequest, malformed, obj, opt_str, scoped_extra, str_field, u64_at};

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
        input_tokens: uncached + read + write.unwrap_or(0),
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
                b.get("input")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
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
    msg.provider = Some(PROVIDER.into());
    msg.model = opt_str(body, "model");
    Ok(msg)
}

fn media(source: &Value, what: &str) -> Result<Media, ModelError> {
    Ok(match str_field(source, "type", what)? {
        "base64" => Media {
            data: Some(str_field(source, "data", what)?.to_string()),
            media_type: opt_str(source, "media_type"),
            ..Media::default()
        },
        "url" => Media {
            url: Some(str_field(source, "url", what)?.to_string()),
            ..Media::default()
        },
        "file" => Media {
            file_id: Some(str_field(source, "file_id", what)?.to_string()),
            provider: Some(PROVIDER.into()),
            ..Media::default()
        },
        other => {
            return Err(malformed(format!(
                "{what}.type: unsupported source {other:?}"
            )));
        }
    })
}

fn input_block(b: &Value, what: &str) -> Result<Block, ModelError> {
    match str_field(b, "type", what)? {
        "image" => Ok(Block::Image {
            image: media(
                b.get("source").unwrap_or(&Value::Null),
                &format!("{what}.source"),
            )?,
        }),
        "document" => {
            let mut m = media(
                b.get("source").unwrap_or(&Value::Null),
                &format!("{what}.source"),
            )?;
            m.filename = opt_str(b, "title");
            Ok(Block::File { file: m })
        }
        _ => block(b, what)?.ok_or_else(|| malformed(format!("{what}: empty block"))),
    }
}

fn blocks_of(content: &Value, what: &str) -> Result<Vec<Value>, ModelError> {
    Ok(match content {
        Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
        Value::Array(a) => a.clone(),
        _ => return Err(malformed(format!("{what}: expected a string or an array"))),
    })
}

/// A request body → the conversation, tools and options it carries.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    let b = obj(body, "request")?;
    let mut messages = Vec::new();
    match b.get("system") {
        Some(Value::String(s)) => messages.push(Message::system(s.clone())),
        Some(Value::Array(parts)) => {
            for p in parts {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    messages.push(Message::system(t));
                }
            }
        }
        _ => {}
    }
    let mut names: HashMap<String, String> = HashMap::new();
    let msgs = b
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("messages: expected an array"))?;
    for (i, m) in msgs.iter().enumerate() {
        let what = format!("messages[{i}]");
        let role = str_field(m, "role", &what)?;
        let parts = blocks_of(
            m.get("content").unwrap_or(&Value::Null),
            &format!("{what}.content"),
        )?;
        match role {
            "assistant" => {
                let mut blocks = Vec::new();
                for (j, p) in parts.iter().enumerate() {
                    if let Some(bl) = block(p, &format!("{what}.content[{j}]"))? {
                        if let Block::ToolCall { tool_call } = &bl {
                            names.insert(tool_call.id.clone(), tool_call.name.clone());
                        }
                        blocks.push(bl);
                    }
                }
                messages.push(Message::new(Role::Assistant, blocks));
            }
            "user" => {
                // Tool results become a tool message; the rest a user message after it.
                let mut results = Vec::new();
                let mut rest = Vec::new();
                for (j, p) in parts.iter().enumerate() {
                    let w = format!("{what}.content[{j}]");
                    if p.get("type").and_then(Value::as_str) == Some("tool_result") {
                        let id = str_field(p, "tool_use_id", &w)?.to_string();
                        let mut content = Vec::new();
                        for (k, c) in blocks_of(
                            p.get("content").unwrap_or(&Value::String(String::new())),
                            &w,
                        )?
                        .iter()
                        .enumerate()
                        {
                            content.push(input_block(c, &format!("{w}.content[{k}]"))?);
                        }
                        if let [Block::Text(t)] = content.as_slice()
                            && t.text.is_empty()
                        {
                            content.clear();
                        }
                        let is_error = p.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                        results.push(Block::tool_result(ToolResult {
                            name: names.get(&id).cloned(),
                            tool_call_id: id,
                            content,
                            status: if is_error {
                                ToolStatus::Error
                            } else {
                                ToolStatus::Ok
                            },
                            artifact: None,
                            approval: None,
                        }));
                    } else {
                        rest.push(input_block(p, &w)?);
                    }
                }
                if !results.is_empty() {
                    messages.push(Message::new(Role::Tool, results));
                }
                if !rest.is_empty() {
                    messages.push(Message::new(Role::User, rest));
                }
            }
            other => return Err(malformed(format!("{what}.role: unknown role {other:?}"))),
        }
    }
    let mut tools = Vec::new();
    for (i, t) in b
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let what = format!("tools[{i}]");
        if t.get("input_schema").is_none() {
            return Err(malformed(format!(
                "{what}: server tools are not supported by convert yet"
            )));
        }
        tools.push(ToolSpec {
            name: str_field(t, "name", &what)?.to_string(),
            description: opt_str(t, "description"),
            input_schema: t["input_schema"].clone(),
            strict: t.get("strict").and_then(Value::as_bool),
        });
    }
    let mut o = ModelOptions::default();
    let mut extra = Map::new();
    let mut stream = false;
    for (k, v) in b {
        match k.as_str() {
            "model" | "messages" | "tools" | "system" => {}
            "max_tokens" => o.max_tokens = v.as_u64().map(|n| n as u32),
            "temperature" => o.temperature = v.as_f64(),
            "top_p" => o.top_p = v.as_f64(),
            "top_k" => o.top_k = v.as_u64().map(|n| n as u32),
            "stop_sequences" => {
                o.stop = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            }
            "stream" => stream = v.as_bool().unwrap_or(false),
            "tool_choice" => {
                o.tool_choice = Some(match v.get("type").and_then(Value::as_str) {
                    Some("any") => ToolChoice::Required,
                    Some("none") => ToolChoice::None,
                    Some("tool") => {
                        ToolChoice::Tool(str_field(v, "name", "tool_choice")?.to_string())
                    }
                    _ => ToolChoice::Auto,
                });
                if v.get("disable_parallel_tool_use").and_then(Value::as_bool) == Some(true) {
                    o.parallel_tool_calls = Some(false);
                }
            }
            "thinking" => match v.get("type").and_then(Value::as_str) {
                Some("enabled") => {
                    o.reasoning
                        .get_or_insert_with(Reasoning::default)
                        .budget_tokens = v
                        .get("budget_tokens")
                        .and_then(Value::as_u64)
                        .map(|n| n as u32);
                }
                Some("adaptive") => {
                    o.reasoning
                        .get_or_insert_with(Reasoning::default)
                        .include_thoughts = true;
                }
                _ => {
                    extra.insert(k.clone(), v.clone());
                }
            },
            "output_config" => {
                if let Some(e) = v.get("effort").and_then(Value::as_str) {
                    match Effort::parse(e) {
                        Some(effort) => {
                            o.reasoning.get_or_insert_with(Reasoning::default).effort = Some(effort)
                        }
                        None => {
                            return Err(malformed(format!(
                                "output_config.effort: unknown effort {e:?}"
                            )));
                        }
                    }
                }
                if let Some(f) = v.get("format") {
                    o.output_schema = Some(OutputSchema {
                        name: "output".into(),
                        schema: f.get("schema").cloned().unwrap_or(Value::Bool(true)),
                    });
                }
            }
            _ => {
                extra.insert(k.clone(), v.clone());
            }
        }
    }
    o.extra = scoped_extra(extra, PROVIDER);
    Ok(DecodedRequest {
        model: opt_str(body, "model"),
        stream,
        request: ModelRequest {
            messages,
            tools,
            options: o,
        },
    })
}

/// An error body (HTTP or in-stream `error` event) → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<std::time::Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let e = v.get("error").unwrap_or(&Value::Null);
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(300).collect());
    let ty = e.get("type").and_then(Value::as_str).unwrap_or("");
    from_error(status, ty, message, retry_after)
}

pub(crate) fn from_error(
    status: u16,
    ty: &str,
    message: String,
    retry_after: Option<std::time::Duration>,
) -> ModelError {
    match (ty, status) {
        ("invalid_request_error", _) if message.contains("prompt is too long") => {
            ModelError::ContextTooLong { message }
        }
        ("authentication_error", _) | (_, 401) => ModelError::Authentication { message },
        ("permission_error", _) | ("billing_error", _) | (_, 403) => {
            ModelError::Permission { message }
        }
        ("rate_limit_error", _) | (_, 429) => ModelError::RateLimited {
            message,
            retry_after,
        },
        ("overloaded_error", _) | (_, 529) => ModelError::Overloaded {
            message,
            retry_after,
        },
        ("api_error", _) | ("timeout_error", _) => ModelError::Server {
            status: if status >= 500 { status } else { 500 },
            message,
        },
        (_, s) if s >= 500 || s == 408 || s == 409 => ModelError::Server { status: s, message },
        _ => ModelError::InvalidRequest { message },
    }
}
