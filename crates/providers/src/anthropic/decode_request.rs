//! A Messages API request body → canonical (for `parlance convert`): the
//! conversation, tools and options it carries.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role, ToolResult, ToolSpec, ToolStatus};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};

use super::PROVIDER;
use super::decode_response::block;
use crate::wire::{
    DecodedRequest, checked_request, malformed, obj, opt_str, scoped_extra, str_field,
};

fn media(source: &Value, what: &str) -> Result<Media, ModelError> {
    Ok(match str_field(source, "type", what)? {
        "base64" => Media {
            data: Some(str_field(source, "data", what)?.to_string()),
            // Required by the API and by the canonical reader.
            media_type: Some(str_field(source, "media_type", what)?.to_string()),
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
    checked_request(body, decode)
}

fn decode(body: &Value) -> Result<DecodedRequest, ModelError> {
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
            cache_point: None,
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
