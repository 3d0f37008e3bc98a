//! One conversion between the canonical format and any provider's wire
//! format: what `parlance convert` does from the command line, Python's
//! `parlance.format.convert` and Node's `format.convert` (pure: JSON in,
//! JSON out, the same results and the same error text everywhere).
//!
//! ```
//! use parlance_providers::convert::{Input, Kind, Params, convert};
//!
//! let body = r#"{"model": "claude-sonnet-4-5", "max_tokens": 64,
//!                "messages": [{"role": "user", "content": "Hi"}]}"#;
//! let out = convert(Input::Text(body), "anthropic", "gemini", Kind::Request, None, &Params::RUST)?;
//! assert_eq!(out.output["contents"][0]["parts"][0]["text"], "Hi");
//! # Ok::<(), parlance_providers::convert::ConvertError>(())
//! ```

use parlance_format::{FormatError, Message, parse_json};
use parlance_model::RequestDocument;
use serde_json::Value;

use crate::format::{WireFormat, decode_stream};
use crate::formats::{WIRE_FORMATS, wire_format};
use crate::registry::{PROVIDERS, Provider};
use crate::translate::write_request;
use crate::transport::parse_sse;

/// What the input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A request body (or, from canonical, a conversation to send).
    Request,
    /// A response body.
    Response,
    /// A recorded stream: raw SSE text, one JSON event per line, or a
    /// JSON array of events.
    Stream,
}

impl Kind {
    /// Every kind's name, in order.
    pub const NAMES: [&'static str; 3] = ["request", "response", "stream"];

    /// A kind by its name (`request`, `response`, `stream`).
    pub fn parse(name: &str) -> Result<Kind, ConvertError> {
        match name {
            "request" => Ok(Kind::Request),
            "response" => Ok(Kind::Response),
            "stream" => Ok(Kind::Stream),
            other => Err(ConvertError::Usage(format!(
                "kind: expected one of {}, got {other:?}",
                Kind::NAMES.join(", ")
            ))),
        }
    }

    /// The kind's name.
    pub fn name(self) -> &'static str {
        Kind::NAMES[self as usize]
    }
}

/// The input: JSON text (or SSE text, for a stream), or a parsed value.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// Text as read from a file or the network.
    Text(&'a str),
    /// Bytes as read from a file: UTF-8 text, or (a Bedrock stream) the
    /// binary AWS event-stream frames ConverseStream sends.
    Bytes(&'a [u8]),
    /// A value already parsed (a stream: an array of events).
    Value(&'a Value),
}

/// Bytes as text, or the first byte that is not UTF-8.
fn utf8(bytes: &[u8]) -> Result<&str, ConvertError> {
    std::str::from_utf8(bytes).map_err(|e| {
        ConvertError::Usage(format!(
            "not UTF-8 (byte {} is not valid UTF-8)",
            e.valid_up_to()
        ))
    })
}

/// Whether bytes are AWS event-stream frames: a message's prelude (total
/// and header lengths, big-endian) is binary, never JSON or SSE text.
fn is_event_stream(bytes: &[u8]) -> bool {
    bytes.len() >= 16 && bytes[0] == 0 && !bytes.starts_with(b"{") && !bytes.starts_with(b"[")
}

/// What the caller calls its parameters, so that an error names the one
/// its user wrote (`--from` on the command line, `from_` in Python).
#[derive(Debug, Clone, Copy)]
pub struct Params {
    /// The source format's parameter.
    pub from: &'static str,
    /// The target format's parameter.
    pub to: &'static str,
    /// The model's parameter.
    pub model: &'static str,
}

impl Params {
    /// Rust's (and JavaScript's) names: `from`, `to`, `model`.
    pub const RUST: Params = Params {
        from: "from",
        to: "to",
        model: "model",
    };
}

/// The converted document, and what was dropped or degraded on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    /// The document in the target format.
    pub output: Value,
    /// One line per thing not carried.
    pub warnings: Vec<String>,
    /// The model a provider's request was written for (some APIs carry it
    /// in the URL, not the body).
    pub model: Option<String>,
}

/// Why a conversion was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConvertError {
    /// The parameters ask for something that does not exist or cannot be
    /// done (an unknown format, a response to a provider's format, a
    /// request without a model).
    #[error("{0}")]
    Usage(String),
    /// The input is not a canonical document (or not JSON): the path of
    /// the first problem.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The provider's decoder or encoder refused the input.
    #[error("{0}")]
    Wire(String),
}

/// `canonical`, every wire format's name, then every provider's whose
/// dialect or name differs (`deepseek`, `openrouter`, `bedrock`...): what
/// `from` and `to` take.
pub fn format_names() -> String {
    let mut names = vec!["canonical"];
    names.extend(WIRE_FORMATS.iter().map(|f| f.name));
    for p in PROVIDERS {
        if !names.contains(&p.name) {
            names.push(p.name);
        }
    }
    names.join(", ")
}

/// A format by its name: a wire format's (`openai-chat`: OpenAI's own
/// dialect), or a provider's (`deepseek`: Chat Completions as DeepSeek
/// speaks it, its reasoning field read and written).
fn lookup(name: &str, param: &str) -> Result<Option<&'static WireFormat>, ConvertError> {
    if name == "canonical" {
        return Ok(None);
    }
    wire_format(name)
        .or_else(|| Provider::named(name).map(|p| p.format))
        .map(Some)
        .ok_or_else(|| {
            ConvertError::Usage(format!(
                "{param}: unknown format {name:?} (expected one of: {})",
                format_names()
            ))
        })
}

fn value(input: Input<'_>) -> Result<Value, ConvertError> {
    match input {
        Input::Text(t) => Ok(parse_json(t)?),
        Input::Bytes(b) => Ok(parse_json(utf8(b)?)?),
        Input::Value(v) => Ok(v.clone()),
    }
}

/// A recorded stream as `(event, data)` pairs.
fn stream_events(input: Input<'_>) -> Result<Vec<(String, String)>, ConvertError> {
    let input = match input {
        Input::Bytes(b) if is_event_stream(b) => {
            return crate::transport::aws_eventstream::parse_event_stream(b)
                .map_err(|e| ConvertError::Wire(e.to_string()));
        }
        Input::Bytes(b) => Input::Text(utf8(b)?),
        other => other,
    };
    let items = match input {
        Input::Value(Value::Array(items)) => items.clone(),
        Input::Value(_) | Input::Bytes(_) => {
            return Err(ConvertError::Usage(
                "a stream is SSE text, JSON lines, or a list of events".into(),
            ));
        }
        Input::Text(text) if text.trim_start().starts_with('[') => match parse_json(text)? {
            Value::Array(items) => items,
            _ => unreachable!("text starting with [ parses as an array"),
        },
        Input::Text(text)
            if text
                .lines()
                .any(|l| l.starts_with("data:") || l.starts_with("event:")) =>
        {
            return Ok(parse_sse(text));
        }
        Input::Text(text) => {
            return Ok(text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| (String::new(), l.to_string()))
                .collect());
        }
    };
    Ok(items
        .iter()
        .map(|e| match e {
            // An SSE event recorded as {"event", "data"}.
            Value::Object(m) if m.contains_key("data") && m.len() <= 2 => (
                m.get("event")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                match &m["data"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
            ),
            other => (String::new(), other.to_string()),
        })
        .collect())
}

/// Converts `input` of `kind` from format `from` to format `to`
/// (`canonical` or a name of [`WIRE_FORMATS`]). Writing a provider's
/// request needs a model: `model`, or the one the input names. Responses
/// and streams convert to canonical only.
pub fn convert(
    input: Input<'_>,
    from: &str,
    to: &str,
    kind: Kind,
    model: Option<&str>,
    params: &Params,
) -> Result<Converted, ConvertError> {
    let from_fmt = lookup(from, params.from)?;
    let to_fmt = lookup(to, params.to)?;
    let wire = |e: parlance_model::ModelError| ConvertError::Wire(e.to_string());
    let mut warnings = Vec::new();
    let mut written_for = None;
    let output = match kind {
        Kind::Response | Kind::Stream => {
            if to_fmt.is_some() {
                return Err(ConvertError::Usage(format!(
                    "{}: a {} converts only to canonical, not {to:?}",
                    params.to,
                    kind.name()
                )));
            }
            let message = match (from_fmt, kind) {
                // Canonical in, canonical out: checked and normalised.
                (None, Kind::Response) => Message::from_value(&value(input)?)?,
                (None, _) => {
                    return Err(ConvertError::Usage(format!(
                        "{}: a stream converts from a provider's format, not canonical",
                        params.from
                    )));
                }
                (Some(f), Kind::Response) => (f.decode_response)(&value(input)?).map_err(wire)?,
                (Some(f), _) => decode_stream(f, &stream_events(input)?).map_err(wire)?.1,
            };
            serde_json::to_value(&message).expect("a message serialises")
        }
        Kind::Request => {
            let v = value(input)?;
            let mut doc = match from_fmt {
                None => RequestDocument::from_value(&v)?,
                Some(f) => {
                    let d = (f.decode_request)(&v).map_err(wire)?;
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
                        ConvertError::Usage(format!(
                            "{}: required to write a request (the input names no model)",
                            params.model
                        ))
                    })?;
                    let encoded = write_request(t, &doc, &model).map_err(wire)?;
                    warnings.extend(encoded.warnings);
                    written_for = Some(model);
                    encoded.body
                }
            }
        }
    };
    Ok(Converted {
        output,
        warnings,
        model: written_for,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_unknown_format_is_named_with_the_callers_parameter() {
        let cli = Params {
            from: "--from",
            to: "--to",
            model: "--model",
        };
        let e = convert(
            Input::Text("{}"),
            "nope",
            "canonical",
            Kind::Request,
            None,
            &cli,
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("--from: unknown format \"nope\""),
            "{e}"
        );
        let e = convert(
            Input::Text("{}"),
            "canonical",
            "x",
            Kind::Request,
            None,
            &Params::RUST,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("to: unknown format \"x\""), "{e}");
    }

    #[test]
    fn a_response_converts_only_to_canonical() {
        let e = convert(
            Input::Value(&json!({})),
            "anthropic",
            "gemini",
            Kind::Response,
            None,
            &Params::RUST,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "to: a response converts only to canonical, not \"gemini\""
        );
    }

    #[test]
    fn a_request_without_a_model_is_refused_naming_the_parameter() {
        let conversation =
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]});
        let e = convert(
            Input::Value(&conversation),
            "canonical",
            "gemini",
            Kind::Request,
            None,
            &Params::RUST,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "model: required to write a request (the input names no model)"
        );
        let ok = convert(
            Input::Value(&conversation),
            "canonical",
            "gemini",
            Kind::Request,
            Some("gemini-2.5-flash"),
            &Params::RUST,
        )
        .unwrap();
        assert_eq!(ok.output["contents"][0]["parts"][0]["text"], "Hi");
    }

    #[test]
    fn bad_json_and_bad_canonical_input_name_their_path() {
        let e = convert(
            Input::Text("{"),
            "canonical",
            "canonical",
            Kind::Response,
            None,
            &Params::RUST,
        )
        .unwrap_err();
        assert!(matches!(e, ConvertError::Format(_)));
        assert!(
            e.to_string().starts_with("(root): invalid JSON at line 1"),
            "{e}"
        );
        let e = convert(
            Input::Value(&json!({"role": "robot", "content": []})),
            "canonical",
            "canonical",
            Kind::Response,
            None,
            &Params::RUST,
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("role:"), "{e}");
    }

    #[test]
    fn a_stream_reads_as_sse_text_json_lines_or_a_list_of_events() {
        let events = [
            json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "c", "content": [], "usage": {"input_tokens": 1, "output_tokens": 0}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
            json!({"type": "message_stop"}),
        ];
        let sse: String = events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect();
        let lines: String = events.iter().map(|e| format!("{e}\n")).collect();
        let list = Value::Array(events.to_vec());
        let list_text = list.to_string();
        for input in [
            Input::Text(&sse),
            Input::Text(&lines),
            Input::Text(&list_text),
            Input::Value(&list),
        ] {
            let out = convert(
                input,
                "anthropic",
                "canonical",
                Kind::Stream,
                None,
                &Params::RUST,
            )
            .unwrap();
            assert_eq!(out.output["content"][0]["text"], "Hello", "{input:?}");
        }
    }

    #[test]
    fn kinds_read_by_name() {
        for name in Kind::NAMES {
            assert_eq!(Kind::parse(name).unwrap().name(), name);
        }
        assert_eq!(
            Kind::parse("reply").unwrap_err().to_string(),
            "kind: expected one of request, response, stream, got \"reply\""
        );
    }
}
