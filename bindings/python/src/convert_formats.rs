//! `parlance.format.convert`: a request or a response between the
//! canonical format and a provider's wire format, through the public
//! wire-format registry of the providers crate (what `parlance convert`
//! does from the command line).

use parlance::format::{ToolSpec, messages_from_value};
use parlance::providers::{WIRE_FORMATS, WireFormat, wire_format};
use parlance::{ModelOptions, ModelRequest};
use pyo3::prelude::*;
use serde_json::{Map, Value, json};

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

/// A canonical request: `{"model"?, "messages", "tools"?, "options"?}` or
/// a list of messages.
fn canonical_request(py: Python<'_>, v: &Value) -> PyResult<(Option<String>, ModelRequest)> {
    let bad = |m: String| format_message(py, m);
    let (messages, obj) = match v {
        Value::Array(_) => (v, None),
        Value::Object(o) => (
            o.get("messages")
                .ok_or_else(|| bad("messages: required field missing".into()))?,
            Some(o),
        ),
        _ => {
            return Err(bad(
                "(root): expected a conversation (a list of messages or an object with \"messages\")"
                    .into(),
            ));
        }
    };
    let prefix = if obj.is_some() { "messages" } else { "" };
    let mut req = ModelRequest {
        messages: messages_from_value(messages, prefix).map_err(|e| format_error(py, &e))?,
        ..Default::default()
    };
    let mut model = None;
    for (k, val) in obj.into_iter().flatten() {
        match k.as_str() {
            "messages" => {}
            "model" => {
                model = Some(
                    val.as_str()
                        .ok_or_else(|| bad("model: expected a string".into()))?
                        .to_string(),
                )
            }
            "tools" => {
                for (i, t) in val
                    .as_array()
                    .ok_or_else(|| bad("tools: expected a list".into()))?
                    .iter()
                    .enumerate()
                {
                    req.tools.push(
                        ToolSpec::from_value(t)
                            .map_err(|e| format_error(py, &e.under(&format!("tools[{i}]"))))?,
                    );
                }
            }
            "options" => {
                req.options = serde_json::from_value::<ModelOptions>(val.clone())
                    .map_err(|e| bad(format!("options: {e}")))?
            }
            other => {
                return Err(bad(format!(
                    "{other}: unknown field (expected one of: model, messages, tools, options)"
                )));
            }
        }
    }
    Ok((model, req))
}

fn canonical_document(model: Option<String>, req: &ModelRequest) -> Value {
    let mut doc = Map::new();
    if let Some(m) = model {
        doc.insert("model".into(), json!(m));
    }
    doc.insert(
        "messages".into(),
        serde_json::to_value(&req.messages).expect("json"),
    );
    if !req.tools.is_empty() {
        doc.insert(
            "tools".into(),
            serde_json::to_value(&req.tools).expect("json"),
        );
    }
    if req.options != ModelOptions::default() {
        doc.insert(
            "options".into(),
            serde_json::to_value(&req.options).expect("json"),
        );
    }
    Value::Object(doc)
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
            let (doc_model, req) = match from_fmt {
                None => canonical_request(py, &v)?,
                Some(f) => {
                    let d = (f.decode_request)(&v).map_err(model_error)?;
                    (d.model, d.request)
                }
            };
            let model = model.or(doc_model);
            match to_fmt {
                None => canonical_document(model, &req),
                Some(t) => {
                    let model = model.ok_or_else(|| {
                        config_error(
                            py,
                            "model: required to write a request (the input names no model)",
                        )
                    })?;
                    let mut req = req;
                    if let Some(f) = from_fmt
                        && f.provider != t.provider
                        && let Some(extra) = req.options.extra.remove(f.provider)
                    {
                        warnings.push(format!("options for {} dropped: {extra}", f.provider));
                    }
                    let encoded = (t.encode_request)(&req, &model, false).map_err(model_error)?;
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
