//! Canonical request → Ollama `/api/chat` request body.
//!
//! Sampling settings go in `options` (`num_predict` is the output limit),
//! reasoning is `think` (a level, or `false`), an output schema is
//! `format`. Messages carry text as a string, images as bare base64,
//! `thinking` (Ollama's own, back to Ollama only), tool calls with their
//! arguments as an object, and results as `tool` messages naming the tool
//! (`tool_name`) and the call (`tool_call_id`). Ollama streams unless told
//! not to, so `stream` is always sent.

use std::collections::HashMap;

use parlance_format::{Block, Message, Role};
use parlance_model::{Effort, ModelError, ModelRequest, ToolChoice};
use serde_json::{Map, Value, json};

use super::{MADE_UP_ID, NAME, PROVIDER};
use crate::wire::{Encoded, at, is_own, json_text, merge_extra, unsupported};

/// Builds the request body for `model`.
pub fn encode_request(
    req: &ModelRequest,
    model: &str,
    stream: bool,
) -> Result<Encoded, ModelError> {
    let mut warnings = Vec::new();
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut messages = Vec::with_capacity(req.messages.len());
    for (mi, m) in req.messages.iter().enumerate() {
        encode_message(mi, m, &mut names, &mut messages, &mut warnings)?;
    }
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut f = Map::new();
                f.insert("name".into(), json!(t.name));
                if let Some(d) = &t.description {
                    f.insert("description".into(), json!(d));
                }
                f.insert("parameters".into(), t.input_schema.clone());
                if t.strict.is_some() {
                    warnings.push(format!(
                        "tools[{i}].strict dropped: Ollama has no strict tool schemas"
                    ));
                }
                if t.cache_point.is_some() {
                    warnings.push(format!(
                        "tools[{i}]: cache point dropped: Ollama has no cache breakpoints"
                    ));
                }
                json!({"type": "function", "function": f})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let o = &req.options;
    match &o.tool_choice {
        None | Some(ToolChoice::Auto) => {}
        Some(other) => warnings.push(format!(
            "tool_choice {other:?} dropped: Ollama lets the model choose (no tool_choice)"
        )),
    }
    if o.parallel_tool_calls.is_some() {
        warnings.push("parallel_tool_calls dropped: Ollama has no such setting".into());
    }
    let mut options = Map::new();
    if let Some(n) = o.max_tokens {
        options.insert("num_predict".into(), json!(n));
    }
    if let Some(t) = o.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if let Some(p) = o.top_p {
        options.insert("top_p".into(), json!(p));
    }
    if let Some(k) = o.top_k {
        options.insert("top_k".into(), json!(k));
    }
    if let Some(s) = o.seed {
        options.insert("seed".into(), json!(s));
    }
    if !o.stop.is_empty() {
        options.insert("stop".into(), json!(o.stop));
    }
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    if let Some(r) = &o.reasoning {
        let think = match r.effort {
            Some(Effort::None) => json!(false),
            Some(Effort::Minimal | Effort::Low) => json!("low"),
            Some(Effort::Medium) => json!("medium"),
            Some(Effort::High) => json!("high"),
            Some(Effort::XHigh | Effort::Max) => json!("max"),
            None => json!(true),
        };
        if matches!(r.effort, Some(Effort::Minimal)) {
            warnings.push("reasoning.effort minimal sent as low (Ollama's lowest level)".into());
        }
        if matches!(r.effort, Some(Effort::XHigh)) {
            warnings.push("reasoning.effort xhigh sent as max (Ollama's highest level)".into());
        }
        if r.budget_tokens.is_some() {
            warnings
                .push("reasoning.budget_tokens dropped: Ollama takes a level, not a budget".into());
        }
        if r.summary.is_some() {
            warnings.push(
                "reasoning.summary dropped: Ollama returns the reasoning itself, not a summary"
                    .into(),
            );
        }
        body.insert("think".into(), think);
    }
    if let Some(s) = &o.output_schema {
        body.insert("format".into(), s.schema.clone());
        if s.description.is_some() || s.strict.is_some() {
            warnings.push(
                "output_schema.description/strict dropped: Ollama's format is the schema alone"
                    .into(),
            );
        }
    }
    // Ollama streams by default: say which.
    body.insert("stream".into(), json!(stream));
    merge_extra(&mut body, &o.extra, PROVIDER, NAME);
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

fn cache_dropped(where_: &str, warnings: &mut Vec<String>) {
    warnings.push(format!(
        "{where_}: cache point dropped: Ollama has no cache breakpoints"
    ));
}

/// Text, JSON as text, and images (bare base64) of a message.
fn text_and_images<'a>(
    mi: usize,
    content: &'a [Block],
    role: &str,
    warnings: &mut Vec<String>,
) -> Result<(String, Vec<&'a str>), ModelError> {
    let mut text = String::new();
    let mut images = Vec::new();
    for (bi, b) in content.iter().enumerate() {
        let w = at(mi, bi);
        // Ollama reads an image's type from its bytes; canonical inline
        // data must say it all the same (the one rule for every encoder).
        if let Block::Image { image: m } | Block::File { file: m } | Block::Audio { audio: m } = b
            && m.data.is_some()
        {
            crate::wire::media_type(&w, m)?;
        }
        match b {
            Block::Text(t) => text.push_str(&t.text),
            Block::Json { json } => text.push_str(&json_text(json)),
            Block::CachePoint { .. } => cache_dropped(&w, warnings),
            Block::Image { image } if role == "user" => match &image.data {
                Some(d) => images.push(d.as_str()),
                None => {
                    return Err(unsupported(format!(
                        "{w}: Ollama takes images only as inline data (base64), not by URL or file id"
                    )));
                }
            },
            other => {
                return Err(unsupported(format!(
                    "{w}: Ollama {role} messages cannot take {} blocks",
                    other.type_name()
                )));
            }
        }
    }
    Ok((text, images))
}

fn encode_message<'a>(
    mi: usize,
    m: &'a Message,
    names: &mut HashMap<&'a str, &'a str>,
    out: &mut Vec<Value>,
    warnings: &mut Vec<String>,
) -> Result<(), ModelError> {
    match m.role {
        Role::System | Role::User => {
            let role = if m.role == Role::System {
                "system"
            } else {
                "user"
            };
            let (text, images) = text_and_images(mi, &m.content, role, warnings)?;
            let mut msg = json!({"role": role, "content": text});
            if !images.is_empty() {
                msg["images"] = json!(images);
            }
            out.push(msg);
        }
        Role::Assistant => out.push(assistant(mi, m, names, warnings)?),
        Role::Tool => {
            for (bi, b) in m.content.iter().enumerate() {
                let w = at(mi, bi);
                match b {
                    Block::ToolResult { tool_result: r } => {
                        let (text, _) = text_and_images(mi, &r.content, "tool", warnings).map_err(
                            |e| match e {
                                ModelError::Unsupported { message } => unsupported(format!(
                                    "{w}.tool_result: {message} (tool results are text only)"
                                )),
                                other => other,
                            },
                        )?;
                        let mut msg = Map::new();
                        msg.insert("role".into(), json!("tool"));
                        msg.insert("content".into(), json!(text));
                        let name = r
                            .name
                            .as_deref()
                            .or_else(|| names.get(r.tool_call_id.as_str()).copied());
                        if let Some(name) = name {
                            msg.insert("tool_name".into(), json!(name));
                        }
                        if !r.tool_call_id.starts_with(MADE_UP_ID) {
                            msg.insert("tool_call_id".into(), json!(r.tool_call_id));
                        }
                        out.push(Value::Object(msg));
                    }
                    Block::CachePoint { .. } => cache_dropped(&w, warnings),
                    _ => {
                        return Err(unsupported(format!(
                            "{w}: a call still waiting for approval cannot be sent to a model"
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

fn assistant<'a>(
    mi: usize,
    m: &'a Message,
    names: &mut HashMap<&'a str, &'a str>,
    warnings: &mut Vec<String>,
) -> Result<Value, ModelError> {
    let mut text = String::new();
    let mut thinking = String::new();
    let mut calls = Vec::new();
    for (bi, b) in m.content.iter().enumerate() {
        let w = at(mi, bi);
        match b {
            Block::Text(t) => text.push_str(&t.text),
            Block::Json { json } => text.push_str(&json_text(json)),
            Block::CachePoint { .. } => cache_dropped(&w, warnings),
            Block::Thinking(t) if is_own(&t.provider, PROVIDER) => thinking.push_str(&t.thinking),
            Block::Thinking(t) => warnings.push(format!(
                "{w}: thinking from {} dropped (Ollama takes back only its own reasoning)",
                t.provider.as_deref().unwrap_or("an unknown provider")
            )),
            Block::ToolCall { tool_call: c } => {
                if c.signature.is_some() || c.item_id.is_some() {
                    let from = c.provider.as_deref().unwrap_or("another provider");
                    warnings.push(format!("{w}: {from} tool call signature dropped"));
                }
                let arguments = match &c.arguments {
                    Value::Object(_) => c.arguments.clone(),
                    Value::Null if c.raw_arguments.is_some() => {
                        warnings.push(format!(
                            "{w}: arguments that were not JSON sent as {{}} (Ollama takes an object)"
                        ));
                        json!({})
                    }
                    Value::Null => json!({}),
                    other => {
                        return Err(unsupported(format!(
                            "{w}: Ollama takes tool arguments as an object, not {other}"
                        )));
                    }
                };
                names.insert(c.id.as_str(), c.name.as_str());
                let mut call = json!({"function": {"name": c.name, "arguments": arguments}});
                if !c.id.starts_with(MADE_UP_ID) {
                    call["id"] = json!(c.id);
                }
                calls.push(call);
            }
            other => {
                return Err(unsupported(format!(
                    "{w}: Ollama cannot take {} blocks in an assistant message",
                    other.type_name()
                )));
            }
        }
    }
    let mut msg = Map::new();
    msg.insert("role".into(), json!("assistant"));
    msg.insert("content".into(), json!(text));
    if !thinking.is_empty() {
        msg.insert("thinking".into(), json!(thinking));
    }
    if !calls.is_empty() {
        msg.insert("tool_calls".into(), Value::Array(calls));
    }
    Ok(Value::Object(msg))
}
