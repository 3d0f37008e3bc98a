//! Canonical request → Messages API request body.

use parlance_format::{Block, CachePoint, Media, Message, Role, Thinking};
use parlance_model::{Effort, ModelError, ModelRequest, ToolChoice};
use serde_json::{Map, Value, json};

use super::{NAME, PROVIDER};
use crate::wire::{
    Encoded, at, is_own, json_text, media_type, merge_extra, output_schema_extras, unsupported,
    wire_id,
};

/// The `max_tokens` sent when the request sets none (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// `tool_use.id` / `tool_use_id` must match `^[a-zA-Z0-9_-]+$`.
pub(crate) fn tool_id(id: &str) -> String {
    wire_id(id, 128, id_char).into_owned()
}

/// Thinking is on when a budget is set (`enabled`) or thoughts are asked
/// for (`adaptive`); an effort alone only sets `output_config.effort`.
fn thinking_enabled(req: &ModelRequest) -> bool {
    req.options
        .reasoning
        .as_ref()
        .is_some_and(|r| r.budget_tokens.is_some() || r.wants_thoughts())
}

/// Builds the request body for `model`.
pub fn encode_request(
    req: &ModelRequest,
    model: &str,
    stream: bool,
) -> Result<Encoded, ModelError> {
    let mut warnings = Vec::new();
    let mut thinking = thinking_enabled(req);
    if thinking && !last_tool_turn_starts_with_own_thinking(&req.messages) {
        // The API refuses a tool loop whose last assistant turn does not
        // start with its (signed) thinking: ask for no thinking instead.
        warnings.push(
            "thinking turned off for this request: the last assistant tool-use turn has no Anthropic thinking block to start with"
                .to_string(),
        );
        thinking = false;
    }
    let mut system: Vec<Value> = Vec::new();
    let mut messages: Vec<(String, Vec<Value>)> = Vec::new();
    for (mi, m) in req.messages.iter().enumerate() {
        let (role, blocks) = match m.role {
            Role::System => {
                // The API takes system text only at the top: hoisted there.
                system.extend(user_blocks(mi, &m.content, &mut warnings)?);
                continue;
            }
            Role::User => ("user", user_blocks(mi, &m.content, &mut warnings)?),
            Role::Tool => ("user", tool_results(mi, m, &mut warnings)?),
            Role::Assistant => (
                "assistant",
                assistant_blocks(mi, m, thinking, &mut warnings)?,
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        // Consecutive same-role messages become one (tool results first,
        // then the user's text, as the API wants).
        match messages.last_mut() {
            Some((r, existing)) if r == role => existing.extend(blocks),
            _ => messages.push((role.to_string(), blocks)),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, blocks)| {
            let content = match blocks.as_slice() {
                [b] if role == "user"
                    && b.get("type") == Some(&json!("text"))
                    && b.as_object().is_some_and(|o| o.len() == 2) =>
                {
                    b["text"].clone()
                }
                _ => Value::Array(blocks),
            };
            json!({"role": role, "content": content})
        })
        .collect();

    let o = &req.options;
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert(
        "max_tokens".into(),
        json!(o.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    body.insert("messages".into(), Value::Array(messages));
    match system.as_slice() {
        [] => {}
        // One plain text block: the string form.
        [b] if b.as_object().is_some_and(|o| o.len() == 2) => {
            body.insert("system".into(), b["text"].clone());
        }
        _ => {
            body.insert("system".into(), Value::Array(system));
        }
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                let mut tool = Map::new();
                tool.insert("name".into(), json!(t.name));
                if let Some(d) = &t.description {
                    tool.insert("description".into(), json!(d));
                }
                tool.insert("input_schema".into(), t.input_schema.clone());
                if let Some(strict) = t.strict {
                    tool.insert("strict".into(), json!(strict));
                }
                if let Some(c) = &t.cache_point {
                    tool.insert("cache_control".into(), cache_control(c));
                }
                Value::Object(tool)
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let mut choice = match o.tool_choice.as_ref().unwrap_or(&ToolChoice::Auto) {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
        };
        if o.parallel_tool_calls == Some(false) {
            choice["disable_parallel_tool_use"] = json!(true);
        }
        if o.tool_choice.is_some() || o.parallel_tool_calls == Some(false) {
            body.insert("tool_choice".into(), choice);
        }
    } else if o.tool_choice.is_some() || o.parallel_tool_calls.is_some() {
        warnings.push("tool_choice dropped: Anthropic takes it only with tools".into());
    }
    if let Some(r) = &o.reasoning {
        if thinking {
            let config = match r.budget_tokens {
                Some(b) => json!({"type": "enabled", "budget_tokens": b}),
                None => json!({"type": "adaptive"}),
            };
            body.insert("thinking".into(), config);
        } else if r.effort == Some(Effort::None) {
            body.insert("thinking".into(), json!({"type": "disabled"}));
        }
    }
    let mut output_config = Map::new();
    if let Some(e) = o
        .reasoning
        .as_ref()
        .and_then(|r| r.effort)
        .filter(|e| *e != Effort::None)
    {
        // Anthropic's levels: low, medium, high, xhigh, max.
        let effort = match e {
            Effort::Minimal | Effort::Low => "low",
            other => other.as_str(),
        };
        output_config.insert("effort".into(), json!(effort));
    }
    if o.seed.is_some() {
        warnings.push("seed dropped: Anthropic takes no seed".into());
    }
    if let Some(s) = &o.output_schema {
        output_schema_extras(s, "Anthropic", &mut warnings);
        output_config.insert(
            "format".into(),
            json!({"type": "json_schema", "schema": s.schema}),
        );
    }
    if !output_config.is_empty() {
        body.insert("output_config".into(), Value::Object(output_config));
    }
    if !o.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(o.stop));
    }
    if let Some(t) = o.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(p) = o.top_p {
        body.insert("top_p".into(), json!(p));
    }
    if let Some(k) = o.top_k {
        body.insert("top_k".into(), json!(k));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    merge_extra(&mut body, &o.extra, PROVIDER, NAME);
    Ok(Encoded {
        body: Value::Object(body),
        warnings,
    })
}

fn last_tool_turn_starts_with_own_thinking(messages: &[Message]) -> bool {
    let Some(last) = messages.iter().rev().find(|m| m.role == Role::Assistant) else {
        return true;
    };
    if !last
        .content
        .iter()
        .any(|b| matches!(b, Block::ToolCall { .. }))
    {
        return true;
    }
    matches!(last.content.first(), Some(Block::Thinking(t)) if is_own(&t.provider, PROVIDER) && (t.signature.is_some() || t.redacted.is_some()))
}

fn media_block(where_: &str, ty: &str, m: &Media) -> Result<Value, ModelError> {
    let source = if let Some(data) = &m.data {
        json!({"type": "base64", "media_type": media_type(where_, m)?, "data": data})
    } else if let Some(url) = &m.url {
        json!({"type": "url", "url": url})
    } else if let (Some(id), true) = (&m.file_id, is_own(&m.provider, PROVIDER)) {
        json!({"type": "file", "file_id": id})
    } else {
        return Err(unsupported(format!(
            "{where_}: a file id from another provider cannot be sent to Anthropic"
        )));
    };
    match ty {
        "image" => Ok(json!({"type": "image", "source": source})),
        "file" => {
            let mut doc = json!({"type": "document", "source": source});
            if let Some(f) = &m.filename {
                doc["title"] = json!(f);
            }
            Ok(doc)
        }
        _ => Err(unsupported(format!(
            "{where_}: Anthropic does not take audio"
        ))),
    }
}

fn content_block(where_: &str, b: &Block) -> Result<Value, ModelError> {
    Ok(match b {
        Block::Text(t) => json!({"type": "text", "text": t.text}),
        Block::Json { json } => json!({"type": "text", "text": json_text(json)}),
        Block::Image { image } => media_block(where_, "image", image)?,
        Block::File { file } => media_block(where_, "file", file)?,
        Block::Audio { audio } => media_block(where_, "audio", audio)?,
        other => {
            return Err(unsupported(format!(
                "{where_}: {} blocks cannot be sent here",
                other.type_name()
            )));
        }
    })
}

/// `cache_control` for a cache point.
fn cache_control(c: &CachePoint) -> Value {
    match &c.ttl {
        Some(ttl) => json!({"type": "ephemeral", "ttl": ttl}),
        None => json!({"type": "ephemeral"}),
    }
}

/// A cache point marks the block written just before it, in the same
/// list; when that block was not written (empty text, dropped thinking)
/// or cannot carry one, it is dropped with a warning.
fn mark(out: &mut [Value], marked: bool, c: &CachePoint, where_: &str, warnings: &mut Vec<String>) {
    match out.last_mut() {
        Some(Value::Object(b)) if marked => {
            b.insert("cache_control".into(), cache_control(c));
        }
        _ => warnings.push(format!(
            "{where_}: cache point dropped: the block before it is not sent to Anthropic or cannot be marked"
        )),
    }
}

fn user_blocks(
    mi: usize,
    content: &[Block],
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    let mut out = Vec::with_capacity(content.len());
    let mut marked = false;
    for (bi, b) in content.iter().enumerate() {
        match b {
            Block::CachePoint { cache_point } => {
                mark(&mut out, marked, cache_point, &at(mi, bi), warnings);
                marked = false;
            }
            // The API refuses empty text blocks.
            Block::Text(t) if t.text.is_empty() => marked = false,
            _ => {
                out.push(content_block(&at(mi, bi), b)?);
                marked = true;
            }
        }
    }
    Ok(out)
}

fn tool_results(
    mi: usize,
    m: &Message,
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    let mut out = Vec::new();
    let mut marked = false;
    for (bi, b) in m.content.iter().enumerate() {
        let r = match b {
            Block::ToolResult { tool_result } => tool_result,
            Block::CachePoint { cache_point } => {
                mark(&mut out, marked, cache_point, &at(mi, bi), warnings);
                marked = false;
                continue;
            }
            _ => {
                return Err(unsupported(format!(
                    "{}: a call still waiting for approval cannot be sent to a model",
                    at(mi, bi)
                )));
            }
        };
        let w = at(mi, bi);
        let content = match r.content.as_slice() {
            [] => json!(""),
            [Block::Text(t)] => json!(t.text),
            blocks => {
                let mut parts: Vec<Value> = Vec::new();
                let mut inner_marked = false;
                for (ci, c) in blocks.iter().enumerate() {
                    let cw = format!("{w}.tool_result.content[{ci}]");
                    match c {
                        Block::CachePoint { cache_point } => {
                            mark(&mut parts, inner_marked, cache_point, &cw, warnings);
                            inner_marked = false;
                        }
                        _ => {
                            parts.push(content_block(&cw, c)?);
                            inner_marked = true;
                        }
                    }
                }
                Value::Array(parts)
            }
        };
        let mut block = json!({"type": "tool_result", "tool_use_id": tool_id(&r.tool_call_id), "content": content});
        if r.is_error() {
            block["is_error"] = json!(true);
        }
        out.push(block);
        marked = true;
    }
    Ok(out)
}

fn thinking_block(t: &Thinking) -> Option<Value> {
    if let Some(data) = &t.redacted {
        return Some(json!({"type": "redacted_thinking", "data": data}));
    }
    let sig = t.signature.as_ref()?;
    Some(json!({"type": "thinking", "thinking": t.thinking, "signature": sig}))
}

fn assistant_blocks(
    mi: usize,
    m: &Message,
    thinking: bool,
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    let mut out = Vec::with_capacity(m.content.len());
    // Whether the block before was written and may carry a cache point.
    let mut marked = false;
    for (bi, b) in m.content.iter().enumerate() {
        let w = at(mi, bi);
        let written = out.len();
        match b {
            Block::CachePoint { cache_point } => {
                mark(&mut out, marked, cache_point, &w, warnings);
                marked = false;
                continue;
            }
            Block::Thinking(t) => {
                if !is_own(&t.provider, PROVIDER) {
                    // The one rule for foreign reasoning: it is dropped,
                    // never sent where a signature would be checked.
                    if !t.thinking.is_empty() || t.has_opaque_data() {
                        warnings.push(format!(
                            "{w}: thinking from {} dropped (Anthropic accepts only its own signed thinking)",
                            t.provider.as_deref().unwrap_or("an unknown provider")
                        ));
                    }
                } else if thinking && let Some(v) = thinking_block(t) {
                    // Sent back unchanged: same text, same signature, same place.
                    out.push(v);
                }
            }
            Block::Text(t) if t.text.is_empty() => {}
            Block::Text(t) => out.push(json!({"type": "text", "text": t.text})),
            Block::Json { json } => out.push(json!({"type": "text", "text": json_text(json)})),
            Block::ToolCall { tool_call: c } => {
                let input = match &c.arguments {
                    Value::Object(_) => c.arguments.clone(),
                    // The API needs an object; arguments that were not JSON
                    // (their result told the model so) go as an empty one.
                    _ => json!({}),
                };
                if c.signature.is_some() && !is_own(&c.provider, PROVIDER) {
                    warnings.push(format!(
                        "{w}: {} tool call signature dropped",
                        c.provider.as_deref().unwrap_or("foreign")
                    ));
                }
                out.push(json!({"type": "tool_use", "id": tool_id(&c.id), "name": c.name, "input": input}));
            }
            other => {
                return Err(unsupported(format!(
                    "{w}: Anthropic cannot take {} blocks from the assistant",
                    other.type_name()
                )));
            }
        }
        // Thinking blocks take no cache_control.
        marked = out.len() > written && !matches!(b, Block::Thinking(_));
    }
    Ok(out)
}
