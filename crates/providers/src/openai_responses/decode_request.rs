//! A Responses API request body → canonical (for `parlance convert`): the
//! conversation, tools and options it carries.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role, ToolResult, ToolSpec};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};

use super::PROVIDER;
use super::decode_response::item_blocks;
use crate::wire::{
    DecodedRequest, checked_request, malformed, obj, opt_str, scoped_extra, split_data_url,
    str_field,
};

fn media_from(p: &Value, url_key: &str) -> Media {
    let mut m = Media::default();
    if let Some(u) = p.get(url_key).and_then(Value::as_str) {
        match split_data_url(u) {
            Some((mt, data)) => {
                m.media_type = Some(mt);
                m.data = Some(data);
            }
            None => m.url = Some(u.to_string()),
        }
    } else if let Some(d) = p.get("file_data").and_then(Value::as_str) {
        if let Some((mt, data)) = split_data_url(d) {
            m.media_type = Some(mt);
            m.data = Some(data);
        }
    } else if let Some(id) = p.get("file_id").and_then(Value::as_str) {
        m.file_id = Some(id.to_string());
        m.provider = Some(PROVIDER.into());
    }
    m
}

fn input_blocks(content: &Value, what: &str) -> Result<Vec<Block>, ModelError> {
    match content {
        // Empty text carries nothing (some SDKs replay `content: ""`).
        Value::String(s) if s.is_empty() => Ok(Vec::new()),
        Value::String(s) => Ok(vec![Block::text(s.clone())]),
        Value::Array(parts) => parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let w = format!("{what}[{i}]");
                Ok(match str_field(p, "type", &w)? {
                    "input_text" | "output_text" | "text" => Block::text(str_field(p, "text", &w)?),
                    "input_image" => {
                        let mut m = media_from(p, "image_url");
                        m.detail = opt_str(p, "detail").filter(|d| d != "auto");
                        Block::Image { image: m }
                    }
                    "input_file" => {
                        let mut m = media_from(p, "file_url");
                        m.filename = opt_str(p, "filename");
                        Block::File { file: m }
                    }
                    other => {
                        return Err(malformed(format!(
                            "{w}.type: unsupported content part {other:?}"
                        )));
                    }
                })
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
    let mut messages: Vec<Message> = Vec::new();
    if let Some(i) = b.get("instructions").and_then(Value::as_str) {
        messages.push(Message::system(i));
    }
    let items = match b.get("input") {
        Some(Value::String(s)) => vec![serde_json::json!({"role": "user", "content": s})],
        Some(Value::Array(a)) => a.clone(),
        _ => return Err(malformed("input: expected a string or an array")),
    };
    let mut names: HashMap<String, String> = HashMap::new();
    // Assistant items (reasoning, messages, calls) gather into one
    // assistant message until another role speaks.
    fn assistant_tail(messages: &mut Vec<Message>) -> &mut Message {
        if messages.last().map(|m| m.role) != Some(Role::Assistant) {
            messages.push(Message::new(Role::Assistant, Vec::new()));
        }
        messages.last_mut().expect("pushed")
    }
    for (i, item) in items.iter().enumerate() {
        let what = format!("input[{i}]");
        let ty = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match ty {
            "message" => {
                let role = str_field(item, "role", &what)?;
                let content = item.get("content").unwrap_or(&Value::Null);
                match role {
                    "assistant" => {
                        let blocks = if item.get("id").is_some() {
                            item_blocks(item, &what)?
                        } else {
                            input_blocks(content, &format!("{what}.content"))?
                        };
                        assistant_tail(&mut messages).content.extend(blocks);
                    }
                    "user" => messages.push(Message::new(
                        Role::User,
                        input_blocks(content, &format!("{what}.content"))?,
                    )),
                    "system" | "developer" => messages.push(Message::new(
                        Role::System,
                        input_blocks(content, &format!("{what}.content"))?,
                    )),
                    other => return Err(malformed(format!("{what}.role: unknown role {other:?}"))),
                }
            }
            "reasoning" | "function_call" => {
                let blocks = item_blocks(item, &what)?;
                for b in &blocks {
                    if let Block::ToolCall { tool_call } = b {
                        names.insert(tool_call.id.clone(), tool_call.name.clone());
                    }
                }
                assistant_tail(&mut messages).content.extend(blocks);
            }
            "function_call_output" => {
                let id = str_field(item, "call_id", &what)?.to_string();
                let content = input_blocks(
                    item.get("output").unwrap_or(&Value::Null),
                    &format!("{what}.output"),
                )?;
                let result = Block::tool_result(ToolResult {
                    name: names.get(&id).cloned(),
                    tool_call_id: id,
                    content,
                    status: Default::default(),
                    artifact: None,
                    approval: None,
                });
                match messages.last_mut() {
                    Some(last) if last.role == Role::Tool => last.content.push(result),
                    _ => messages.push(Message::new(Role::Tool, vec![result])),
                }
            }
            other => {
                return Err(malformed(format!(
                    "{what}.type: unsupported input item {other:?}"
                )));
            }
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
        if t.get("type").and_then(Value::as_str) != Some("function") {
            return Err(malformed(format!(
                "{what}: built-in tools are not supported yet"
            )));
        }
        tools.push(ToolSpec {
            name: str_field(t, "name", &what)?.to_string(),
            description: opt_str(t, "description"),
            input_schema: t
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object"})),
            strict: t.get("strict").and_then(Value::as_bool),
            cache_point: None,
        });
    }
    let mut o = ModelOptions::default();
    let mut extra = Map::new();
    let mut stream = false;
    for (k, v) in b {
        match k.as_str() {
            "model" | "input" | "tools" | "instructions" => {}
            "tool_choice" => {
                o.tool_choice = Some(match v {
                    Value::String(s) if s == "none" => ToolChoice::None,
                    Value::String(s) if s == "required" => ToolChoice::Required,
                    Value::String(_) => ToolChoice::Auto,
                    other => ToolChoice::Tool(str_field(other, "name", "tool_choice")?.to_string()),
                })
            }
            "parallel_tool_calls" => o.parallel_tool_calls = v.as_bool(),
            "max_output_tokens" => o.max_tokens = v.as_u64().map(|n| n as u32),
            "temperature" => o.temperature = v.as_f64(),
            "top_p" => o.top_p = v.as_f64(),
            "stream" => stream = v.as_bool().unwrap_or(false),
            "reasoning" => {
                let mut r = Reasoning::default();
                if let Some(e) = v.get("effort").and_then(Value::as_str) {
                    r.effort = Some(Effort::parse(e).ok_or_else(|| {
                        malformed(format!("reasoning.effort: unknown effort {e:?}"))
                    })?);
                }
                r.include_thoughts = v.get("summary").is_some_and(|s| !s.is_null());
                o.reasoning = Some(r);
            }
            "text" if v.pointer("/format/type").and_then(Value::as_str) == Some("json_schema") => {
                let f = &v["format"];
                o.output_schema = Some(OutputSchema {
                    name: opt_str(f, "name").unwrap_or_else(|| "output".into()),
                    schema: f.get("schema").cloned().unwrap_or(Value::Bool(true)),
                });
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
