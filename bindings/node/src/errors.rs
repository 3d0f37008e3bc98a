//! Errors for JavaScript. A napi error carries only a message, so the
//! native module writes a marker and a small JSON document (the error's
//! kind, its text, and the path, detail and store kind when there are
//! some); the package's JavaScript (`lib/errors.cjs`) turns it into the
//! matching error class (`FormatError`, `DecisionError`, `ConfigError`,
//! `StoreError`), whose `message` is exactly the Rust error's text. The
//! classification itself is the bindings' shared one
//! (`parlance_bindings::BindError`).

use parlance_bindings::BindError;
use serde_json::{Map, Value, json};

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

/// The JavaScript error for an error of the core.
pub fn bind(e: BindError) -> napi::Error {
    let mut extra = Map::new();
    if let Some(p) = e.path {
        extra.insert("path".into(), p.into());
    }
    if let Some(d) = e.detail {
        extra.insert("detail".into(), d.into());
    }
    if let Some(k) = e.store_kind {
        extra.insert("storeKind".into(), k.into());
    }
    error(e.kind.class_name(), e.text, Value::Object(extra))
}

/// Something that cannot be built as given (an agent, a tool, a model).
pub fn config_error(text: impl Into<String>) -> napi::Error {
    bind(BindError::config(text.into()))
}

/// A panic in the Rust core (a bug): the exception that replaces it.
pub fn panic_error(payload: &(dyn std::any::Any + Send)) -> napi::Error {
    bind(BindError::panic(payload))
}

/// Reads JSON text handed over by the package's JavaScript; a syntax
/// error is a `FormatError` under `what`, worded as Rust words them.
pub fn parse(what: &str, text: &str) -> napi::Result<Value> {
    parlance::format::parse_json(text).map_err(|e| bind(e.under(what).into()))
}

/// The text of an error made here (the message the package would show),
/// for errors that travel on as text (a toolset's listing).
pub fn text_of(e: &napi::Error) -> String {
    e.reason
        .strip_prefix(MARKER)
        .and_then(|doc| serde_json::from_str::<Value>(doc).ok())
        .and_then(|doc| doc.get("text").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| e.reason.clone())
}
