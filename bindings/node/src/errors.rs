//! Errors for JavaScript. A napi error carries only a message, so the
//! native module writes a marker and a small JSON document (the error's
//! kind, its text, and the path and detail when there are some); the
//! package's JavaScript (`lib/errors.cjs`) turns it into the matching error
//! class (`FormatError`, `DecisionError`, `ConfigError`, `StoreError`),
//! whose `message` is exactly the Rust error's text.

use parlance::format::FormatError;
use parlance::{BuildError, DecisionError};
use serde_json::{Value, json};

/// What starts a message the package's JavaScript decodes.
const MARKER: &str = "\u{0}parlance:";

/// An error of `kind` with `text` and extra fields for JavaScript.
pub fn error(kind: &str, text: impl Into<String>, extra: Value) -> napi::Error {
    let mut doc = json!({"kind": kind, "text": text.into()});
    if let (Value::Object(d), Value::Object(e)) = (&mut doc, extra) {
        d.extend(e);
    }
    napi::Error::from_reason(format!("{MARKER}{doc}"))
}

/// A document that is not canonical (`path: message`).
pub fn format_error(e: &FormatError) -> napi::Error {
    error(
        "FormatError",
        e.to_string(),
        json!({"path": e.path, "detail": e.message}),
    )
}

/// A `FormatError` from a message alone (a JSON syntax error...).
pub fn format_message(text: impl Into<String>) -> napi::Error {
    error("FormatError", text, Value::Null)
}

/// A refused decision.
pub fn decision_error(e: &DecisionError) -> napi::Error {
    error(
        "DecisionError",
        e.to_string(),
        json!({"path": e.path, "detail": e.message}),
    )
}

/// Something that cannot be built as given (an agent, a tool, a model).
pub fn config_error(text: impl Into<String>) -> napi::Error {
    error("ConfigError", text, Value::Null)
}

/// A model that cannot be built.
pub fn build_error(e: &BuildError) -> napi::Error {
    config_error(e.to_string())
}

/// A panic in the Rust core (a bug): the exception that replaces it.
pub fn panic_error(payload: &(dyn std::any::Any + Send)) -> napi::Error {
    let text = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    };
    error(
        "InternalError",
        format!("a bug in parlance's Rust core: {text}"),
        Value::Null,
    )
}

/// Reads JSON text handed over by the package's JavaScript.
pub fn parse(what: &str, text: &str) -> napi::Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        format_message(format!(
            "{what}: invalid JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        ))
    })
}
