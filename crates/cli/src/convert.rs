//! `parlance convert`: the translation layer from the command line.

use parlance_format::{Message, ToolSpec};
use parlance_model::{ModelOptions, ModelRequest};
use parlance_providers::{
    WIRE_FORMATS, WireFormat, decode_stream, transport::parse_sse, wire_format,
};
use serde_json::{Map, Value, json};

/// What the input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// A request body (or, from canonical, a conversation to send).
    Request,
    /// A response body.
    Response,
    /// A stream: raw SSE text, one JSON event per line, or a JSON array of events.
    Stream,
}

/// Names every format `--from`/`--to` accept.
pub fn format_names() -> String {
    let mut names = vec!["canonical"];
    names.extend(WIRE_FORMATS.iter().map(|f| f.name));
    names.join(", ")
}

fn format(name: &str, flag: &str) -> Result<Option<&'static WireFormat>, String> {
    if name == "canonical" {
        return Ok(None);
    }
    wire_format(name).map(Some).ok_or_else(|| {
        format!(
            "{flag}: unknown format {name:?} (expected one of: {})",
            format_names()
        )
    })
}

/// The result: JSON to print, and warnings for stderr.
pub struct Converted {
    pub output: Value,
    pub warnings: Vec<String>,
}

fn parse(text: &str) -> Result<Value, String> {
    serde_json::from_str(text).map_err(|e| {
        format!(
            "(root): invalid JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        )
    })
}

/// A canonical request document: `{"model"?, "messages", "tools"?, "options"?}`
/// (a bare array is just the messages).
fn canonical_request(v: &Value) -> Result<(Option<String>, ModelRequest), String> {
    let (messages, obj) = match v {
        Value::Array(_) => (v, None),
        Value::Object(o) => (
            o.get("messages")
                .ok_or("messages: required field missing")?,
            Some(o),
        ),
        _ => return Err(
            "(root): expected a conversation (an array of messages or an object with \"messages\")"
                .into(),
        ),
    };
    let mut req = ModelRequest {
        messages: parlance_format::messages_from_value(
            messages,
            if obj.is_some() { "messages" } else { "" },
        )
        .map_err(|e| e.to_string())?,
        ..Default::default()
    };
    let mut model = None;
    if let Some(o) = obj {
        for (k, val) in o {
            match k.as_str() {
                "messages" => {}
                "model" => {
                    model = Some(val.as_str().ok_or("model: expected a string")?.to_string())
                }
                "tools" => {
                    for (i, t) in val
                        .as_array()
                        .ok_or("tools: expected an array")?
                        .iter()
                        .enumerate()
                    {
                        req.tools.push(
                            ToolSpec::from_value(t)
                                .map_err(|e| e.under(&format!("tools[{i}]")).to_string())?,
                        );
                    }
                }
                "options" => {
                    req.options = serde_json::from_value::<ModelOptions>(val.clone())
                        .map_err(|e| format!("options: {e}"))?
                }
                other => {
                    return Err(format!(
                        "{other}: unknown field (expected one of: model, messages, tools, options)"
                    ));
                }
            }
        }
    }
    Ok((model, req))
}

/// The canonical document for a decoded request.
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

/// Splits a recorded stream into `(event, data)` pairs.
fn stream_events(text: &str) -> Result<Vec<(String, String)>, String> {
    let t = text.trim_start();
    if t.starts_with('[') {
        let v = parse(text)?;
        return Ok(v
            .as_array()
            .expect("an array")
            .iter()
            .map(|e| (String::new(), e.to_string()))
            .collect());
    }
    if text
        .lines()
        .any(|l| l.starts_with("data:") || l.starts_with("event:"))
    {
        return Ok(parse_sse(text));
    }
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| (String::new(), l.to_string()))
        .collect())
}

/// Converts `text` of `kind` from one format to another.
pub fn convert(
    from: &str,
    to: &str,
    kind: Kind,
    model: Option<&str>,
    text: &str,
) -> Result<Converted, String> {
    let from_fmt = format(from, "--from")?;
    let to_fmt = format(to, "--to")?;
    let mut warnings = Vec::new();
    let output = match kind {
        Kind::Response | Kind::Stream => {
            if to_fmt.is_some() {
                return Err(format!(
                    "--to {to}: a {} converts only to canonical",
                    if kind == Kind::Stream {
                        "stream"
                    } else {
                        "response"
                    }
                ));
            }
            let Some(f) = from_fmt else {
                // Canonical in, canonical out: check and normalise it.
                let v = parse(text)?;
                let m = Message::from_value(&v).map_err(|e| e.to_string())?;
                return Ok(Converted {
                    output: serde_json::to_value(&m).expect("json"),
                    warnings,
                });
            };
            let message = if kind == Kind::Response {
                (f.decode_response)(&parse(text)?).map_err(|e| e.to_string())?
            } else {
                decode_stream(f, &stream_events(text)?)
                    .map_err(|e| e.to_string())?
                    .1
            };
            serde_json::to_value(&message).expect("json")
        }
        Kind::Request => {
            let v = parse(text)?;
            let (doc_model, req) = match from_fmt {
                None => canonical_request(&v)?,
                Some(f) => {
                    let d = (f.decode_request)(&v).map_err(|e| e.to_string())?;
                    (d.model, d.request)
                }
            };
            match to_fmt {
                None => canonical_document(model.map(str::to_string).or(doc_model), &req),
                Some(t) => {
                    let model = model.map(str::to_string).or(doc_model).ok_or_else(|| {
                        "--model: required to build a request (the input names no model)"
                            .to_string()
                    })?;
                    // Options written for the source provider stay behind.
                    let mut req = req;
                    if let Some(f) = from_fmt
                        && f.provider != t.provider
                        && let Some(extra) = req.options.extra.remove(f.provider)
                    {
                        warnings.push(format!("options for {} dropped: {extra}", f.provider));
                    }
                    let encoded =
                        (t.encode_request)(&req, &model, false).map_err(|e| e.to_string())?;
                    warnings.extend(encoded.warnings);
                    let mut body = encoded.body;
                    if t.name == "gemini" {
                        // Gemini takes the model in the URL; shown here for reading.
                        body.as_object_mut()
                            .expect("an object")
                            .insert("model".into(), json!(model));
                    }
                    body
                }
            }
        }
    };
    Ok(Converted { output, warnings })
}
