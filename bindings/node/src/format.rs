//! The canonical format: its strict readers, its canonical JSON and its
//! published JSON Schema — the Rust functions themselves, so JavaScript
//! gets the same results and the same error strings as Rust and Python.

use napi_derive::napi;
use parlance::format::{Conversation, FormatError, ToolSpec, parse_conversation, schema, to_json};
use parlance::{Block, Decision, Message, Response, Turn};
use serde_json::Value;

use crate::errors::{config_error, format_error, format_message};

/// The kinds of document a reader exists for.
const KINDS: &str = "conversation, message, block, response, turn, decision, tool_spec";

/// Reads `value` as `kind`; gives its canonical JSON text.
fn canonical_json(kind: &str, value: &Value) -> napi::Result<String> {
    let err = |e: FormatError| format_error(&e);
    Ok(match kind {
        "conversation" => {
            let c = Conversation::from_value(value).map_err(err)?;
            if value.is_array() {
                to_json(&c.messages)
            } else {
                to_json(&c)
            }
        }
        "message" => to_json(&Message::from_value(value).map_err(err)?),
        "block" => to_json(&Block::from_value(value).map_err(err)?),
        "response" => to_json(&Response::from_value(value).map_err(err)?),
        "turn" => to_json(&Turn::from_value(value).map_err(err)?),
        "decision" => to_json(&Decision::from_value(value).map_err(err)?),
        "tool_spec" => to_json(&ToolSpec::from_value(value).map_err(err)?),
        other => {
            return Err(config_error(format!(
                "kind: unknown kind {other:?} (expected one of: {KINDS})"
            )));
        }
    })
}

/// Reads JSON text as a `kind` document and gives its canonical JSON text
/// (older shapes read into today's); a `FormatError` names the path of the
/// first problem. JSON syntax errors are worded as Rust words them.
#[napi(catch_unwind)]
pub fn canonical(kind: String, text: String) -> napi::Result<String> {
    if kind == "conversation"
        && let Err(e) = parse_conversation(&text)
    {
        return Err(format_error(&e));
    }
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        format_message(format!(
            "(root): invalid JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    canonical_json(&kind, &v)
}

/// A published JSON Schema (JSON text): `message`, `content-block`,
/// `tool-spec`, `response` or `decision`.
#[napi(catch_unwind)]
pub fn schema(name: String) -> napi::Result<String> {
    let file = format!("{}.schema.json", name.trim_end_matches(".schema.json"));
    match schema::by_name(&file) {
        Some(v) => Ok(v.to_string()),
        None => Err(config_error(format!(
            "no schema named {name:?} (expected one of: message, content-block, tool-spec, response, decision)"
        ))),
    }
}

/// The version of the canonical format.
#[napi(catch_unwind)]
pub fn format_version() -> &'static str {
    parlance::format::FORMAT_VERSION
}
