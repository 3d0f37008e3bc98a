//! An Ollama `/api/chat` request body → canonical (for `parlance
//! convert`). Every field is read or named: `options` it has no canonical
//! name for (`num_ctx`, `min_p`…), `keep_alive`, `format: "json"`,
//! `logprobs` are kept for this API (`extra.ollama`). Calls without an id
//! get one made up (not sent back); a result without `tool_call_id` is
//! paired with the earliest unanswered call of its `tool_name`, and one
//! with neither (as Ollama's own clients send them) with the earliest
//! unanswered call. Ollama
//! streams unless `stream: false`.

use parlance_format::{Block, Media, Message, Role, Thinking, ToolResult};
use parlance_model::{Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning};
use serde_json::{Map, Value};

use super::decode_response::tool_call;
use super::{NAME, PROVIDER};
use crate::openai_common::{ChatTools, chat_tools};
use crate::wire::{
    DecodedRequest, checked_request, count, malformed, obj, opt_str, str_field, unread,
};

/// A request body → the conversation, tools and options it carries.
pub fn decode_request(body: &Value) -> Result<DecodedRequest, ModelError> {
    checked_request(body, decode)
}

/// The media type of base64 image data, from its first bytes (Ollama
/// sends none).
fn sniff(data: &str) -> Option<&'static str> {
    [
        ("iVBORw0KGgo", "image/png"),
        ("/9j/", "image/jpeg"),
        ("R0lGOD", "image/gif"),
        ("UklGR", "image/webp"),
    ]
    .iter()
    .find(|(p, _)| data.starts_with(p))
    .map(|(_, t)| *t)
}

fn text_of(m: &Value, key: &str, what: &str) -> Result<Option<String>, ModelError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(malformed(format!("{what}.{key}: expected a string"))),
    }
}

fn decode(body: &Value) -> Result<DecodedRequest, ModelError> {
    let b = obj(body, "request")?;
    let msgs = b
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("messages: expected an array"))?;
    let mut warnings = Vec::new();
    let mut messages: Vec<Message> = Vec::new();
    // Calls not answered yet: (id, name).
    let mut open: Vec<(String, String)> = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let what = format!("messages[{i}]");
        let role = str_field(m, "role", &what)?;
        let content = text_of(m, "content", &what)?.unwrap_or_default();
        match role {
            "system" | "user" => {
                unread(m, &["role", "content", "images"], &what, &[], &mut warnings);
                let mut blocks = Vec::new();
                if !content.is_empty() {
                    blocks.push(Block::text(content));
                }
                for (k, img) in m
                    .get("images")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let w = format!("{what}.images[{k}]");
                    let data = img
                        .as_str()
                        .ok_or_else(|| malformed(format!("{w}: expected base64 text")))?;
                    let media_type = sniff(data).unwrap_or_else(|| {
                        warnings.push(format!(
                            "{w}: an image of unknown type read as image/png (Ollama sends no media type)"
                        ));
                        "image/png"
                    });
                    blocks.push(Block::Image {
                        image: Media {
                            data: Some(data.to_string()),
                            media_type: Some(media_type.into()),
                            ..Media::default()
                        },
                    });
                }
                let role = if role == "system" {
                    Role::System
                } else {
                    Role::User
                };
                if role == Role::System && blocks.iter().any(|b| matches!(b, Block::Image { .. })) {
                    return Err(malformed(format!(
                        "{what}.images: a system message cannot carry images"
                    )));
                }
                messages.push(Message::new(role, blocks));
            }
            "assistant" => {
                unread(
                    m,
                    &["role", "content", "thinking", "tool_calls"],
                    &what,
                    &[(
                        "images",
                        "dropped: images in an assistant message have no canonical form",
                    )],
                    &mut warnings,
                );
                let mut blocks = Vec::new();
                if let Some(t) = text_of(m, "thinking", &what)?.filter(|t| !t.is_empty()) {
                    blocks.push(Block::Thinking(Thinking {
                        thinking: t,
                        provider: Some(PROVIDER.into()),
                        ..Default::default()
                    }));
                }
                if !content.is_empty() {
                    blocks.push(Block::text(content));
                }
                match m.get("tool_calls") {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(calls)) => {
                        for (k, tc) in calls.iter().enumerate() {
                            let w = format!("{what}.tool_calls[{k}]");
                            unread(tc, &["id", "type", "function"], &w, &[], &mut warnings);
                            if let Some(f) = tc.get("function") {
                                unread(
                                    f,
                                    &["name", "arguments"],
                                    &format!("{w}.function"),
                                    &[(
                                        "index",
                                        "dropped: the call's position is its place in the list",
                                    )],
                                    &mut warnings,
                                );
                            }
                            let call = tool_call(tc, &w, k, &format!("request message {i}"))?;
                            open.push((call.id.clone(), call.name.clone()));
                            blocks.push(Block::ToolCall { tool_call: call });
                        }
                    }
                    Some(_) => {
                        return Err(malformed(format!("{what}.tool_calls: expected an array")));
                    }
                }
                messages.push(Message::new(Role::Assistant, blocks));
            }
            "tool" => {
                unread(
                    m,
                    &["role", "content", "tool_name", "tool_call_id"],
                    &what,
                    &[],
                    &mut warnings,
                );
                let name = text_of(m, "tool_name", &what)?;
                let id = match text_of(m, "tool_call_id", &what)? {
                    Some(id) => {
                        open.retain(|(o, _)| *o != id);
                        id
                    }
                    None => match name.as_deref() {
                        Some(name) => {
                            let k = open.iter().position(|(_, n)| n == name).ok_or_else(|| {
                                malformed(format!(
                                    "{what}.tool_name: no call of {name:?} is waiting for a result"
                                ))
                            })?;
                            open.remove(k).0
                        }
                        // Neither: Ollama's own clients (and its older
                        // API) answer calls in the order they were made.
                        None if !open.is_empty() => open.remove(0).0,
                        None => {
                            return Err(malformed(format!(
                                "{what}: a tool result, but no tool call is waiting for one"
                            )));
                        }
                    },
                };
                let result = Block::tool_result(ToolResult {
                    tool_call_id: id,
                    name,
                    content: if content.is_empty() {
                        Vec::new()
                    } else {
                        vec![Block::text(content)]
                    },
                    status: Default::default(),
                    artifact: None,
                    approval: None,
                });
                match messages.last_mut() {
                    Some(last) if last.role == Role::Tool => last.content.push(result),
                    _ => messages.push(Message::new(Role::Tool, vec![result])),
                }
            }
            other => return Err(malformed(format!("{what}.role: unknown role {other:?}"))),
        }
    }
    let tools = chat_tools(
        b,
        &ChatTools {
            strict: false,
            drop_other_types: false,
        },
        &mut warnings,
    )?;
    let mut o = ModelOptions::default();
    let mut extra = Map::new();
    let mut stream = true;
    for (k, v) in b {
        if v.is_null() {
            continue;
        }
        match k.as_str() {
            "model" | "messages" | "tools" => {}
            "stream" => {
                stream = v
                    .as_bool()
                    .ok_or_else(|| malformed("stream: expected a boolean"))?
            }
            "options" => {
                let opts = v
                    .as_object()
                    .ok_or_else(|| malformed("options: expected an object"))?;
                let mut rest = Map::new();
                for (ok, ov) in opts {
                    let w = format!("options.{ok}");
                    let num = || {
                        ov.as_f64()
                            .ok_or_else(|| malformed(format!("{w}: expected a number")))
                    };
                    let int = || {
                        ov.as_u64()
                            .ok_or_else(|| malformed(format!("{w}: expected a whole number")))
                    };
                    match ok.as_str() {
                        "num_predict" if ov.as_i64().is_some_and(|n| n < 0) => {
                            rest.insert(ok.clone(), ov.clone());
                        }
                        "num_predict" => o.max_tokens = Some(count(int()?)),
                        "temperature" => o.temperature = Some(num()?),
                        "top_p" => o.top_p = Some(num()?),
                        "top_k" => o.top_k = Some(count(int()?)),
                        "seed" if ov.as_u64().is_some() => o.seed = ov.as_u64(),
                        "stop" => {
                            o.stop = match ov {
                                Value::String(s) => vec![s.clone()],
                                Value::Array(a) => a
                                    .iter()
                                    .map(|s| {
                                        s.as_str().map(str::to_string).ok_or_else(|| {
                                            malformed(format!("{w}: expected strings"))
                                        })
                                    })
                                    .collect::<Result<_, _>>()?,
                                _ => {
                                    return Err(malformed(format!(
                                        "{w}: expected a string or a list"
                                    )));
                                }
                            }
                        }
                        // num_ctx, min_p, repeat_penalty, a negative seed…
                        _ => {
                            rest.insert(ok.clone(), ov.clone());
                        }
                    }
                }
                if !rest.is_empty() {
                    extra.insert("options".into(), Value::Object(rest));
                }
            }
            "think" => {
                o.reasoning = Some(match v {
                    Value::Bool(true) => Reasoning {
                        include_thoughts: true,
                        ..Reasoning::default()
                    },
                    Value::Bool(false) => Reasoning {
                        effort: Some(Effort::None),
                        ..Reasoning::default()
                    },
                    Value::String(s) => match s.as_str() {
                        "low" | "medium" | "high" | "max" => Reasoning {
                            effort: Effort::parse(s),
                            ..Reasoning::default()
                        },
                        other => {
                            return Err(malformed(format!(
                                "think: expected true, false, low, medium, high or max, not {other:?}"
                            )));
                        }
                    },
                    _ => return Err(malformed("think: expected a boolean or a level")),
                })
            }
            "format" if v.is_object() => {
                o.output_schema = Some(OutputSchema {
                    // Ollama's format has no name; canonical schemas do.
                    name: "response".into(),
                    schema: v.clone(),
                    description: None,
                    strict: None,
                })
            }
            _ => {
                // keep_alive, format "json", logprobs, top_logprobs…
                extra.insert(k.clone(), v.clone());
            }
        }
    }
    o.extra = crate::wire::scoped_extra(extra, NAME);
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
