//! The canonical format: its strict readers, its canonical JSON and its
//! published JSON Schema — the Rust functions themselves, so JavaScript
//! gets the same results and the same error strings as Rust and Python.

use napi_derive::napi;
use parlance::documents::{DocKind, parse_document};
use parlance::format::schema;

use crate::errors::{bind, config_error};

/// A document read: the kind it was read as, and its canonical JSON text.
#[napi(object)]
pub struct ReadDocument {
    /// `conversation`, `message`, `response`, `request`, `decision`,
    /// `block`, `tool_spec` or `turn`.
    pub kind: String,
    /// Its canonical JSON text, byte-identical to Rust's and Python's.
    pub canonical: String,
}

/// Reads JSON text as a `kind` document, or (no `kind`) as the kind its
/// fields say, as `parlance validate` does; gives the kind and the
/// canonical JSON text (older shapes read into today's). A `FormatError`
/// names the path of the first problem; JSON syntax errors are worded as
/// Rust words them.
#[napi(catch_unwind)]
pub fn canonical(kind: Option<String>, text: String) -> napi::Result<ReadDocument> {
    let kind = kind
        .as_deref()
        .map(DocKind::parse)
        .transpose()
        .map_err(|e| config_error(e.to_string()))?;
    let doc = parse_document(kind, &text).map_err(|e| bind(e.into()))?;
    Ok(ReadDocument {
        kind: doc.kind.name().to_string(),
        canonical: doc.canonical,
    })
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
