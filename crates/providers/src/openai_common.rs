//! What the two OpenAI APIs share: the error shape (`{"error": {"message",
//! "type", "code"}}`) and how tool call arguments are written; and what
//! the Chat-shaped request decoders (OpenAI Chat Completions, Ollama's chat
//! API) share: the `tools` list.

use parlance_format::{ToolCall, ToolSpec};
use parlance_model::ModelError;
use serde_json::Value;

use crate::wire::{malformed, opt_str, str_field, unread};

/// An error answer → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<std::time::Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let e = v.get("error").unwrap_or(&Value::Null);
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(300).collect());
    let code = e.get("code").and_then(Value::as_str).unwrap_or("");
    let ty = e.get("type").and_then(Value::as_str).unwrap_or("");
    from_error(status, code, ty, message, retry_after)
}

pub(crate) fn from_error(
    status: u16,
    code: &str,
    ty: &str,
    message: String,
    retry_after: Option<std::time::Duration>,
) -> ModelError {
    if code == "insufficient_quota" || ty == "insufficient_quota" {
        return ModelError::QuotaExceeded { message };
    }
    if code == "context_length_exceeded" {
        return ModelError::ContextTooLong { message };
    }
    match status {
        401 => ModelError::Authentication { message },
        403 => ModelError::Permission { message },
        429 => ModelError::RateLimited {
            message,
            retry_after,
        },
        503 => ModelError::Overloaded {
            message,
            retry_after,
        },
        400 | 404 | 409 | 413 | 422 => ModelError::InvalidRequest { message },
        s if s >= 500 || s == 408 => ModelError::Server { status: s, message },
        // In-stream errors carry no status: judge by their type.
        _ => match ty {
            "rate_limit_exceeded" | "rate_limit_error" => ModelError::RateLimited {
                message,
                retry_after,
            },
            "server_error" | "api_error" => ModelError::Server {
                status: 500,
                message,
            },
            _ => ModelError::InvalidRequest { message },
        },
    }
}

/// A tool call's arguments as the JSON text both APIs carry: the text the
/// model wrote when it was not valid JSON, else the arguments written out.
pub(crate) fn arguments_text(c: &ToolCall) -> String {
    match &c.raw_arguments {
        Some(raw) if c.arguments.is_null() => raw.clone(),
        _ => serde_json::to_string(&c.arguments).expect("json"),
    }
}

/// Marks a content part as the end of a cached prefix: OpenAI's explicit
/// breakpoint (Chat and Responses input parts). Its lifetime is the
/// request's (`prompt_cache_options.ttl`, at least 30 minutes): a cache
/// point asking for an hour is told it may get less.
pub(crate) fn mark_breakpoint(
    part: &mut Value,
    point: &parlance_format::CachePoint,
    where_: &str,
    warnings: &mut Vec<String>,
) {
    part["prompt_cache_breakpoint"] = serde_json::json!({"mode": "explicit"});
    if let Some(ttl) = point.ttl.as_deref().filter(|t| *t != "5m") {
        warnings.push(format!(
            "{where_}: cache point ttl {ttl} not promised: OpenAI keeps a cached prefix for the request's prompt_cache_options.ttl (30m)"
        ));
    }
}

/// Parts with the cache points after them turned into breakpoints: each
/// block is `Some(part)` or, for a cache point, `None`. A cache point
/// with no part before it in the same list is dropped with a warning.
pub(crate) fn parts_with_breakpoints(
    blocks: &[parlance_format::Block],
    mut part: impl FnMut(usize, &parlance_format::Block) -> Result<Option<Value>, ModelError>,
    where_: impl Fn(usize) -> String,
    warnings: &mut Vec<String>,
) -> Result<Vec<Value>, ModelError> {
    let mut out: Vec<Value> = Vec::with_capacity(blocks.len());
    let mut last_was_part = false;
    for (i, b) in blocks.iter().enumerate() {
        if let parlance_format::Block::CachePoint { cache_point } = b {
            match out.last_mut().filter(|_| last_was_part) {
                Some(p) => mark_breakpoint(p, cache_point, &where_(i), warnings),
                None => warnings.push(format!(
                    "{}: cache point dropped: OpenAI has no breakpoint for what comes before it",
                    where_(i)
                )),
            }
            continue;
        }
        match part(i, b)? {
            Some(p) => {
                out.push(p);
                last_was_part = true;
            }
            None => last_was_part = false,
        }
    }
    Ok(out)
}

/// Whether any block is a cache point.
pub(crate) fn has_cache_point(blocks: &[parlance_format::Block]) -> bool {
    blocks
        .iter()
        .any(|b| matches!(b, parlance_format::Block::CachePoint { .. }))
}

/// What differs in how the Chat-shaped APIs declare tools.
pub(crate) struct ChatTools {
    /// `function.strict` is read (OpenAI); elsewhere it is an unknown
    /// field, warned of as unread (Ollama).
    pub strict: bool,
    /// Tools of a `type` other than `function` (OpenAI's hosted tools) are
    /// dropped with a warning; when false (Ollama, which has only function
    /// tools) the `type` is not looked at.
    pub drop_other_types: bool,
}

/// A request's `tools`, `[{"type": "function", "function": {"name",
/// "description", "parameters"}}]`, as tool specs; unread fields are named
/// in `warnings`, a tool without a function or a name is an error naming
/// its place (`tools[1].function.name`).
pub(crate) fn chat_tools(
    body: &serde_json::Map<String, Value>,
    shape: &ChatTools,
    warnings: &mut Vec<String>,
) -> Result<Vec<ToolSpec>, ModelError> {
    let mut tools = Vec::new();
    for (i, t) in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let what = format!("tools[{i}]");
        if shape.drop_other_types
            && let Some(ty) = t.get("type").and_then(Value::as_str)
            && ty != "function"
        {
            warnings.push(format!(
                "{what}: dropped: {ty} tools are not supported yet (only function tools)"
            ));
            continue;
        }
        unread(t, &["type", "function"], &what, &[], warnings);
        let fw = format!("{what}.function");
        let f = t
            .get("function")
            .ok_or_else(|| malformed(format!("{fw}: missing")))?;
        let known: &[&str] = if shape.strict {
            &["name", "description", "parameters", "strict"]
        } else {
            &["name", "description", "parameters"]
        };
        unread(f, known, &fw, &[], warnings);
        tools.push(ToolSpec {
            name: str_field(f, "name", &fw)?.to_string(),
            description: opt_str(f, "description"),
            // No parameters is a function of no arguments.
            input_schema: f
                .get("parameters")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object"})),
            strict: if shape.strict {
                f.get("strict").and_then(Value::as_bool)
            } else {
                None
            },
            cache_point: None,
        });
    }
    Ok(tools)
}
