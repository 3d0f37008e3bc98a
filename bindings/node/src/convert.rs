//! `format.convert`: a request or a response between the canonical format
//! and a provider's wire format, through the providers crate's public
//! wire-format registry (what `parlance convert` does from the command
//! line, and the Python package's `format.convert`: same names, same
//! errors).

use napi_derive::napi;
use parlance::format::{ToolSpec, messages_from_value};
use parlance::providers::{WIRE_FORMATS, WireFormat, wire_format};
use parlance::{ModelOptions, ModelRequest};
use serde_json::{Map, Value, json};

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

/// A canonical request: `{"model"?, "messages", "tools"?, "options"?}` or
/// a list of messages.
fn canonical_request(v: &Value) -> napi::Result<(Option<String>, ModelRequest)> {
    let (messages, obj) = match v {
        Value::Array(_) => (v, None),
        Value::Object(o) => (
            o.get("messages")
                .ok_or_else(|| format_message("messages: required field missing"))?,
            Some(o),
        ),
        _ => {
            return Err(format_message(
                "(root): expected a conversation (a list of messages or an object with \"messages\")",
            ));
        }
    };
    let prefix = if obj.is_some() { "messages" } else { "" };
    let mut req = ModelRequest {
        messages: messages_from_value(messages, prefix).map_err(|e| format_error(&e))?,
        ..Default::default()
    };
    let mut model = None;
    for (k, val) in obj.into_iter().flatten() {
        match k.as_str() {
            "messages" => {}
            "model" => {
                model = Some(
                    val.as_str()
                        .ok_or_else(|| format_message("model: expected a string"))?
                        .to_string(),
                )
            }
            "tools" => {
                let tools = val
                    .as_array()
                    .ok_or_else(|| format_message("tools: expected a list"))?;
                for (i, t) in tools.iter().enumerate() {
                    req.tools.push(
                        ToolSpec::from_value(t)
                            .map_err(|e| format_error(&e.under(&format!("tools[{i}]"))))?,
                    );
                }
            }
            "options" => {
                req.options = serde_json::from_value::<ModelOptions>(val.clone())
                    .map_err(|e| format_message(format!("options: {e}")))?
            }
            other => {
                return Err(format_message(format!(
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
            let (doc_model, req) = match from_fmt {
                None => canonical_request(&v)?,
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
            return Err(config_error(format!(
                "kind: expected request or response, got {other:?}"
            )));
        }
    };
    Ok(json!({"output": output, "warnings": warnings}).to_string())
}
