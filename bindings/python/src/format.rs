//! `parlance.format`: the canonical format's strict readers, its
//! canonical JSON and its published JSON Schema — the Rust functions
//! themselves, so Python gets the same results and the same error strings.

use parlance::documents::{DocKind, Document, parse_document, read_document};
use parlance::format::schema as schemas;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use serde_json::Value;

use crate::convert::{from_py, to_py};
use crate::errors::{config_error, format_error};

/// Reads a document: ``value`` parsed (dicts and lists) or JSON text
/// (``str`` or ``bytes``), as ``kind`` or as the kind its fields say.
fn read(py: Python<'_>, value: &Bound<'_, PyAny>, kind: Option<&str>) -> PyResult<Document> {
    let kind = kind_of(py, kind)?;
    let read = if let Ok(s) = value.cast::<PyString>() {
        parse_document(kind, &s.to_cow()?)
    } else if let Ok(b) = value.cast::<PyBytes>() {
        match std::str::from_utf8(b.as_bytes()) {
            Ok(text) => parse_document(kind, text),
            Err(e) => {
                return Err(config_error(
                    py,
                    format!("value: JSON text must be UTF-8: {e}"),
                ));
            }
        }
    } else {
        read_document(kind, &from_py(value, "")?)
    };
    read.map_err(|e| format_error(py, &e))
}

/// A kind by name (``None``: recognised from the document's fields).
fn kind_of(py: Python<'_>, kind: Option<&str>) -> PyResult<Option<DocKind>> {
    kind.map(DocKind::parse)
        .transpose()
        .map_err(|e| config_error(py, e.to_string()))
}

fn to_value<'py>(py: Python<'py>, doc: &Document) -> PyResult<Bound<'py, PyAny>> {
    let out: Value = serde_json::from_str(&doc.canonical).expect("canonical JSON reads back");
    to_py(py, &out)
}

/// Checks ``value`` (a parsed document, or its JSON text) as a ``kind``
/// document, or as the kind its fields say (as ``parlance validate``
/// does); raises ``FormatError`` naming the JSON path of the first
/// problem. Returns the kind.
#[pyfunction]
#[pyo3(signature = (value, kind = None))]
pub fn validate(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    kind: Option<&str>,
) -> PyResult<&'static str> {
    read(py, value, kind).map(|d| d.kind.name())
}

/// The canonical form of ``value`` (older shapes read into today's).
#[pyfunction]
#[pyo3(signature = (value, kind = None))]
pub fn canonical<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    kind: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    to_value(py, &read(py, value, kind)?)
}

/// The canonical JSON text of ``value``: byte-identical to the Rust core's.
#[pyfunction]
#[pyo3(signature = (value, kind = None))]
pub fn dumps(py: Python<'_>, value: &Bound<'_, PyAny>, kind: Option<&str>) -> PyResult<String> {
    read(py, value, kind).map(|d| d.canonical)
}

/// A published JSON Schema: ``message``, ``content-block``,
/// ``tool-spec``, ``response`` or ``decision``.
#[pyfunction]
#[pyo3(signature = (name = "message"))]
pub fn schema<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let file = format!("{}.schema.json", name.trim_end_matches(".schema.json"));
    match schemas::by_name(&file) {
        Some(v) => to_py(py, &v),
        None => Err(config_error(
            py,
            format!(
                "no schema named {name:?} (expected one of: message, content-block, tool-spec, response, decision)"
            ),
        )),
    }
}
