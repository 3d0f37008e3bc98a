//! `parlance convert`: the translation layer from the command line.

use parlance_format::Message;
use parlance_model::RequestDocument;
use parlance_providers::{
    WIRE_FORMATS, WireFormat, decode_stream, transport::parse_sse, wire_format, write_request,
};
use serde_json::{Value, json};

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
            let mut doc = match from_fmt {
                None => RequestDocument::from_value(&v).map_err(|e| e.to_string())?,
                Some(f) => {
                    let d = (f.decode_request)(&v).map_err(|e| e.to_string())?;
                    warnings.extend(d.warnings.iter().cloned());
                    d.document()
                }
            };
            if let Some(m) = model {
                doc.model = Some(m.to_string());
            }
            match to_fmt {
                None => doc.to_value(),
                Some(t) => {
                    let model = doc.model.clone().ok_or_else(|| {
                        "--model: required to build a request (the input names no model)"
                            .to_string()
                    })?;
                    let encoded = write_request(t, &doc, &model).map_err(|e| e.to_string())?;
                    warnings.extend(encoded.warnings);
                    let mut body = encoded.body;
                    if t.endpoint.path.contains("{model}") {
                        // The model goes in the URL; shown here for reading.
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
