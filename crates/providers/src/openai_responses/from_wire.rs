//! Responses API response / request body → canonical.

use std::collections::HashMap;

use parlance_format::{
    Block, FinishReason, Media, Message, Role, Text, Thinking, ToolCall, ToolResult, ToolSpec,
    Usage,
};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
    set_arguments,
};
use serde_json::{Map, Value};

use super::PROVIDER;
use crate::openai_chat::from_wire::from_error;
use crate::wire::{
    DecodedRequest, malformed, obj, opt_str, scoped_extra, split_data_url, str_field, u64_at,
};

/// `usage` → canonical (input includes cached tokens; output includes reasoning).
pub fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(u, &["input_tokens"]).unwrap_or(0),
        output_tokens: u64_at(u, &["output_tokens"]).unwrap_or(0),
        cached_tokens: u64_at(u, &["input_tokens_details", "cached_tokens"]).unwrap_or(0),
        cache_write_tokens: u64_at(u, &["input_tokens_details", "cache_write_tokens"])
            .filter(|n| *n > 0),
        reasoning_tokens: u64_at(u, &["output_tokens_details", "reasoning_tokens"]),
    }
}

/// One output item → canonical blocks (a reasoning item gives one block
/// per summary part, all with the item's id; the first keeps the
/// encrypted content).
pub fn item_blocks(item: &Value, what: &str) -> Result<Vec<Block>, ModelError> {
    match str_field(item, "type", what)? {
        "reasoning" => {
            let id = opt_str(item, "id");
            let parts: Vec<String> = item
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p.get("text").and_then(Value::as_str).map(str::to_string))
                .collect();
            let parts = if parts.is_empty() {
                vec![String::new()]
            } else {
                parts
            };
            Ok(parts
                .into_iter()
                .enumerate()
                .map(|(i, text)| {
                    Block::Thinking(Thinking {
                        thinking: text,
                        encrypted_content: if i == 0 {
                            opt_str(item, "encrypted_content")
                        } else {
                            None
                        },
                        item_id: id.clone(),
                        provider: Some(PROVIDER.into()),
                        ..Thinking::default()
                    })
                })
                .collect())
        }
        "message" => {
            let id = opt_str(item, "id");
            let mut out = Vec::new();
            for (i, c) in item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let text = match c.get("type").and_then(Value::as_str) {
                    Some("output_text") | Some("input_text") => {
                        str_field(c, "text", &format!("{what}.content[{i}]"))?
                    }
                    Some("refusal") => str_field(c, "refusal", &format!("{what}.content[{i}]"))?,
                    other => {
                        return Err(malformed(format!(
                            "{what}.content[{i}].type: unsupported {other:?}"
                        )));
                    }
                };
                out.push(Block::Text(Text {
                    text: text.to_string(),
                    signature: None,
                    item_id: id.clone(),
                    provider: id.as_ref().map(|_| PROVIDER.to_string()),
                }));
            }
            Ok(out)
        }
        "function_call" => {
            let id = opt_str(item, "id");
            let mut call = ToolCall::new(
                str_field(item, "call_id", what)?,
                str_field(item, "name", what)?,
                Value::Null,
            );
            set_arguments(
                &mut call,
                item.get("arguments").and_then(Value::as_str).unwrap_or(""),
            );
            if id.is_some() {
                call.item_id = id;
                call.provider = Some(PROVIDER.into());
            }
            Ok(vec![Block::ToolCall { tool_call: call }])
        }
        other => Err(malformed(format!(
            "{what}.type: Parlance cannot keep {other:?} output items yet (built-in tools); nothing was dropped"
        ))),
    }
}

/// The finish reason, from the status, why it is incomplete, and whether
/// the output calls tools (the API has no finish_reason field).
pub fn finish_reason(response: &Value, blocks: &[Block]) -> (FinishReason, String) {
    let status = response
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("completed");
    let reason = response
        .pointer("/incomplete_details/reason")
        .and_then(Value::as_str);
    let refused = response
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|i| {
            i.get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .any(|c| c.get("type").and_then(Value::as_str) == Some("refusal"));
    match (status, reason) {
        ("incomplete", Some("max_output_tokens")) => {
            (FinishReason::Length, "max_output_tokens".into())
        }
        ("incomplete", Some("content_filter")) => {
            (FinishReason::ContentFilter, "content_filter".into())
        }
        ("incomplete", r) => (FinishReason::Other, r.unwrap_or("incomplete").into()),
        ("failed", _) => (FinishReason::Error, "failed".into()),
        _ if refused => (FinishReason::ContentFilter, "refusal".into()),
        _ if blocks.iter().any(|b| matches!(b, Block::ToolCall { .. })) => {
            (FinishReason::ToolCalls, status.into())
        }
        _ => (FinishReason::Stop, status.into()),
    }
}

/// A response body → the assistant message.
pub fn decode_response(body: &Value) -> Result<Message, ModelError> {
    if body.get("status").and_then(Value::as_str) == Some("failed") {
        let e = body.get("error").unwrap_or(&Value::Null);
        return Err(error_object(e));
    }
    let output = body
        .get("output")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("output: expected an array"))?;
    let mut blocks = Vec::new();
    for (i, item) in output.iter().enumerate() {
        blocks.extend(item_blocks(item, &format!("output[{i}]"))?);
    }
    let (finish, raw) = finish_reason(body, &blocks);
    let mut msg = Message::new(Role::Assistant, blocks);
    msg.id = opt_str(body, "id");
    msg.usage = body.get("usage").filter(|u| u.is_object()).map(usage);
    msg.finish_reason = Some(finish);
    msg.finish_reason_raw = Some(raw);
    msg.provider = Some(PROVIDER.into());
    msg.model = opt_str(body, "model");
    Ok(msg)
}

/// An `error` object (response.failed, or an `error` event nested or flat) → typed error.
pub(crate) fn error_object(e: &Value) -> ModelError {
    let inner = e.get("error").unwrap_or(e);
    let message = inner
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the response failed")
        .to_string();
    let code = inner.get("code").and_then(Value::as_str).unwrap_or("");
    let ty = inner.get("type").and_then(Value::as_str).unwrap_or(code);
    from_error(0, code, ty, message, None)
}

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

/// An HTTP error body → a typed error (same shapes as Chat Completions).
pub fn classify(status: u16, body: &[u8], retry_after: Option<std::time::Duration>) -> ModelError {
    crate::openai_chat::from_wire::classify(status, body, retry_after)
}
