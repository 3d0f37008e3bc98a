//! `parlance.format`: the canonical format's strict readers, its
//! canonical JSON and its published JSON Schema — the Rust functions
//! themselves, so Python gets the same results and the same error strings.

use parlance::format::{
    Conversation, FormatError, ToolSpec, parse_conversation, schema as schemas, to_json,
};
use parlance::{Block, Decision, Message, Response, Turn};
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{from_py, to_py};
use crate::errors::{format_error, format_message};

/// The kinds of document a reader exists for.
const KINDS: &str = "conversation, message, block, response, turn, decision, tool_spec";

/// Reads `value` as `kind`; gives its canonical JSON text.
fn canonical_json(py: Python<'_>, kind: &str, value: &Value) -> PyResult<String> {
    let err = |e: FormatError| format_error(py, &e);
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
            return Err(crate::errors::config_error(
                py,
                format!("kind: unknown kind {other:?} (expected one of: {KINDS})"),
            ));
        }
    })
}

fn parse(py: Python<'_>, kind: &str, text: &str) -> PyResult<Value> {
    if kind == "conversation" {
        // The conversation reader words JSON syntax errors itself.
        if let Err(e) = parse_conversation(text) {
            return Err(format_error(py, &e));
        }
    }
    serde_json::from_str(text).map_err(|e| {
        format_message(
            py,
            format!(
                "(root): invalid JSON at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
        )
    })
}

/// Checks ``value`` (a dict or list) as a ``kind`` document; raises
/// ``FormatError`` naming the JSON path of the first problem.
#[pyfunction]
#[pyo3(signature = (value, kind = "conversation"))]
pub fn validate(py: Python<'_>, value: &Bound<'_, PyAny>, kind: &str) -> PyResult<()> {
    let v = from_py(value, "")?;
    canonical_json(py, kind, &v).map(drop)
}

/// The canonical form of ``value`` (older shapes read into today's).
#[pyfunction]
#[pyo3(signature = (value, kind = "conversation"))]
pub fn canonical<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    kind: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let v = from_py(value, "")?;
    let text = canonical_json(py, kind, &v)?;
    let out: Value = serde_json::from_str(&text).expect("canonical JSON reads back");
    to_py(py, &out)
}

/// The canonical JSON text of ``value``: byte-identical to the Rust core's.
#[pyfunction]
#[pyo3(signature = (value, kind = "conversation"))]
pub fn dumps(py: Python<'_>, value: &Bound<'_, PyAny>, kind: &str) -> PyResult<String> {
    let v = from_py(value, "")?;
    canonical_json(py, kind, &v)
}

/// Reads JSON text as a ``kind`` document; gives its canonical form.
#[pyfunction]
#[pyo3(signature = (text, kind = "conversation"))]
pub fn loads<'py>(py: Python<'py>, text: &str, kind: &str) -> PyResult<Bound<'py, PyAny>> {
    let v = parse(py, kind, text)?;
    let canonical = canonical_json(py, kind, &v)?;
    let out: Value = serde_json::from_str(&canonical).expect("canonical JSON reads back");
    to_py(py, &out)
}

/// A published JSON Schema: ``message``, ``content-block``,
/// ``tool-spec``, ``response`` or ``decision``.
#[pyfunction]
#[pyo3(signature = (name = "message"))]
pub fn schema<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let file = format!("{}.schema.json", name.trim_end_matches(".schema.json"));
    match schemas::by_name(&file) {
        Some(v) => to_py(py, &v),
        None => Err(crate::errors::config_error(
            py,
            format!(
                "no schema named {name:?} (expected one of: message, content-block, tool-spec, response, decision)"
            ),
        )),
    }
}
