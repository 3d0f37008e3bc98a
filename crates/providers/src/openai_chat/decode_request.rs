//! A Chat Completions request body → canonical (for `parlance convert`):
//! the conversation, tools and options it carries. Every field is read or
//! named: top-level fields with no canonical name are kept for this API
//! (`extra`), others are dropped with a warning naming their path.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role, ToolResult};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};

use super::decode_response::{message_reasoning, tool_call};
use super::dialect::{self, Dialect, Replay};
use super::{NAME, PROVIDER};
use crate::openai_common::{ChatTools, chat_tools};
use crate::wire::{
    DecodedRequest, cache_point, checked_request, count, malformed, obj, opt_str, scoped_extra,
    split_data_url, str_field, unread,
};

/// Why message fields are not carried.
const MESSAGE_REASONS: &[(&str, &str)] = &[
    (
        "name",
        "dropped: canonical messages carry no participant name",
    ),
    (
        "audio",
        "dropped: a reference to an earlier audio answer has no canonical form",
    ),
];

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

/// One content part (and the cache point its breakpoint stands for).
fn part(
    p: &Value,
    w: &str,
    out: &mut Vec<Block>,
    warnings: &mut Vec<String>,
) -> Result<(), ModelError> {
    let ty = str_field(p, "type", w)?;
    let block = match ty {
        "text" => {
            unread(
                p,
                &["type", "text", "prompt_cache_breakpoint"],
                w,
                &[],
                warnings,
            );
            Block::text(str_field(p, "text", w)?)
        }
        "image_url" => {
            unread(
                p,
                &["type", "image_url", "prompt_cache_breakpoint"],
                w,
                &[],
                warnings,
            );
            let iu = p
                .get("image_url")
                .ok_or_else(|| malformed(format!("{w}.image_url: missing")))?;
            let url = match iu {
                Value::String(s) => s.as_str(),
                other => {
                    unread(
                        other,
                        &["url", "detail"],
                        &format!("{w}.image_url"),
                        &[],
                        warnings,
                    );
                    str_field(other, "url", &format!("{w}.image_url"))?
                }
            };
            Block::Image {
                image: media_from_url(url, opt_str(iu, "detail")),
            }
        }
        "input_audio" => {
            unread(
                p,
                &["type", "input_audio", "prompt_cache_breakpoint"],
                w,
                &[],
                warnings,
            );
            let at = format!("{w}.input_audio");
            let a = p
                .get("input_audio")
                .ok_or_else(|| malformed(format!("{at}: missing")))?;
            unread(a, &["data", "format"], &at, &[], warnings);
            let format = str_field(a, "format", &at)?;
            Block::Audio {
                audio: Media {
                    data: Some(str_field(a, "data", &at)?.to_string()),
                    media_type: Some(if format == "mp3" {
                        "audio/mpeg".into()
                    } else {
                        format!("audio/{format}")
                    }),
                    ..Media::default()
                },
            }
        }
        "file" => {
            unread(
                p,
                &["type", "file", "prompt_cache_breakpoint"],
                w,
                &[],
                warnings,
            );
            let at = format!("{w}.file");
            let f = p
                .get("file")
                .ok_or_else(|| malformed(format!("{at}: missing")))?;
            unread(f, &["file_data", "file_id", "filename"], &at, &[], warnings);
            let mut m = match (opt_str(f, "file_data"), opt_str(f, "file_id")) {
                (Some(d), None) => match split_data_url(&d) {
                    Some((mt, data)) => Media {
                        data: Some(data),
                        media_type: Some(mt),
                        ..Media::default()
                    },
                    None => {
                        return Err(malformed(format!(
                            "{at}.file_data: expected a data URL (data:TYPE;base64,...)"
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
                        "{at}: expected one of file_data or file_id"
                    )));
                }
            };
            m.filename = opt_str(f, "filename");
            Block::File { file: m }
        }
        other => {
            return Err(malformed(format!(
                "{w}.type: unsupported content part {other:?}"
            )));
        }
    };
    out.push(block);
    if let Some(bp) = p.get("prompt_cache_breakpoint").filter(|b| !b.is_null()) {
        unread(
            bp,
            &["mode"],
            &format!("{w}.prompt_cache_breakpoint"),
            &[],
            warnings,
        );
        out.push(cache_point(None));
    }
    Ok(())
}

fn content_blocks(
    v: &Value,
    what: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<Block>, ModelError> {
    match v {
        Value::Null => Ok(Vec::new()),
        // Empty text carries nothing (some SDKs replay `content: ""`).
        Value::String(s) if s.is_empty() => Ok(Vec::new()),
        Value::String(s) => Ok(vec![Block::text(s.clone())]),
        Value::Array(parts) => {
            let mut out = Vec::with_capacity(parts.len());
            for (i, p) in parts.iter().enumerate() {
                part(p, &format!("{what}[{i}]"), &mut out, warnings)?;
            }
            Ok(out)
        }
        _ => Err(malformed(format!(
            "{what}: expected a string or a list of parts"
        ))),
    }
}

/// An assistant message's content: text parts, or a refusal (read as
/// text, with a warning: canonical text has no refusal flag).
fn assistant_content(
    v: &Value,
    what: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<Block>, ModelError> {
    let Value::Array(parts) = v else {
        return content_blocks(v, what, warnings);
    };
    let mut out = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        let w = format!("{what}[{i}]");
        if p.get("type").and_then(Value::as_str) == Some("refusal") {
            unread(p, &["type", "refusal"], &w, &[], warnings);
            out.push(Block::text(str_field(p, "refusal", &w)?));
            warnings.push(format!(
                "{w}: a refusal part read as text (canonical text has no refusal flag; written back as text)"
            ));
        } else {
            part(p, &w, &mut out, warnings)?;
        }
    }
    Ok(out)
}

/// A request body → the conversation, tools and options it carries (as
/// OpenAI's own API reads it).
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    decode_request_in(&dialect::OPENAI, body)
}

/// A request body of a host speaking `dialect`: the reasoning its
/// assistant messages carry back (`reasoning_content`, `reasoning`,
/// `reasoning_details`, or `<think>` in the text where the host takes it
/// so) is read as that host's thinking, so that it goes back to it.
pub fn decode_request_in(dialect: &Dialect, body: &Value) -> Result<DecodedRequest, ModelError> {
    checked_request(body, |b| decode(dialect, b))
}

fn decode(dialect: &Dialect, body: &Value) -> Result<DecodedRequest, ModelError> {
    let b = obj(body, "request")?;
    let msgs = b
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("messages: expected an array"))?;
    let mut warnings = Vec::new();
    let mut messages: Vec<Message> = Vec::new();
    let mut names: HashMap<String, String> = HashMap::new();
    for (i, m) in msgs.iter().enumerate() {
        let what = format!("messages[{i}]");
        let role = str_field(m, "role", &what)?;
        let content = m.get("content").unwrap_or(&Value::Null);
        let cw = format!("{what}.content");
        match role {
            "system" | "developer" => {
                unread(
                    m,
                    &["role", "content"],
                    &what,
                    MESSAGE_REASONS,
                    &mut warnings,
                );
                if role == "developer" {
                    warnings.push(format!(
                        "{what}.role: developer read as system (canonical messages have one system role; written back as system, which every model takes)"
                    ));
                }
                messages.push(Message::new(
                    Role::System,
                    content_blocks(content, &cw, &mut warnings)?,
                ));
            }
            "user" => {
                unread(
                    m,
                    &["role", "content"],
                    &what,
                    MESSAGE_REASONS,
                    &mut warnings,
                );
                messages.push(Message::new(
                    Role::User,
                    content_blocks(content, &cw, &mut warnings)?,
                ));
            }
            "assistant" => {
                unread(
                    m,
                    &[
                        "role",
                        "content",
                        "tool_calls",
                        "reasoning_content",
                        "reasoning",
                        "reasoning_details",
                        "refusal",
                    ],
                    &what,
                    &[
                        MESSAGE_REASONS[0],
                        MESSAGE_REASONS[1],
                        (
                            "function_call",
                            "dropped: deprecated function calling has no canonical form (use tool_calls)",
                        ),
                    ],
                    &mut warnings,
                );
                let mut blocks = Vec::new();
                // `<think>` text is read as thinking where the host takes
                // reasoning back so (it goes back the same way).
                let (thinking, content) =
                    message_reasoning(dialect, m, dialect.replay == Replay::ThinkTags);
                blocks.extend(thinking);
                blocks.extend(assistant_content(&content, &cw, &mut warnings)?);
                if let Some(r) = m.get("refusal").and_then(Value::as_str) {
                    blocks.push(Block::text(r));
                    warnings.push(format!(
                        "{what}.refusal: read as text (canonical text has no refusal flag; written back as content)"
                    ));
                }
                for (j, tc) in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let w = format!("{what}.tool_calls[{j}]");
                    if let Some(ty) = tc.get("type").and_then(Value::as_str)
                        && ty != "function"
                    {
                        return Err(malformed(format!(
                            "{w}.type: {ty} tool calls are not supported yet (only function calls)"
                        )));
                    }
                    unread(tc, &["id", "type", "function"], &w, &[], &mut warnings);
                    if let Some(f) = tc.get("function") {
                        unread(
                            f,
                            &["name", "arguments"],
                            &format!("{w}.function"),
                            &[],
                            &mut warnings,
                        );
                    }
                    let call = tool_call(tc, &w)?;
                    names.insert(call.id.clone(), call.name.clone());
                    blocks.push(Block::ToolCall { tool_call: call });
                }
                messages.push(Message::new(Role::Assistant, blocks));
            }
            "tool" => {
                unread(
                    m,
                    &["role", "content", "tool_call_id"],
                    &what,
                    &[],
                    &mut warnings,
                );
                let id = str_field(m, "tool_call_id", &what)?.to_string();
                let result = Block::tool_result(ToolResult {
                    name: names.get(&id).cloned(),
                    tool_call_id: id,
                    content: content_blocks(content, &cw, &mut warnings)?,
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
            "function" => {
                return Err(malformed(format!(
                    "{what}.role: deprecated function messages are not supported (use tool messages)"
                )));
            }
            other => return Err(malformed(format!("{what}.role: unknown role {other:?}"))),
        }
    }
    let tools = chat_tools(
        b,
        &ChatTools {
            strict: true,
            drop_other_types: true,
        },
        &mut warnings,
    )?;
    let mut o = ModelOptions::default();
    let mut extra = Map::new();
    let mut stream = false;
    for (k, v) in b {
        if v.is_null() {
            continue;
        }
        match k.as_str() {
            "model" | "messages" | "tools" => {}
            "tool_choice" => match v {
                Value::String(s) if s == "none" => o.tool_choice = Some(ToolChoice::None),
                Value::String(s) if s == "required" => o.tool_choice = Some(ToolChoice::Required),
                Value::String(s) if s == "auto" => o.tool_choice = Some(ToolChoice::Auto),
                Value::Object(c)
                    if c.get("type").and_then(Value::as_str) == Some("function")
                        && c.len() == 2 =>
                {
                    let name = v
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| malformed("tool_choice.function.name: expected a string"))?;
                    unread(
                        &v["function"],
                        &["name"],
                        "tool_choice.function",
                        &[],
                        &mut warnings,
                    );
                    o.tool_choice = Some(ToolChoice::Tool(name.to_string()));
                }
                // allowed_tools, custom...: kept for this API as they are.
                _ => {
                    extra.insert(k.clone(), v.clone());
                }
            },
            "max_completion_tokens" => o.max_tokens = v.as_u64().map(count),
            "max_tokens" => {
                o.max_tokens = v.as_u64().map(count);
                warnings.push(
                    "max_tokens: read as the output limit; written back as max_completion_tokens (the name reasoning models take)"
                        .into(),
                );
            }
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
            "reasoning_effort" => match v.as_str().and_then(Effort::parse) {
                Some(e) => {
                    o.reasoning = Some(Reasoning {
                        effort: Some(e),
                        ..Reasoning::default()
                    })
                }
                None => {
                    extra.insert(k.clone(), v.clone());
                }
            },
            "response_format" if is_output_schema(v) => {
                let js = &v["json_schema"];
                o.output_schema = Some(OutputSchema {
                    name: str_field(js, "name", "response_format.json_schema")?.to_string(),
                    schema: js["schema"].clone(),
                    description: opt_str(js, "description"),
                    strict: js.get("strict").and_then(Value::as_bool),
                });
            }
            "stream" => stream = v.as_bool().unwrap_or(false),
            _ => {
                // stream_options, response_format text/json_object,
                // metadata, service_tier...: kept for this API as they are.
                extra.insert(k.clone(), v.clone());
            }
        }
    }
    o.extra = scoped_extra(extra, NAME);
    Ok(DecodedRequest {
        model: opt_str(body, "model"),
        stream,
        request: ModelRequest {
            messages,
            tools: tools.into(),
            options: o,
        },
        warnings,
    })
}

/// A `json_schema` response format the canonical output schema holds
/// whole (anything else stays as it is, for this API).
fn is_output_schema(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("json_schema")
        && v.as_object().is_some_and(|o| o.len() == 2)
        && v.get("json_schema").is_some_and(|js| {
            js.get("name").is_some_and(Value::is_string)
                && js.get("schema").is_some()
                && js.as_object().is_some_and(|o| {
                    o.keys()
                        .all(|k| ["name", "schema", "description", "strict"].contains(&k.as_str()))
                })
        })
}
