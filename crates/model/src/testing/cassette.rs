//! The cassette: a model's exchanges written down, one JSON object a line
//! (JSON Lines), each `{"request": ..., "response": ...}` in the canonical
//! format: the request as a request document (`schema/request.schema.json`:
//! messages, tools, options, and the model's id), the response as a
//! message. A call that failed has `"error": {"kind", "message"}` (and
//! `"status"` for a provider's 5xx) in place of `"response"`.
//!
//! ```json
//! {"request":{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]},"response":{"role":"assistant","content":[{"type":"text","text":"Hello!"}],"provider":"openai","model":"gpt-4o"}}
//! ```
//!
//! Lines are whole exchanges, in the order they happened: a cassette can
//! be read while being written, diffed and reviewed like any text file.

use std::path::{Path, PathBuf};

use parlance_format::{FormatError, Message};
use serde_json::{Map, Value, json};

use crate::{ModelError, ModelRequest, RequestDocument};

/// One model call: what was sent, and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The request, as sent (the model's id in `model`; `stream` when it
    /// was streamed).
    pub request: RequestDocument,
    /// The answer, or the error the call ended with.
    pub response: Result<Message, ModelError>,
}

/// The exchanges of a cassette file, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cassette {
    /// The exchanges, in the order they happened.
    pub exchanges: Vec<Exchange>,
}

/// A cassette could not be read or written: which file, which line, what.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cassette {}{}: {message}", path.display(), line.map(|l| format!(" line {l}")).unwrap_or_default())]
pub struct CassetteError {
    /// The cassette file.
    pub path: PathBuf,
    /// The line (from 1), when the problem is on one.
    pub line: Option<usize>,
    /// What is wrong (with the JSON path inside the line, when there is one).
    pub message: String,
}

impl Exchange {
    /// The exchange as one JSON object (one line of a cassette).
    pub fn to_value(&self) -> Value {
        let mut out = Map::new();
        out.insert("request".into(), self.request.to_value());
        match &self.response {
            Ok(m) => out.insert("response".into(), json!(m)),
            Err(e) => out.insert("error".into(), error_value(e)),
        };
        Value::Object(out)
    }

    /// Reads one exchange; errors name the JSON path.
    pub fn from_value(v: &Value) -> Result<Exchange, FormatError> {
        let err = |path: &str, message: String| FormatError {
            path: path.to_string(),
            message,
        };
        let m = v.as_object().ok_or_else(|| {
            err(
                "",
                "expected an exchange (an object with \"request\" and \"response\")".into(),
            )
        })?;
        for k in m.keys() {
            if !["request", "response", "error"].contains(&k.as_str()) {
                return Err(err(
                    k,
                    "unknown field in an exchange (expected one of: request, response, error)"
                        .into(),
                ));
            }
        }
        let request = m
            .get("request")
            .ok_or_else(|| err("request", "required field missing".into()))?;
        let request = RequestDocument::from_value(request).map_err(|e| e.under("request"))?;
        let response = match (m.get("response"), m.get("error")) {
            (Some(r), None) => Ok(Message::from_value(r).map_err(|e| e.under("response"))?),
            (None, Some(e)) => Err(error_from(e).map_err(|m| err("error", m))?),
            (Some(_), Some(_)) => {
                return Err(err(
                    "error",
                    "an exchange has a response or an error, not both".into(),
                ));
            }
            (None, None) => return Err(err("response", "required field missing".into())),
        };
        Ok(Exchange { request, response })
    }

    /// The exchange for `request` as sent to `model_id`.
    pub fn new(
        model_id: &str,
        stream: bool,
        request: &ModelRequest,
        response: Result<Message, ModelError>,
    ) -> Exchange {
        Exchange {
            request: RequestDocument {
                model: Some(model_id.to_string()),
                stream,
                request: without_costs(request),
            },
            response,
        }
    }
}

/// The request without its messages' costs: what a model is asked does
/// not depend on the price table, so a cassette neither records them nor
/// fails when prices change.
fn without_costs(request: &ModelRequest) -> ModelRequest {
    let mut r = request.clone();
    for m in &mut r.messages {
        m.cost = None;
    }
    r
}

impl Cassette {
    /// Reads a cassette file (JSON Lines; blank lines are skipped).
    pub fn read(path: impl AsRef<Path>) -> Result<Cassette, CassetteError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| CassetteError {
            path: path.to_path_buf(),
            line: None,
            message: format!("cannot be read: {e}"),
        })?;
        Cassette::parse(&text).map_err(|(line, message)| CassetteError {
            path: path.to_path_buf(),
            line: Some(line),
            message,
        })
    }

    /// Reads a cassette's text; an error is `(line, what)`.
    pub fn parse(text: &str) -> Result<Cassette, (usize, String)> {
        let mut exchanges = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value: Value =
                serde_json::from_str(line).map_err(|e| (i + 1, format!("not JSON: {e}")))?;
            exchanges.push(Exchange::from_value(&value).map_err(|e| (i + 1, e.to_string()))?);
        }
        Ok(Cassette { exchanges })
    }

    /// The cassette as text: one exchange a line.
    pub fn to_jsonl(&self) -> String {
        self.exchanges
            .iter()
            .map(|e| parlance_format::to_json(&e.to_value()) + "\n")
            .collect()
    }
}

fn error_value(e: &ModelError) -> Value {
    let message = e.message();
    let mut v = json!({"kind": e.kind(), "message": message});
    if let ModelError::Server { status, .. } = e {
        v["status"] = json!(status);
    }
    v
}

fn error_from(v: &Value) -> Result<ModelError, String> {
    let kind = v
        .get("kind")
        .and_then(Value::as_str)
        .ok_or("expected {\"kind\", \"message\"} with kind a string")?;
    let message = v
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Ok(match kind {
        "authentication" => ModelError::Authentication { message },
        "permission" => ModelError::Permission { message },
        "rate_limited" => ModelError::RateLimited {
            message,
            retry_after: None,
        },
        "quota_exceeded" => ModelError::QuotaExceeded { message },
        "overloaded" => ModelError::Overloaded {
            message,
            retry_after: None,
        },
        "invalid_request" => ModelError::InvalidRequest { message },
        "context_too_long" => ModelError::ContextTooLong { message },
        "server" => ModelError::Server {
            status: v
                .get("status")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(500),
            message,
        },
        "network" => ModelError::Network { message },
        "timeout" => ModelError::Timeout { message },
        "malformed_response" => ModelError::MalformedResponse { message },
        "malformed_request" => ModelError::MalformedRequest { message },
        "unsupported" => ModelError::Unsupported { message },
        other => {
            return Err(format!(
                "unknown error kind {other:?} (expected one of: authentication, permission, rate_limited, quota_exceeded, overloaded, invalid_request, context_too_long, server, network, timeout, malformed_response, malformed_request, unsupported)"
            ));
        }
    })
}

/// Where two requests first differ, as `path: recorded X, got Y`
/// (`None` when they are the same). The model's id and the stream flag
/// are not compared: a run streamed when recorded may be replayed whole;
/// nor are the messages' costs (prices change, the request does not).
pub fn first_difference(recorded: &ModelRequest, got: &ModelRequest) -> Option<String> {
    let doc = |r: &ModelRequest| {
        RequestDocument {
            model: None,
            stream: false,
            request: without_costs(r),
        }
        .to_value()
    };
    let (a, b) = (doc(recorded), doc(got));
    diff(&a, &b, String::new())
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "nothing".into(),
        Some(v) => {
            let text = parlance_format::to_json(v);
            if text.chars().count() > 80 {
                format!("{}…", text.chars().take(80).collect::<String>())
            } else {
                text
            }
        }
    }
}

fn diff(a: &Value, b: &Value, path: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let at = join(&path, k);
                match y.get(k) {
                    Some(vb) => {
                        if let Some(d) = diff(va, vb, at) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{at}: recorded {}, got nothing", show(Some(va)))),
                }
            }
            y.iter().find(|(k, _)| !x.contains_key(*k)).map(|(k, vb)| {
                format!(
                    "{}: recorded nothing, got {}",
                    join(&path, k),
                    show(Some(vb))
                )
            })
        }
        (Value::Array(x), Value::Array(y)) => {
            for i in 0..x.len().max(y.len()) {
                let at = format!("{path}[{i}]");
                match (x.get(i), y.get(i)) {
                    (Some(va), Some(vb)) => {
                        if let Some(d) = diff(va, vb, at) {
                            return Some(d);
                        }
                    }
                    (va, vb) => {
                        return Some(format!("{at}: recorded {}, got {}", show(va), show(vb)));
                    }
                }
            }
            None
        }
        _ if a == b => None,
        _ => Some(format!(
            "{}: recorded {}, got {}",
            if path.is_empty() { "(root)" } else { &path },
            show(Some(a)),
            show(Some(b))
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_are_neither_recorded_nor_compared() {
        let a = ModelRequest {
            messages: vec![Message::user("hi"), Message::assistant("hello")],
            ..Default::default()
        };
        let mut priced = a.clone();
        priced.messages[1].cost = Some(0.25);
        assert_eq!(first_difference(&a, &priced), None);
        let e = Exchange::new("m", false, &priced, Ok(Message::assistant("ok")));
        assert_eq!(e.request.request.messages[1].cost, None);
        assert_eq!(e.request.request.messages[1].text(), "hello");
    }

    #[test]
    fn the_first_difference_is_named_by_its_path() {
        let a = ModelRequest {
            messages: vec![Message::user("hi"), Message::assistant("hello")],
            ..Default::default()
        };
        let mut b = a.clone();
        b.messages[1] = Message::assistant("howdy");
        assert_eq!(
            first_difference(&a, &b).unwrap(),
            "messages[1].content[0].text: recorded \"hello\", got \"howdy\""
        );
        b.messages.pop();
        assert_eq!(
            first_difference(&a, &b).unwrap(),
            "messages[1]: recorded {\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]}, got nothing"
        );
        b.options.max_tokens = Some(5);
        b.messages = a.messages.clone();
        assert_eq!(
            first_difference(&a, &b).unwrap(),
            "options: recorded nothing, got {\"max_tokens\":5}"
        );
        assert_eq!(first_difference(&a, &a), None);
    }

    #[test]
    fn errors_are_written_and_read_back() {
        let e = Exchange::new(
            "m",
            false,
            &ModelRequest::default(),
            Err(ModelError::Server {
                status: 502,
                message: "bad gateway".into(),
            }),
        );
        let back = Exchange::from_value(&e.to_value()).unwrap();
        assert_eq!(back, e);
    }
}
