//! `format.convert`: a request or a response between the canonical format
//! and a provider's wire format, through the providers crate's public
//! wire-format registry (what `parlance convert` does from the command
//! line, and the Python package's `format.convert`: same names, same
//! errors).

use napi_derive::napi;
use parlance::providers::{RequestDocument, WIRE_FORMATS, WireFormat, wire_format, write_request};
use serde_json::json;

use crate::errors::{config_error, format_error, format_message, parse};

fn names() -> String {
    let mut n = vec!["canonical"];
    n.extend(WIRE_FORMATS.iter().map(|f| f.name));
    n.join(", ")
}

fn lookup(name: &str, what: &str) -> napi::Result<Option<&'static WireFormat>> {
    if name == "canonical" {
        return Ok(None);
    }
    wire_format(name).map(Some).ok_or_else(|| {
        config_error(format!(
            "{what}: unknown format {name:?} (expected one of: {})",
            names()
        ))
    })
}

/// Converts `value` (JSON text of a `request` or a `response`) from one
/// format to another: `canonical`, `openai-chat`, `openai-responses`,
/// `anthropic`, `gemini`. Writing a provider's request needs the model
/// (`model`, or the one the input names). Gives JSON text of
/// `{"output": ..., "warnings": [...]}` (what was dropped or degraded).
#[napi(catch_unwind)]
pub fn convert(
    value: String,
    from: String,
    to: String,
    kind: String,
    model: Option<String>,
) -> napi::Result<String> {
    let from_fmt = lookup(&from, "from")?;
    let to_fmt = lookup(&to, "to")?;
    let v = parse("(root)", &value)?;
    let model_error = |e: parlance::ModelError| format_message(e.to_string());
    let mut warnings = Vec::new();
    let output = match kind.as_str() {
        "response" => {
            if to_fmt.is_some() {
                return Err(config_error(format!(
                    "to: a response converts only to canonical, not {to:?}"
                )));
            }
            let message = match from_fmt {
                None => parlance::Message::from_value(&v).map_err(|e| format_error(&e))?,
                Some(f) => (f.decode_response)(&v).map_err(model_error)?,
            };
            serde_json::to_value(&message).expect("json")
        }
        "request" => {
            // The same translation as `parlance convert`: the decoder's
            // warnings, the stream flag and options for other APIs named.
            let mut doc = match from_fmt {
                None => RequestDocument::from_value(&v).map_err(|e| format_error(&e))?,
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
            return Err(config_error(format!(
                "kind: expected request or response, got {other:?}"
            )));
        }
    };
    Ok(json!({"output": output, "warnings": warnings}).to_string())
}
