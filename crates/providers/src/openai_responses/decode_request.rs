//! A Responses API request body → canonical (for `parlance convert`): the
//! conversation, tools and options it carries. Every field is read or
//! named: top-level fields with no canonical name are kept for this API
//! (`extra`), others are dropped with a warning naming their path.

use std::collections::HashMap;

use parlance_format::{Block, Media, Message, Role, ToolResult, ToolSpec};
use parlance_model::{
    Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning, ToolChoice,
};
use serde_json::{Map, Value};

use super::decode_response::item_blocks;
use super::{NAME, PROVIDER};
use crate::wire::{
    DecodedRequest, cache_point, checked_request, count, malformed, obj, opt_str, scoped_extra,
    split_data_url, str_field, unread,
};

const PART_REASONS: &[(&str, &str)] =
    &[("detail", "dropped: canonical detail is auto, low or high")];

/// An image or file source: a URL (or a data URL), inline data or a file id.
fn media_from(p: &Value, url_key: &str, w: &str) -> Result<Media, ModelError> {
    let mut m = Media::default();
    let sources = [url_key, "file_data", "file_id"]
        .iter()
        .filter(|k| p.get(**k).is_some_and(|v| !v.is_null()))
        .count();
    if sources != 1 {
        return Err(malformed(format!(
            "{w}: expected exactly one of {url_key}, file_data or file_id"
        )));
    }
    if let Some(u) = p.get(url_key).and_then(Value::as_str) {
        match split_data_url(u) {
            Some((mt, data)) => {
                m.media_type = Some(mt);
                m.data = Some(data);
            }
            None => m.url = Some(u.to_string()),
        }
    } else if let Some(d) = p.get("file_data").and_then(Value::as_str) {
        let (mt, data) = split_data_url(d).ok_or_else(|| {
            malformed(format!(
                "{w}.file_data: expected a data URL (data:TYPE;base64,...)"
            ))
        })?;
        m.media_type = Some(mt);
        m.data = Some(data);
    } else {
        m.file_id = Some(str_field(p, "file_id", w)?.to_string());
        m.provider = Some(PROVIDER.into());
    }
    Ok(m)
}

/// One input part (and the cache point its breakpoint stands for).
fn input_part(
    p: &Value,
    w: &str,
    out: &mut Vec<Block>,
    warnings: &mut Vec<String>,
) -> Result<(), ModelError> {
    let ty = str_field(p, "type", w)?;
    let read: &[&str] = match ty {
        "input_text" | "output_text" | "text" => &["type", "text", "prompt_cache_breakpoint"],
        "input_image" => &["type", "image_url", "file_id", "prompt_cache_breakpoint"],
        "input_file" => &[
            "type",
            "file_url",
            "file_data",
            "file_id",
            "filename",
            "prompt_cache_breakpoint",
        ],
        _ => &[],
    };
    let mut read = read.to_vec();
    let detail = opt_str(p, "detail");
    // Canonical detail: auto (the API's default, so not kept), low, high.
    let keep_detail = detail
        .as_deref()
        .is_some_and(|d| ["auto", "low", "high"].contains(&d));
    if keep_detail || detail.is_none() {
        read.push("detail");
    }
    if ty == "output_text" {
        // Echoes of an earlier answer: empty lists carry nothing.
        for k in ["annotations", "logprobs"] {
            if p.get(k)
                .is_some_and(|v| v.as_array().is_some_and(Vec::is_empty))
            {
                read.push(k);
            }
        }
    }
    unread(p, &read, w, PART_REASONS, warnings);
    let block = match ty {
        "input_text" | "output_text" | "text" => Block::text(str_field(p, "text", w)?),
        "input_image" => {
            let mut m = media_from(p, "image_url", w)?;
            m.detail = detail.filter(|d| keep_detail && d != "auto");
            Block::Image { image: m }
        }
        "input_file" => {
            let mut m = media_from(p, "file_url", w)?;
            m.filename = opt_str(p, "filename");
            m.detail = detail.filter(|d| keep_detail && d != "auto");
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

fn input_blocks(
    content: &Value,
    what: &str,
    warnings: &mut Vec<String>,
) -> Result<Vec<Block>, ModelError> {
    match content {
        // Empty text carries nothing (some SDKs replay `content: ""`).
        Value::String(s) if s.is_empty() => Ok(Vec::new()),
        Value::String(s) => Ok(vec![Block::text(s.clone())]),
        Value::Array(parts) => {
            let mut out = Vec::with_capacity(parts.len());
            for (i, p) in parts.iter().enumerate() {
                input_part(p, &format!("{what}[{i}]"), &mut out, warnings)?;
            }
            Ok(out)
        }
        _ => Err(malformed(format!(
            "{what}: expected a string or a list of parts"
        ))),
    }
}

/// A request body → the conversation, tools and options it carries.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    checked_request(body, decode)
}

/// Assistant items (reasoning, messages, calls) gather into one assistant
/// message until another role speaks.
fn assistant_tail(messages: &mut Vec<Message>) -> &mut Message {
    if messages.last().map(|m| m.role) != Some(Role::Assistant) {
        messages.push(Message::new(Role::Assistant, Vec::new()));
    }
    messages.last_mut().expect("pushed")
}

fn decode(body: &Value) -> Result<DecodedRequest, ModelError> {
    let b = obj(body, "request")?;
    // Something to answer: without one of these the document is not a
    // Responses request (a Chat body, with `messages`, ends here).
    if !["input", "previous_response_id", "prompt", "conversation"]
        .iter()
        .any(|k| b.get(*k).is_some_and(|v| !v.is_null()))
    {
        return Err(malformed(
            "input: required in a Responses request (or previous_response_id, prompt, conversation)",
        ));
    }
    let mut warnings = Vec::new();
    let mut messages: Vec<Message> = Vec::new();
    if let Some(i) = b.get("instructions").and_then(Value::as_str) {
        messages.push(Message::system(i));
    }
    let items = match b.get("input") {
        // The input is optional (with previous_response_id or a prompt).
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![serde_json::json!({"role": "user", "content": s})],
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return Err(malformed("input: expected a string or an array")),
    };
    let mut names: HashMap<String, String> = HashMap::new();
    let mut after_idless_reasoning = false;
    for (i, item) in items.iter().enumerate() {
        let what = format!("input[{i}]");
        let ty = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        let idless_reasoning = ty == "reasoning" && item.get("id").is_none_or(Value::is_null);
        match ty {
            "message" => {
                let role = str_field(item, "role", &what)?;
                let content = item.get("content").unwrap_or(&Value::Null);
                let cw = format!("{what}.content");
                match role {
                    "assistant" if item.get("id").is_some_and(Value::is_string) => {
                        unread(
                            item,
                            &["type", "id", "role", "content", "status"],
                            &what,
                            &[],
                            &mut warnings,
                        );
                        for (j, p) in content.as_array().into_iter().flatten().enumerate() {
                            let pw = format!("{cw}[{j}]");
                            let mut read = vec!["type", "text", "refusal"];
                            for k in ["annotations", "logprobs"] {
                                if p.get(k)
                                    .is_some_and(|v| v.as_array().is_some_and(Vec::is_empty))
                                {
                                    read.push(k);
                                }
                            }
                            unread(p, &read, &pw, &[], &mut warnings);
                            if p.get("type").and_then(Value::as_str) == Some("refusal") {
                                warnings.push(format!(
                                    "{pw}: a refusal read as text (canonical text has no refusal flag; written back as output_text)"
                                ));
                            }
                        }
                        let blocks = item_blocks(item, &what)?;
                        assistant_tail(&mut messages).content.extend(blocks);
                    }
                    "assistant" => {
                        unread(
                            item,
                            &["type", "role", "content", "status"],
                            &what,
                            &[],
                            &mut warnings,
                        );
                        let blocks = input_blocks(content, &cw, &mut warnings)?;
                        assistant_tail(&mut messages).content.extend(blocks);
                    }
                    "user" | "system" | "developer" => {
                        unread(
                            item,
                            &["type", "role", "content", "status"],
                            &what,
                            &[],
                            &mut warnings,
                        );
                        if role == "developer" {
                            warnings.push(format!(
                                "{what}.role: developer read as system (canonical messages have one system role; written back as system)"
                            ));
                        }
                        let role = if role == "user" {
                            Role::User
                        } else {
                            Role::System
                        };
                        messages.push(Message::new(
                            role,
                            input_blocks(content, &cw, &mut warnings)?,
                        ));
                    }
                    other => return Err(malformed(format!("{what}.role: unknown role {other:?}"))),
                }
            }
            "reasoning" => {
                unread(
                    item,
                    &["type", "id", "summary", "encrypted_content", "status"],
                    &what,
                    &[(
                        "content",
                        "dropped: raw reasoning text has no canonical form apart from its summary",
                    )],
                    &mut warnings,
                );
                for (j, s) in item
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    unread(
                        s,
                        &["type", "text"],
                        &format!("{what}.summary[{j}]"),
                        &[],
                        &mut warnings,
                    );
                }
                if idless_reasoning
                    && after_idless_reasoning
                    && item.get("encrypted_content").is_none_or(Value::is_null)
                {
                    warnings.push(format!(
                        "{what}: a reasoning item with neither id nor encrypted_content is joined to the one before it (nothing marks where it starts)"
                    ));
                }
                let blocks = item_blocks(item, &what)?;
                assistant_tail(&mut messages).content.extend(blocks);
            }
            "function_call" => {
                unread(
                    item,
                    &["type", "id", "call_id", "name", "arguments", "status"],
                    &what,
                    &[],
                    &mut warnings,
                );
                let blocks = item_blocks(item, &what)?;
                for b in &blocks {
                    if let Block::ToolCall { tool_call } = b {
                        names.insert(tool_call.id.clone(), tool_call.name.clone());
                    }
                }
                assistant_tail(&mut messages).content.extend(blocks);
            }
            "function_call_output" => {
                unread(
                    item,
                    &["type", "id", "call_id", "output", "status"],
                    &what,
                    &[],
                    &mut warnings,
                );
                let id = str_field(item, "call_id", &what)?.to_string();
                let content = input_blocks(
                    item.get("output").unwrap_or(&Value::Null),
                    &format!("{what}.output"),
                    &mut warnings,
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
                    "{what}.type: Parlance cannot carry {other:?} input items yet (built-in tools, references)"
                )));
            }
        }
        after_idless_reasoning = idless_reasoning;
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
        let ty = t.get("type").and_then(Value::as_str).unwrap_or("");
        if ty != "function" {
            warnings.push(format!(
                "{what}: dropped: built-in {ty:?} tools are not supported yet (only function tools)"
            ));
            continue;
        }
        unread(
            t,
            &["type", "name", "description", "parameters", "strict"],
            &what,
            &[],
            &mut warnings,
        );
        tools.push(ToolSpec {
            name: str_field(t, "name", &what)?.to_string(),
            description: opt_str(t, "description"),
            input_schema: t
                .get("parameters")
                .filter(|p| !p.is_null())
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
        if v.is_null() {
            continue;
        }
        match k.as_str() {
            "model" | "input" | "tools" | "instructions" => {}
            "tool_choice" => match v {
                Value::String(s) if s == "none" => o.tool_choice = Some(ToolChoice::None),
                Value::String(s) if s == "required" => o.tool_choice = Some(ToolChoice::Required),
                Value::String(s) if s == "auto" => o.tool_choice = Some(ToolChoice::Auto),
                Value::Object(c)
                    if c.get("type").and_then(Value::as_str) == Some("function")
                        && c.len() == 2
                        && c.get("name").is_some_and(Value::is_string) =>
                {
                    o.tool_choice = Some(ToolChoice::Tool(
                        c["name"].as_str().unwrap_or_default().to_string(),
                    ))
                }
                // allowed_tools, hosted tools...: kept for this API as they are.
                _ => {
                    extra.insert(k.clone(), v.clone());
                }
            },
            "parallel_tool_calls" => o.parallel_tool_calls = v.as_bool(),
            "max_output_tokens" => o.max_tokens = v.as_u64().map(count),
            "temperature" => o.temperature = v.as_f64(),
            "top_p" => o.top_p = v.as_f64(),
            "stream" => stream = v.as_bool().unwrap_or(false),
            "reasoning" if is_reasoning(v) => {
                let mut r = Reasoning::default();
                if let Some(e) = v.get("effort").and_then(Value::as_str) {
                    r.effort = Some(Effort::parse(e).ok_or_else(|| {
                        malformed(format!("reasoning.effort: unknown effort {e:?}"))
                    })?);
                }
                // The summary asked for, as it is (`detailed` stays detailed).
                r.summary = opt_str(v, "summary");
                if let Some(s) = r.summary.as_deref()
                    && !["auto", "concise", "detailed"].contains(&s)
                {
                    return Err(malformed(format!(
                        "reasoning.summary: unknown summary {s:?} (expected one of: auto, concise, detailed)"
                    )));
                }
                o.reasoning = Some(r);
            }
            "text" if is_output_schema(v) => {
                let f = &v["format"];
                o.output_schema = Some(OutputSchema {
                    name: str_field(f, "name", "text.format")?.to_string(),
                    schema: f["schema"].clone(),
                    description: opt_str(f, "description"),
                    strict: f.get("strict").and_then(Value::as_bool),
                });
            }
            _ => {
                // include, store, service_tier, text (other formats,
                // verbosity), reasoning (other settings)...: kept for this
                // API as they are.
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

/// Reasoning settings the canonical ones hold whole: an effort and a
/// summary (anything else stays as it is, for this API).
fn is_reasoning(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.iter()
            .all(|(k, x)| x.is_null() || k == "effort" || k == "summary")
            && o.get("effort")
                .is_none_or(|e| e.is_null() || e.as_str().and_then(Effort::parse).is_some())
            && o.get("summary")
                .is_none_or(|s| s.is_null() || s.is_string())
    })
}

/// A `text` setting that is only a `json_schema` format the canonical
/// output schema holds whole.
fn is_output_schema(v: &Value) -> bool {
    v.as_object().is_some_and(|o| o.len() == 1)
        && v.get("format").is_some_and(|f| {
            f.get("type").and_then(Value::as_str) == Some("json_schema")
                && f.get("name").is_some_and(Value::is_string)
                && f.get("schema").is_some()
                && f.as_object().is_some_and(|o| {
                    o.keys().all(|k| {
                        ["type", "name", "schema", "description", "strict"].contains(&k.as_str())
                    })
                })
        })
}
