//! A Chat Completions request body → canonical (for `parlance convert`):
//! the conversation, tools and options it carries.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role, ToolResult, ToolSpec};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};

use super::PROVIDER;
use super::decode_response::{reasoning_text, tool_call};
use crate::wire::{
    DecodedRequest, checked_request, malformed, obj, opt_str, scoped_extra, split_data_url,
    str_field,
};

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
    checked_request(body, decode)
}

fn decode(body: &Value) -> Result<DecodedRequest, ModelError> {
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
            cache_point: None,
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
