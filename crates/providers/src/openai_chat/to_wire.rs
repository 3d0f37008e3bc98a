//! Canonical request → Chat Completions request body.

use parlance_format::{Block, Media, Message, Role};
use parlance_model::{ModelError, ModelRequest, ToolChoice};
use serde_json::{Map, Value, json};

use super::NAME;
use super::dialect::{self, Dialect, ReasoningParam, Replay};
use crate::openai_common::{arguments_text, has_cache_point, parts_with_breakpoints};
use crate::wire::{Encoded, at, data_url, json_text, merge_extra, unsupported, wire_id};

/// OpenAI accepts any call id up to 64 characters made of these.
fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

pub(crate) fn call_id(id: &str) -> String {
    wire_id(id, 64, id_char).into_owned()
}

/// Builds the request body for `model` (OpenAI's own API).
pub fn encode_request(
    req: &ModelRequest,
    model: &str,
    stream: bool,
) -> Result<Encoded, ModelError> {
    encode_request_in(&dialect::OPENAI, req, model, stream)
}

/// Builds the request body for `model` at a host speaking `dialect`.
pub fn encode_request_in(
    dialect: &Dialect,
    req: &ModelRequest,
    model: &str,
    stream: bool,
) -> Result<Encoded, ModelError> {
    let mut warnings = Vec::new();
    let mut messages = Vec::with_capacity(req.messages.len());
    for (mi, m) in req.messages.iter().enumerate() {
        encode_message(dialect, mi, m, &mut messages, &mut warnings)?;
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    let o = &req.options;
    if !req.tools.is_empty() {
        let mut tools = Vec::with_capacity(req.tools.len());
        for (i, t) in req.tools.iter().enumerate() {
            let mut f = Map::new();
            f.insert("name".into(), json!(t.name));
            if let Some(d) = &t.description {
                f.insert("description".into(), json!(d));
            }
            f.insert("parameters".into(), t.input_schema.clone());
            if let Some(strict) = t.strict {
                f.insert("strict".into(), json!(strict));
            }
            if t.cache_point.is_some() {
                warnings.push(format!(
                    "tools[{i}]: cache point dropped: OpenAI Chat has no breakpoints on tool definitions"
                ));
            }
            tools.push(json!({"type": "function", "function": f}));
        }
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = &o.tool_choice {
            let choice = match choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            };
            body.insert("tool_choice".into(), choice);
        }
        if let Some(p) = o.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(p));
        }
    } else {
        // The API refuses both without tools.
        if o.tool_choice.is_some() {
            warnings.push("tool_choice dropped: OpenAI Chat takes it only with tools".into());
        }
        if o.parallel_tool_calls.is_some() {
            warnings
                .push("parallel_tool_calls dropped: OpenAI Chat takes it only with tools".into());
        }
    }
    if let Some(n) = o.max_tokens {
        // `max_tokens` is refused by reasoning models; this works for all.
        body.insert("max_completion_tokens".into(), json!(n));
    }
    if let Some(t) = o.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = o.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if o.top_k.is_some() {
        warnings.push("top_k dropped: OpenAI Chat has no top-k sampling".into());
    }
    if !o.stop.is_empty() {
        body.insert("stop".into(), json!(o.stop));
    }
    if let Some(s) = o.seed {
        body.insert("seed".into(), json!(s));
    }
    if let Some(r) = &o.reasoning {
        reasoning_settings(dialect, r, &mut body, &mut warnings);
    }
    if let Some(s) = &o.output_schema {
        let mut js = Map::new();
        js.insert("name".into(), json!(s.name));
        if let Some(d) = &s.description {
            js.insert("description".into(), json!(d));
        }
        js.insert("schema".into(), s.schema.clone());
        if let Some(strict) = s.strict {
            js.insert("strict".into(), json!(strict));
        }
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": js}),
        );
    }
    if stream {
        body.insert("stream".into(), json!(true));
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    merge_extra(&mut body, &o.extra, dialect.provider, NAME);
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

/// The request's reasoning settings, the way the host takes them.
fn reasoning_settings(
    dialect: &Dialect,
    r: &parlance_model::Reasoning,
    body: &mut Map<String, Value>,
    warnings: &mut Vec<String>,
) {
    match dialect.reasoning {
        ReasoningParam::Effort => {
            if let Some(effort) = r.effort {
                body.insert("reasoning_effort".into(), json!(effort.as_str()));
            }
            if r.budget_tokens.is_some() {
                warnings.push(
                    "reasoning.budget_tokens dropped: OpenAI Chat takes an effort, not a budget"
                        .into(),
                );
            }
        }
        ReasoningParam::Object => {
            // OpenRouter takes one of the two.
            let mut o = Map::new();
            match (r.effort, r.budget_tokens) {
                (Some(effort), budget) => {
                    o.insert("effort".into(), json!(effort.as_str()));
                    if budget.is_some() {
                        warnings.push(format!(
                            "reasoning.budget_tokens dropped: {} takes an effort or a budget, not both",
                            dialect.provider
                        ));
                    }
                }
                (None, Some(budget)) => {
                    o.insert("max_tokens".into(), json!(budget));
                }
                (None, None) => {}
            }
            if !o.is_empty() {
                body.insert("reasoning".into(), Value::Object(o));
            }
        }
    }
    if r.wants_thoughts() && !dialect.returns_reasoning {
        warnings.push(
            "reasoning.include_thoughts dropped: OpenAI Chat returns no reasoning text".into(),
        );
    }
}

/// A message's text, or its text parts when a cache point needs one to
/// carry the breakpoint.
fn text_content(mi: usize, m: &Message, warnings: &mut Vec<String>) -> Result<Value, ModelError> {
    if !has_cache_point(&m.content) {
        return Ok(json!(texts(&m.content)));
    }
    let parts = parts_with_breakpoints(
        &m.content,
        |_, b| {
            Ok(match b {
                Block::Text(t) => Some(json!({"type": "text", "text": t.text})),
                Block::Json { json } => Some(json!({"type": "text", "text": json_text(json)})),
                _ => None,
            })
        },
        |bi| at(mi, bi),
        warnings,
    )?;
    Ok(Value::Array(parts))
}

fn encode_message(
    dialect: &Dialect,
    mi: usize,
    m: &Message,
    out: &mut Vec<Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ModelError> {
    match m.role {
        Role::System => {
            out.push(json!({"role": "system", "content": text_content(mi, m, warnings)?}))
        }
        Role::User => {
            out.push(json!({"role": "user", "content": user_content(mi, &m.content, warnings)?}))
        }
        Role::Assistant => out.push(assistant(dialect, mi, m, warnings)?),
        Role::Tool => {
            // One `tool` message per result, right after the assistant message.
            for (bi, b) in m.content.iter().enumerate() {
                match b {
                    Block::ToolResult { tool_result: r } => {
                        let w = at(mi, bi);
                        for (ci, c) in r.content.iter().enumerate() {
                            if !matches!(c, Block::Text(_) | Block::Json { .. } | Block::CachePoint { .. }) {
                                return Err(unsupported(format!(
                                    "{w}.tool_result.content[{ci}]: OpenAI Chat tool results take only text, not {} blocks",
                                    c.type_name()
                                )));
                            }
                        }
                        let content = if has_cache_point(&r.content) {
                            Value::Array(parts_with_breakpoints(
                                &r.content,
                                |_, c| {
                                    Ok(match c {
                                        Block::Text(t) => Some(json!({"type": "text", "text": t.text})),
                                        Block::Json { json } => {
                                            Some(json!({"type": "text", "text": json_text(json)}))
                                        }
                                        _ => None,
                                    })
                                },
                                |ci| format!("{w}.tool_result.content[{ci}]"),
                                warnings,
                            )?)
                        } else {
                            json!(texts(&r.content))
                        };
                        out.push(json!({"role": "tool", "tool_call_id": call_id(&r.tool_call_id), "content": content}));
                    }
                    Block::CachePoint { cache_point } => match out.last_mut() {
                        // After a tool result: its (last) part carries it.
                        Some(last) if last["role"] == "tool" => {
                            let w = at(mi, bi);
                            let content = &mut last["content"];
                            if let Value::String(s) = content {
                                *content = json!([{"type": "text", "text": s}]);
                            }
                            match content.as_array_mut().and_then(|a| a.last_mut()) {
                                Some(p) => crate::openai_common::mark_breakpoint(p, cache_point, &w, warnings),
                                None => warnings.push(format!(
                                    "{w}: cache point dropped: the tool result before it is empty"
                                )),
                            }
                        }
                        _ => warnings.push(format!(
                            "{}: cache point dropped: OpenAI has no breakpoint for what comes before it",
                            at(mi, bi)
                        )),
                    },
                    _ => {
                        return Err(unsupported(format!(
                            "{}: a call still waiting for approval cannot be sent to a model",
                            at(mi, bi)
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

fn media_part(where_: &str, ty: &str, m: &Media) -> Result<Value, ModelError> {
    match ty {
        "image" => {
            let url = match (&m.url, &m.data) {
                (Some(u), _) => u.clone(),
                (None, Some(_)) => data_url(where_, m)?,
                _ => {
                    return Err(unsupported(format!(
                        "{where_}: OpenAI Chat takes images by URL or data, not file id"
                    )));
                }
            };
            let mut image = json!({"url": url});
            if let Some(d) = &m.detail {
                image["detail"] = json!(d);
            }
            Ok(json!({"type": "image_url", "image_url": image}))
        }
        "audio" => {
            let format = match m.media_type.as_deref() {
                Some("audio/wav" | "audio/x-wav" | "audio/wave") => "wav",
                Some("audio/mpeg" | "audio/mp3") => "mp3",
                other => {
                    return Err(unsupported(format!(
                        "{where_}: OpenAI Chat takes wav or mp3 audio, not {}",
                        other.unwrap_or("audio without a media type")
                    )));
                }
            };
            match &m.data {
                Some(d) => {
                    Ok(json!({"type": "input_audio", "input_audio": {"data": d, "format": format}}))
                }
                None => Err(unsupported(format!(
                    "{where_}: OpenAI Chat takes audio only as inline data"
                ))),
            }
        }
        _ => {
            let mut file = Map::new();
            if let (Some(id), Some(super::PROVIDER)) = (&m.file_id, m.provider.as_deref()) {
                file.insert("file_id".into(), json!(id));
            } else if m.data.is_some() {
                file.insert("file_data".into(), json!(data_url(where_, m)?));
            } else {
                return Err(unsupported(format!(
                    "{where_}: OpenAI Chat takes files as inline data or an OpenAI file id"
                )));
            }
            if let Some(f) = &m.filename {
                file.insert("filename".into(), json!(f));
            }
            Ok(json!({"type": "file", "file": file}))
        }
    }
}

fn user_content(
    mi: usize,
    content: &[Block],
    warnings: &mut Vec<String>,
) -> Result<Value, ModelError> {
    if let [Block::Text(t)] = content {
        return Ok(json!(t.text));
    }
    let parts = parts_with_breakpoints(
        content,
        |bi, b| {
            let w = at(mi, bi);
            Ok(Some(match b {
                Block::Text(t) => json!({"type": "text", "text": t.text}),
                Block::Json { json } => json!({"type": "text", "text": json_text(json)}),
                Block::Image { image } => media_part(&w, "image", image)?,
                Block::Audio { audio } => media_part(&w, "audio", audio)?,
                Block::File { file } => media_part(&w, "file", file)?,
                other => {
                    return Err(unsupported(format!(
                        "{w}: {} blocks cannot be in a user message",
                        other.type_name()
                    )));
                }
            }))
        },
        |bi| at(mi, bi),
        warnings,
    )?;
    Ok(Value::Array(parts))
}

fn assistant(
    dialect: &Dialect,
    mi: usize,
    m: &Message,
    warnings: &mut Vec<String>,
) -> Result<Value, ModelError> {
    let mut calls = Vec::new();
    let mut reasoning = Replayed::default();
    for (bi, b) in m.content.iter().enumerate() {
        match b {
            Block::Text(_) | Block::Json { .. } | Block::CachePoint { .. } => {}
            Block::Thinking(t) => reasoning.take(dialect, t, &at(mi, bi), warnings),
            Block::ToolCall { tool_call: c } => {
                if c.signature.is_some() || c.item_id.is_some() {
                    let from = c.provider.as_deref().unwrap_or("another provider");
                    if from != dialect.provider {
                        warnings.push(format!(
                            "{}: {from} tool call signature dropped",
                            at(mi, bi)
                        ));
                    }
                }
                calls.push(json!({
                    "id": call_id(&c.id),
                    "type": "function",
                    "function": {"name": c.name, "arguments": arguments_text(c)},
                }));
            }
            other => {
                return Err(unsupported(format!(
                    "{}: OpenAI Chat cannot take {} blocks in an assistant message",
                    at(mi, bi),
                    other.type_name()
                )));
            }
        }
    }
    let mut msg = Map::new();
    msg.insert("role".into(), json!("assistant"));
    let content = if has_cache_point(&m.content) {
        // Text parts, so that a cache point has one to mark.
        Value::Array(parts_with_breakpoints(
            &m.content,
            |_, b| {
                Ok(match b {
                    Block::Text(t) if !t.text.is_empty() => {
                        Some(json!({"type": "text", "text": t.text}))
                    }
                    Block::Json { json } => Some(json!({"type": "text", "text": json_text(json)})),
                    _ => None,
                })
            },
            |bi| at(mi, bi),
            warnings,
        )?)
    } else {
        let text = texts(&m.content);
        if text.is_empty() && !calls.is_empty() {
            Value::Null
        } else {
            json!(text)
        }
    };
    msg.insert("content".into(), content);
    reasoning.write(dialect, !calls.is_empty(), &mut msg);
    if !calls.is_empty() {
        msg.insert("tool_calls".into(), Value::Array(calls));
    }
    Ok(Value::Object(msg))
}

/// The reasoning of an assistant message that goes back to its host.
#[derive(Default)]
struct Replayed {
    text: Option<String>,
    details: Vec<Value>,
}

impl Replayed {
    /// A thinking block: kept when the host takes its own reasoning back,
    /// else dropped with a warning (when it holds anything).
    fn take(
        &mut self,
        dialect: &Dialect,
        t: &parlance_format::Thinking,
        where_: &str,
        warnings: &mut Vec<String>,
    ) {
        let own = t.provider.as_deref() == Some(dialect.provider);
        match dialect.replay {
            Replay::Text { .. } | Replay::ThinkTags if own => {
                self.text
                    .get_or_insert_with(String::new)
                    .push_str(&t.thinking);
                return;
            }
            Replay::ReasoningDetails if own => {
                // The items as the host returned them, kept whole.
                let items = t
                    .encrypted_content
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<Value>(s).ok());
                if let Some(Value::Array(items)) = items {
                    self.details.extend(items);
                    return;
                }
            }
            _ => {}
        }
        if t.thinking.is_empty() && !t.has_opaque_data() {
            return;
        }
        let from = t.provider.as_deref().unwrap_or("an unknown provider");
        let why = match dialect.replay {
            Replay::Never => format!("{} takes no reasoning back", dialect.provider),
            Replay::ReasoningDetails if own => format!(
                "{} takes its reasoning back only as the reasoning_details it returned",
                dialect.provider
            ),
            _ => format!("{} takes back only its own reasoning", dialect.provider),
        };
        warnings.push(format!("{where_}: thinking dropped (from {from}: {why})"));
    }

    fn write(self, dialect: &Dialect, has_calls: bool, msg: &mut Map<String, Value>) {
        match dialect.replay {
            // DeepSeek refuses a tool-call turn without it in thinking mode.
            Replay::Text {
                field,
                required_with_calls,
            } if self.text.is_some() || (has_calls && required_with_calls) => {
                msg.insert(field.into(), json!(self.text.unwrap_or_default()));
            }
            Replay::ReasoningDetails if !self.details.is_empty() => {
                msg.insert("reasoning_details".into(), Value::Array(self.details));
            }
            Replay::ThinkTags => {
                let Some(thinking) = self.text.filter(|t| !t.is_empty()) else {
                    return;
                };
                match msg.get_mut("content") {
                    Some(Value::String(text)) => *text = crate::think_tags::write(&thinking, text),
                    // Text parts (a cache point marks one): the tags first.
                    Some(Value::Array(parts)) => parts.insert(
                        0,
                        json!({"type": "text", "text": crate::think_tags::write(&thinking, "")}),
                    ),
                    Some(c) => *c = json!(crate::think_tags::write(&thinking, "")),
                    None => {
                        msg.insert(
                            "content".into(),
                            json!(crate::think_tags::write(&thinking, "")),
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

/// Text and JSON blocks as one text (the API's string content).
fn texts(blocks: &[Block]) -> String {
    let mut text = String::new();
    for b in blocks {
        match b {
            Block::Text(t) => text.push_str(&t.text),
            Block::Json { json } => text.push_str(&json_text(json)),
            _ => {}
        }
    }
    text
}
