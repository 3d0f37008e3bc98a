//! `parlance.format.convert`: a request or a response between the
//! canonical format and a provider's wire format, through the public
//! wire-format registry of the providers crate (what `parlance convert`
//! does from the command line).

use parlance::providers::{RequestDocument, WIRE_FORMATS, WireFormat, wire_format, write_request};
use pyo3::prelude::*;

use crate::convert::{from_py, to_py};
use crate::errors::{config_error, format_error, format_message};

fn names() -> String {
    let mut n = vec!["canonical"];
    n.extend(WIRE_FORMATS.iter().map(|f| f.name));
    n.join(", ")
}

fn lookup(py: Python<'_>, name: &str, what: &str) -> PyResult<Option<&'static WireFormat>> {
    if name == "canonical" {
        return Ok(None);
    }
    wire_format(name).map(Some).ok_or_else(|| {
        config_error(
            py,
            format!(
                "{what}: unknown format {name:?} (expected one of: {})",
                names()
            ),
        )
    })
}

/// Converts ``value`` (a ``request`` or a ``response``) from one format
/// to another: ``canonical``, ``openai-chat``, ``openai-responses``,
/// ``anthropic``, ``gemini``. Writing a provider's request needs the model
/// (``model=``, or the one the input names). Anything dropped or degraded
/// on the way is reported as a ``UserWarning``.
#[pyfunction]
#[pyo3(signature = (value, *, from_, to, kind = "request", model = None))]
pub fn convert<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    from_: &str,
    to: &str,
    kind: &str,
    model: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let from_fmt = lookup(py, from_, "from_")?;
    let to_fmt = lookup(py, to, "to")?;
    let v = from_py(value, "")?;
    let model_error = |e: parlance::ModelError| format_message(py, e.to_string());
    let mut warnings = Vec::new();
    let out = match kind {
        "response" => {
            if to_fmt.is_some() {
                return Err(config_error(
                    py,
                    format!("to: a response converts only to canonical, not {to:?}"),
                ));
            }
            let message = match from_fmt {
                None => parlance::Message::from_value(&v).map_err(|e| format_error(py, &e))?,
                Some(f) => (f.decode_response)(&v).map_err(model_error)?,
            };
            serde_json::to_value(&message).expect("json")
        }
        "request" => {
            // The same translation as `parlance convert`: the decoder's
            // warnings, the stream flag and options for other APIs named.
            let mut doc = match from_fmt {
                None => RequestDocument::from_value(&v).map_err(|e| format_error(py, &e))?,
                Some(f) => {
                    let d = (f.decode_request)(&v).map_err(model_error)?;
                    warnings.extend(d.warnings.iter().cloned());
                    d.document()
                }
            };
            if let Some(m) = model {
                doc.model = Some(m);
            }
            match to_fmt {
                None => doc.to_value(),
                Some(t) => {
                    let model = doc.model.clone().ok_or_else(|| {
                        config_error(
                            py,
                            "model: required to write a request (the input names no model)",
                        )
                    })?;
                    let encoded = write_request(t, &doc, &model).map_err(model_error)?;
                    warnings.extend(encoded.warnings);
                    encoded.body
                }
            }
        }
        other => {
            return Err(config_error(
                py,
                format!("kind: expected request or response, got {other:?}"),
            ));
        }
    };
    if !warnings.is_empty() {
        let warn = py.import("warnings")?.getattr("warn")?;
        for w in warnings {
            warn.call1((w,))?;
        }
    }
    to_py(py, &out)
}
