//! Chat Completions response / request body → canonical.

use std::collections::HashMap;

use parlance_format::{
    Block, FinishReason, Media, Message, Role, ToolCall, ToolResult, ToolSpec, Usage,
};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
    set_arguments,
};
use serde_json::{Map, Value};

use super::PROVIDER;
use crate::wire::{
    DecodedRequest, malformed, obj, opt_str, scoped_extra, split_data_url, str_field, u64_at,
};

/// `finish_reason` → canonical.
pub fn finish_reason(raw: &str) -> FinishReason {
    match raw {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    }
}

/// `usage` → canonical (OpenAI's prompt count already includes cached tokens).
pub fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(u, &["prompt_tokens"]).unwrap_or(0),
        output_tokens: u64_at(u, &["completion_tokens"]).unwrap_or(0),
        cached_tokens: u64_at(u, &["prompt_tokens_details", "cached_tokens"]).unwrap_or(0),
        cache_write_tokens: u64_at(u, &["prompt_tokens_details", "cache_write_tokens"])
            .filter(|n| *n > 0),
        reasoning_tokens: u64_at(u, &["completion_tokens_details", "reasoning_tokens"]),
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

/// A response body → the assistant message.
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| malformed("choices: expected at least one choice"))?;
    let m = choice
        .get("message")
        .ok_or_else(|| malformed("choices[0].message: missing"))?;
    let mut content = Vec::new();
    if let Some(r) = reasoning_text(m) {
        content.push(Block::thinking(r));
    }
    match m.get("content") {
        Some(Value::String(s)) if !s.is_empty() => content.push(Block::text(s.clone())),
        Some(Value::Array(parts)) => {
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
    msg.usage = body.get("usage").filter(|u| u.is_object()).map(usage);
    msg.finish_reason = raw.map(|r| {
        if refusal.is_some() {
            FinishReason::ContentFilter
        } else {
            finish_reason(r)
        }
    });
    msg.finish_reason_raw = raw.map(str::to_string);
    msg.provider = Some(PROVIDER.into());
    msg.model = opt_str(body, "model");
    Ok(msg)
}

fn media_from_url(url: &str, detail: Option<String>) -> Media {
    match split_data_url(url) {
        Some((media_type, data)) => Media {
            data: Some(data),
            media_type: Some(media_type),
            detail,
            ..Media::default()
        },
        None => Media {
            url: Some(url.to_string()),
            detail,
            ..Media::default()
        },
    }
}

fn content_blocks(v: &Value, what: &str) -> Result<Vec<Block>, ModelError> {
    match v {
        Value::Null => Ok(Vec::new()),
        // Empty text carries nothing (some SDKs replay `content: ""`).
        Value::String(s) if s.is_empty() => Ok(Vec::new()),
        Value::String(s) => Ok(vec![Block::text(s.clone())]),
        Value::Array(parts) => parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let w = format!("{what}[{i}]");
                match str_field(p, "type", &w)? {
                    "text" | "input_text" => Ok(Block::text(str_field(p, "text", &w)?)),
                    "image_url" => {
                        let iu = p
                            .get("image_url")
                            .ok_or_else(|| malformed(format!("{w}.image_url: missing")))?;
                        let url = match iu {
                            Value::String(s) => s.as_str(),
                            other => str_field(other, "url", &format!("{w}.image_url"))?,
                        };
                        Ok(Block::Image {
                            image: media_from_url(url, opt_str(iu, "detail")),
                        })
                    }
                    "input_audio" => {
                        let a = p
                            .get("input_audio")
                            .ok_or_else(|| malformed(format!("{w}.input_audio: missing")))?;
                        let format = str_field(a, "format", &w)?;
                        Ok(Block::Audio {
                            audio: Media {
                                data: Some(str_field(a, "data", &w)?.to_string()),
                                media_type: Some(if format == "mp3" {
                                    "audio/mpeg".into()
                                } else {
                                    format!("audio/{format}")
                                }),
                                ..Media::default()
                            },
                        })
                    }
                    "file" => {
                        let f = p
                            .get("file")
                            .ok_or_else(|| malformed(format!("{w}.file: missing")))?;
                        let mut m = match (opt_str(f, "file_data"), opt_str(f, "file_id")) {
                            (Some(d), _) => match split_data_url(&d) {
                                Some((mt, data)) => Media {
                                    data: Some(data),
                                    media_type: Some(mt),
                                    ..Media::default()
                                },
                                None => {
                                    return Err(malformed(format!(
                                        "{w}.file.file_data: expected a data URL"
                                    )));
                                }
                            },
                            (None, Some(id)) => Media {
                                file_id: Some(id),
                                provider: Some(PROVIDER.into()),
                                ..Media::default()
                            },
                            _ => {
                                return Err(malformed(format!(
                                    "{w}.file: expected file_data or file_id"
                                )));
                            }
                        };
                        m.filename = opt_str(f, "filename");
                        Ok(Block::File { file: m })
                    }
                    other => Err(malformed(format!(
                        "{w}.type: unsupported content part {other:?}"
                    ))),
                }
            })
            .collect(),
        _ => Err(malformed(format!(
            "{what}: expected a string or a list of parts"
        ))),
    }
}

/// A request body → the conversation, tools and options it carries.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    let b = obj(body, "request")?;
    let msgs = b
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("messages: expected an array"))?;
    let mut messages: Vec<Message> = Vec::new();
    let mut names: HashMap<String, String> = HashMap::new();
    for (i, m) in msgs.iter().enumerate() {
        let what = format!("messages[{i}]");
        let role = str_field(m, "role", &what)?;
        let content = m.get("content").unwrap_or(&Value::Null);
        match role {
            "system" | "developer" => messages.push(Message::new(
                Role::System,
                content_blocks(content, &format!("{what}.content"))?,
            )),
            "user" => messages.push(Message::new(
                Role::User,
                content_blocks(content, &format!("{what}.content"))?,
            )),
            "assistant" => {
                let mut blocks = Vec::new();
                if let Some(r) = reasoning_text(m) {
                    blocks.push(Block::thinking(r));
                }
                blocks.extend(content_blocks(content, &format!("{what}.content"))?);
                for (j, tc) in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let call = tool_call(tc, &format!("{what}.tool_calls[{j}]"))?;
                    names.insert(call.id.clone(), call.name.clone());
                    blocks.push(Block::ToolCall { tool_call: call });
                }
                messages.push(Message::new(Role::Assistant, blocks));
            }
            "tool" => {
                let id = str_field(m, "tool_call_id", &what)?.to_string();
                let result = Block::tool_result(ToolResult {
                    name: names.get(&id).cloned(),
                    tool_call_id: id,
                    content: content_blocks(content, &format!("{what}.content"))?,
                    status: Default::default(),
                    artifact: None,
                    approval: None,
                });
                // Consecutive tool messages answer one turn: one canonical message.
                match messages.last_mut() {
                    Some(last) if last.role == Role::Tool => last.content.push(result),
                    _ => messages.push(Message::new(Role::Tool, vec![result])),
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
        let f = t
            .get("function")
            .ok_or_else(|| malformed(format!("{what}.function: missing")))?;
        tools.push(ToolSpec {
            name: str_field(f, "name", &what)?.to_string(),
            description: opt_str(f, "description"),
            input_schema: f
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object"})),
            strict: f.get("strict").and_then(Value::as_bool),
        });
    }
    let mut o = ModelOptions::default();
    let mut extra = Map::new();
    let mut stream = false;
    for (k, v) in b {
        match k.as_str() {
            "model" | "messages" | "tools" => {}
            "tool_choice" => {
                o.tool_choice = Some(match v {
                    Value::String(s) if s == "none" => ToolChoice::None,
                    Value::String(s) if s == "required" => ToolChoice::Required,
                    Value::String(_) => ToolChoice::Auto,
                    other => ToolChoice::Tool(
                        other
                            .pointer("/function/name")
                            .and_then(Value::as_str)
                            .ok_or_else(|| {
                                malformed("tool_choice.function.name: expected a string")
                            })?
                            .to_string(),
                    ),
                })
            }
            "max_completion_tokens" | "max_tokens" => o.max_tokens = v.as_u64().map(|n| n as u32),
            "temperature" => o.temperature = v.as_f64(),
            "top_p" => o.top_p = v.as_f64(),
            "seed" => o.seed = v.as_u64(),
            "parallel_tool_calls" => o.parallel_tool_calls = v.as_bool(),
            "stop" => {
                o.stop = match v {
                    Value::String(s) => vec![s.clone()],
                    Value::Array(a) => a
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect(),
                    _ => Vec::new(),
                }
            }
            "reasoning_effort" => {
                let effort = v.as_str().and_then(Effort::parse);
                match effort {
                    Some(e) => {
                        o.reasoning = Some(Reasoning {
                            effort: Some(e),
                            ..Reasoning::default()
                        })
                    }
                    None => {
                        extra.insert(k.clone(), v.clone());
                    }
                }
            }
            "response_format" if v.get("type").and_then(Value::as_str) == Some("json_schema") => {
                let js = &v["json_schema"];
                o.output_schema = Some(OutputSchema {
                    name: opt_str(js, "name").unwrap_or_else(|| "output".into()),
                    schema: js.get("schema").cloned().unwrap_or(Value::Bool(true)),
                });
            }
            "stream" => stream = v.as_bool().unwrap_or(false),
            "stream_options" => {}
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

/// An error answer → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<std::time::Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let e = v.get("error").unwrap_or(&Value::Null);
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(300).collect());
    let code = e.get("code").and_then(Value::as_str).unwrap_or("");
    let ty = e.get("type").and_then(Value::as_str).unwrap_or("");
    from_error(status, code, ty, message, retry_after)
}

pub(crate) fn from_error(
    status: u16,
    code: &str,
    ty: &str,
    message: String,
    retry_after: Option<std::time::Duration>,
) -> ModelError {
    if code == "insufficient_quota" || ty == "insufficient_quota" {
        return ModelError::QuotaExceeded { message };
    }
    if code == "context_length_exceeded" {
        return ModelError::ContextTooLong { message };
    }
    match status {
        401 => ModelError::Authentication { message },
        403 => ModelError::Permission { message },
        429 => ModelError::RateLimited {
            message,
            retry_after,
        },
        503 => ModelError::Overloaded {
            message,
            retry_after,
        },
        400 | 404 | 409 | 413 | 422 => ModelError::InvalidRequest { message },
        s if s >= 500 || s == 408 => ModelError::Server { status: s, message },
        // In-stream errors carry no status: judge by their type.
        _ => match ty {
            "rate_limit_exceeded" | "rate_limit_error" => ModelError::RateLimited {
                message,
                retry_after,
            },
            "server_error" | "api_error" => ModelError::Server {
                status: 500,
                message,
            },
            _ => ModelError::InvalidRequest { message },
        },
    }
}
