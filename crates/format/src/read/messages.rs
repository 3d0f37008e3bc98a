//! Messages and what travels with them: roles, usage, finish reasons,
//! tool specs.

use serde_json::Value;

use super::blocks::{Place, cache_point, content};
use super::json::{Obj, Path, R, as_array, as_string, describe, free};
use crate::{FinishReason, FormatError, Message, Role, ToolSpec, Usage};

pub(super) fn role(v: &Value, path: &Path) -> R<Role> {
    let s = as_string(v, path)?;
    match s.as_str() {
        "system" => Ok(Role::System),
        "user" => Ok(Role::User),
        "assistant" => Ok(Role::Assistant),
        "tool" => Ok(Role::Tool),
        _ => Err(path.err(format!(
            "unknown role {s:?} (expected one of: system, user, assistant, tool)"
        ))),
    }
}

pub(crate) fn usage(v: &Value, path: &Path) -> R<Usage> {
    let obj = Obj::new(v, path, "usage")?;
    obj.only(
        &[
            "input_tokens",
            "output_tokens",
            "cached_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
        ],
        "usage",
    )?;
    let need = |k: &'static str| -> R<u64> {
        obj.opt_u64(k)?
            .ok_or_else(|| path.key(k).err("required field missing"))
    };
    Ok(Usage {
        input_tokens: need("input_tokens")?,
        output_tokens: need("output_tokens")?,
        cached_tokens: obj.opt_u64("cached_tokens")?.unwrap_or(0),
        cache_write_tokens: obj.opt_u64("cache_write_tokens")?,
        reasoning_tokens: obj.opt_u64("reasoning_tokens")?,
    })
}

pub(super) fn finish_reason(v: &Value, path: &Path) -> R<FinishReason> {
    let s = as_string(v, path)?;
    FinishReason::parse(&s).ok_or_else(|| {
        path.err(format!(
            "unknown finish reason {s:?} (expected one of: stop, tool_calls, length, content_filter, error, other)"
        ))
    })
}

pub(crate) fn message(v: &Value, path: &Path) -> R<Message> {
    let obj = Obj::new(v, path, "a message")?;
    obj.only(
        &[
            "id",
            "role",
            "content",
            "usage",
            "cost",
            "finish_reason",
            "finish_reason_raw",
            "finish_details",
            "provider",
            "model",
            "metadata",
        ],
        "a message",
    )?;
    let role = role(obj.req("role")?, &path.key("role"))?;
    let content = content(
        obj.req("content")?,
        &path.key("content"),
        Place::Message(role),
    )?;
    let finish_details = free_object(&obj, "finish_details")?;
    let metadata = free_object(&obj, "metadata")?;
    Ok(Message {
        id: obj.opt_str("id")?,
        role,
        content,
        usage: obj
            .opt("usage")
            .map(|u| usage(u, &path.key("usage")))
            .transpose()?,
        cost: obj.opt_cost("cost")?,
        finish_reason: obj
            .opt("finish_reason")
            .map(|f| finish_reason(f, &path.key("finish_reason")))
            .transpose()?,
        finish_reason_raw: obj.opt_str("finish_reason_raw")?,
        finish_details,
        provider: obj.opt_str("provider")?,
        model: obj.opt_str("model")?,
        metadata,
    })
}

/// An optional object kept as it is (depth-checked); `null` means absent.
fn free_object(obj: &Obj, key: &'static str) -> R<Option<serde_json::Map<String, Value>>> {
    match obj.opt(key) {
        None => Ok(None),
        Some(v @ Value::Object(m)) => {
            free(v, &obj.path.key(key))?;
            Ok(Some(m.clone()))
        }
        Some(other) => Err(obj
            .path
            .key(key)
            .err(format!("expected an object, got {}", describe(other)))),
    }
}

/// Reads a list of messages (without conversation-level checks).
pub(crate) fn messages(v: &Value, path: &Path) -> R<Vec<Message>> {
    let items = as_array(v, path, "a list of messages")?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        out.push(message(item, &path.index(i))?);
    }
    Ok(out)
}

pub(crate) fn tool_spec(v: &Value, path: &Path) -> R<ToolSpec> {
    let obj = Obj::new(v, path, "a tool spec")?;
    obj.only(
        &[
            "name",
            "description",
            "input_schema",
            "strict",
            "cache_point",
        ],
        "a tool spec",
    )?;
    let schema = obj.req("input_schema")?;
    if !schema.is_object() {
        return Err(path.key("input_schema").err(format!(
            "expected a JSON Schema object, got {}",
            describe(schema)
        )));
    }
    Ok(ToolSpec {
        name: obj.req_id("name")?,
        description: obj.opt_str("description")?,
        input_schema: free(schema, &path.key("input_schema"))?.clone(),
        strict: match obj.opt("strict") {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                return Err(path
                    .key("strict")
                    .err(format!("expected true or false, got {}", describe(other))));
            }
        },
        cache_point: obj
            .opt("cache_point")
            .map(|c| cache_point(c, &path.key("cache_point")))
            .transpose()?,
    })
}

impl ToolSpec {
    /// Reads a tool spec from JSON.
    pub fn from_value(value: &Value) -> Result<ToolSpec, FormatError> {
        tool_spec(value, &Path::Root)
    }
}

impl Usage {
    /// Reads usage from JSON.
    pub fn from_value(value: &Value) -> Result<Usage, FormatError> {
        usage(value, &Path::Root)
    }
}
