//! A Messages API request body → canonical (for `parlance convert`): the
//! conversation, tools and options it carries. Every field is read or
//! named: top-level fields with no canonical name are kept for this API
//! (`extra`), others are dropped with a warning naming their path.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role, ToolResult, ToolSpec, ToolStatus};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value, json};

use super::decode_response::block;
use super::{NAME, PROVIDER};
use crate::wire::{
    DecodedRequest, cache_point, checked_request, count, malformed, obj, opt_str, scoped_extra,
    str_field, unread,
};

/// Why block fields are not carried.
const BLOCK_REASONS: &[(&str, &str)] = &[
    ("citations", "dropped: canonical blocks carry no citations"),
    ("context", "dropped: canonical files carry no context"),
    (
        "caller",
        "dropped: canonical tool calls carry no caller (server-tool callers are not supported yet)",
    ),
];

fn media(source: &Value, what: &str, warnings: &mut Vec<String>) -> Result<Media, ModelError> {
    Ok(match str_field(source, "type", what)? {
        "base64" => {
            unread(source, &["type", "data", "media_type"], what, &[], warnings);
            Media {
                data: Some(str_field(source, "data", what)?.to_string()),
                // Required by the API and by the canonical reader.
                media_type: Some(str_field(source, "media_type", what)?.to_string()),
                ..Media::default()
            }
        }
        "url" => {
            unread(source, &["type", "url"], what, &[], warnings);
            Media {
                url: Some(str_field(source, "url", what)?.to_string()),
                ..Media::default()
            }
        }
        "file" => {
            unread(source, &["type", "file_id"], what, &[], warnings);
            Media {
                file_id: Some(str_field(source, "file_id", what)?.to_string()),
                provider: Some(PROVIDER.into()),
                ..Media::default()
            }
        }
        other => {
            return Err(malformed(format!(
                "{what}.type: unsupported source {other:?} (base64, url and file are)"
            )));
        }
    })
}

/// A cache point for a block's `cache_control`, if it has one.
fn cache_of(b: &Value, what: &str, warnings: &mut Vec<String>) -> Option<Block> {
    let cc = b.get("cache_control").filter(|c| !c.is_null())?;
    let at = format!("{what}.cache_control");
    unread(cc, &["type", "ttl"], &at, &[], warnings);
    Some(cache_point(opt_str(cc, "ttl")))
}

/// One content block of a user turn (or of a tool result), with the cache
/// point its `cache_control` stands for.
fn input_block(
    b: &Value,
    what: &str,
    out: &mut Vec<Block>,
    warnings: &mut Vec<String>,
) -> Result<(), ModelError> {
    let block = match str_field(b, "type", what)? {
        "image" => {
            unread(
                b,
                &["type", "source", "cache_control"],
                what,
                BLOCK_REASONS,
                warnings,
            );
            Block::Image {
                image: media(
                    b.get("source").unwrap_or(&Value::Null),
                    &format!("{what}.source"),
                    warnings,
                )?,
            }
        }
        "document" => {
            unread(
                b,
                &["type", "source", "title", "cache_control"],
                what,
                BLOCK_REASONS,
                warnings,
            );
            let mut m = media(
                b.get("source").unwrap_or(&Value::Null),
                &format!("{what}.source"),
                warnings,
            )?;
            m.filename = opt_str(b, "title");
            Block::File { file: m }
        }
        "text" => {
            unread(
                b,
                &["type", "text", "cache_control"],
                what,
                BLOCK_REASONS,
                warnings,
            );
            Block::text(str_field(b, "text", what)?)
        }
        other => {
            return Err(malformed(format!(
                "{what}.type: Parlance cannot carry {other:?} blocks here yet"
            )));
        }
    };
    out.push(block);
    out.extend(cache_of(b, what, warnings));
    Ok(())
}

fn blocks_of(content: &Value, what: &str) -> Result<Vec<Value>, ModelError> {
    Ok(match content {
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(a) => a.clone(),
        _ => return Err(malformed(format!("{what}: expected a string or an array"))),
    })
}

/// A request body → the conversation, tools and options it carries.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    checked_request(body, decode)
}

/// Text blocks (a system prompt, a system message): their text and cache
/// points.
fn text_blocks(
    content: &Value,
    what: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<Block>, ModelError> {
    let mut out = Vec::new();
    for (j, p) in blocks_of(content, what)?.iter().enumerate() {
        let w = format!("{what}[{j}]");
        if p.get("type").and_then(Value::as_str) != Some("text") {
            return Err(malformed(format!("{w}.type: expected a text block")));
        }
        input_block(p, &w, &mut out, warnings)?;
    }
    Ok(out)
}

fn decode(body: &Value) -> Result<DecodedRequest, ModelError> {
    let b = obj(body, "request")?;
    let mut warnings = Vec::new();
    let mut messages = Vec::new();
    match b.get("system") {
        None | Some(Value::Null) => {}
        Some(s) => messages.push(Message::new(
            Role::System,
            text_blocks(s, "system", &mut warnings)?,
        )),
    }
    let mut names: HashMap<String, String> = HashMap::new();
    let msgs = b
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("messages: expected an array"))?;
    for (i, m) in msgs.iter().enumerate() {
        let what = format!("messages[{i}]");
        unread(m, &["role", "content"], &what, &[], &mut warnings);
        let role = str_field(m, "role", &what)?;
        let cw = format!("{what}.content");
        let content = m.get("content").unwrap_or(&Value::Null);
        match role {
            "system" => {
                warnings.push(format!(
                    "{what}.role: a system message in the conversation goes back in the top-level system prompt"
                ));
                messages.push(Message::new(
                    Role::System,
                    text_blocks(content, &cw, &mut warnings)?,
                ));
            }
            "assistant" => {
                let mut blocks = Vec::new();
                for (j, p) in blocks_of(content, &cw)?.iter().enumerate() {
                    let w = format!("{cw}[{j}]");
                    let read: &[&str] = match p.get("type").and_then(Value::as_str) {
                        Some("text") => &["type", "text", "cache_control"],
                        Some("thinking") => &["type", "thinking", "signature"],
                        Some("redacted_thinking") => &["type", "data"],
                        Some("tool_use") => &["type", "id", "name", "input", "cache_control"],
                        _ => &[],
                    };
                    if !read.is_empty() {
                        unread(p, read, &w, BLOCK_REASONS, &mut warnings);
                    }
                    if let Some(bl) = block(p, &w)? {
                        if let Block::ToolCall { tool_call } = &bl {
                            names.insert(tool_call.id.clone(), tool_call.name.clone());
                        }
                        blocks.push(bl);
                        blocks.extend(cache_of(p, &w, &mut warnings));
                    }
                }
                messages.push(Message::new(Role::Assistant, blocks));
            }
            "user" => {
                // Tool results become a tool message; the rest a user message after it.
                let mut results = Vec::new();
                let mut rest = Vec::new();
                for (j, p) in blocks_of(content, &cw)?.iter().enumerate() {
                    let w = format!("{cw}[{j}]");
                    if p.get("type").and_then(Value::as_str) != Some("tool_result") {
                        input_block(p, &w, &mut rest, &mut warnings)?;
                        continue;
                    }
                    unread(
                        p,
                        &[
                            "type",
                            "tool_use_id",
                            "content",
                            "is_error",
                            "cache_control",
                        ],
                        &w,
                        &[],
                        &mut warnings,
                    );
                    let id = str_field(p, "tool_use_id", &w)?.to_string();
                    let mut content = Vec::new();
                    let empty = Value::String(String::new());
                    let inner = p.get("content").filter(|c| !c.is_null()).unwrap_or(&empty);
                    for (k, c) in blocks_of(inner, &format!("{w}.content"))?
                        .iter()
                        .enumerate()
                    {
                        input_block(c, &format!("{w}.content[{k}]"), &mut content, &mut warnings)?;
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
                    results.extend(cache_of(p, &w, &mut warnings));
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
        let custom = t
            .get("type")
            .is_none_or(|ty| ty.is_null() || ty == "custom");
        if !custom || t.get("input_schema").is_none() {
            warnings.push(format!(
                "{what}: dropped: server tools ({}) are not supported yet",
                t.get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("no input_schema")
            ));
            continue;
        }
        unread(
            t,
            &[
                "type",
                "name",
                "description",
                "input_schema",
                "strict",
                "cache_control",
            ],
            &what,
            &[],
            &mut warnings,
        );
        let cp = cache_of(t, &what, &mut warnings).map(|b| match b {
            Block::CachePoint { cache_point } => cache_point,
            _ => unreachable!("cache_of gives cache points"),
        });
        tools.push(ToolSpec {
            name: str_field(t, "name", &what)?.to_string(),
            description: opt_str(t, "description"),
            input_schema: t["input_schema"].clone(),
            strict: t.get("strict").and_then(Value::as_bool),
            cache_point: cp,
        });
        if t.get("type").is_some_and(|ty| ty == "custom") {
            warnings.push(format!(
                "{what}.type: custom is the default; written back without it"
            ));
        }
    }
    let mut o = ModelOptions::default();
    let mut extra = Map::new();
    let mut stream = false;
    for (k, v) in b {
        if v.is_null() {
            continue;
        }
        match k.as_str() {
            "model" | "messages" | "tools" | "system" => {}
            "max_tokens" => o.max_tokens = v.as_u64().map(count),
            "temperature" => o.temperature = v.as_f64(),
            "top_p" => o.top_p = v.as_f64(),
            "top_k" => o.top_k = v.as_u64().map(count),
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
                unread(
                    v,
                    &["type", "name", "disable_parallel_tool_use"],
                    "tool_choice",
                    &[],
                    &mut warnings,
                );
                o.tool_choice = Some(match v.get("type").and_then(Value::as_str) {
                    Some("any") => ToolChoice::Required,
                    Some("none") => ToolChoice::None,
                    Some("tool") => {
                        ToolChoice::Tool(str_field(v, "name", "tool_choice")?.to_string())
                    }
                    _ => ToolChoice::Auto,
                });
                if let Some(d) = v.get("disable_parallel_tool_use").and_then(Value::as_bool) {
                    o.parallel_tool_calls = Some(!d);
                }
            }
            "thinking" => {
                let r = o.reasoning.get_or_insert_with(Reasoning::default);
                match v.get("type").and_then(Value::as_str) {
                    Some("enabled") => {
                        r.budget_tokens = v.get("budget_tokens").and_then(Value::as_u64).map(count);
                    }
                    Some("adaptive") => r.include_thoughts = true,
                    // Off is the default: kept for this API as it is.
                    Some("disabled") => {
                        o.reasoning = None;
                        extra.insert(k.clone(), v.clone());
                        continue;
                    }
                    other => {
                        return Err(malformed(format!(
                            "thinking.type: unknown thinking mode {other:?}"
                        )));
                    }
                }
                unread(
                    v,
                    &["type", "budget_tokens", "display"],
                    "thinking",
                    &[],
                    &mut warnings,
                );
                // How thinking is shown has no canonical name: kept for this API.
                if let Some(d) = v.get("display").filter(|d| !d.is_null()) {
                    extra.insert("thinking".into(), json!({"display": d}));
                }
            }
            "output_config" => {
                let mut rest = v.as_object().cloned().unwrap_or_default();
                if let Some(e) = rest.remove("effort").filter(|e| !e.is_null()) {
                    let e = e.as_str().unwrap_or_default();
                    let effort = Effort::parse(e).ok_or_else(|| {
                        malformed(format!("output_config.effort: unknown effort {e:?}"))
                    })?;
                    let r = o.reasoning.get_or_insert_with(Reasoning::default);
                    if r.effort.is_none() {
                        r.effort = Some(effort);
                    }
                }
                if let Some(f) = rest.remove("format").filter(|f| !f.is_null()) {
                    if f.get("type").and_then(Value::as_str) == Some("json_schema")
                        && f.get("schema").is_some()
                        && f.as_object().is_some_and(|o| o.len() == 2)
                    {
                        o.output_schema = Some(OutputSchema::new("output", f["schema"].clone()));
                    } else {
                        rest.insert("format".into(), f);
                    }
                }
                // What else it holds (or an empty object) stays as it is.
                if !rest.is_empty() || v.as_object().is_some_and(Map::is_empty) {
                    extra.insert(k.clone(), Value::Object(rest));
                }
            }
            _ => {
                // cache_control (automatic caching), metadata, service_tier,
                // container...: kept for this API as they are.
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
