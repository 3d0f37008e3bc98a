//! Ollama's errors: `{"error": "the message"}` with the HTTP status (400
//! bad request, 401/403 for the cloud's key, 404 model not found, 429 rate
//! limit, 500, 502 a cloud model unreachable), and the same object as an
//! NDJSON line when a stream fails after it started (the status stays 200).

use std::time::Duration;

use parlance_model::ModelError;
use serde_json::Value;

/// The message of an error body (the body's text when it has none).
pub(crate) fn message(v: &Value, body: &[u8]) -> String {
    match v.get("error") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(o)) => o
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| Value::Object(o.clone()).to_string()),
        _ => String::from_utf8_lossy(body).chars().take(300).collect(),
    }
}

/// An error answer → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let message = message(&v, body);
    let lower = message.to_lowercase();
    if lower.contains("context length") || lower.contains("context window") {
        return ModelError::ContextTooLong { message };
    }
    match status {
        401 => ModelError::Authentication { message },
        403 => ModelError::Permission { message },
        429 => ModelError::RateLimited {
            message,
            retry_after,
        },
        502..=504 => ModelError::Overloaded {
            message,
            retry_after,
        },
        400 | 404 | 405 | 413 | 422 => ModelError::InvalidRequest { message },
        s if s >= 500 || s == 408 => ModelError::Server { status: s, message },
        // A line of a stream that failed after it started: the model
        // failed while running (Ollama's words), a server error.
        _ => ModelError::Server {
            status: 500,
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_mid_stream_errors() {
        let body = br#"{"error":"model \"nope\" not found, try pulling it first"}"#;
        let e = classify(404, body, None);
        assert!(
            matches!(&e, ModelError::InvalidRequest { message } if message.starts_with("model \"nope\" not found")),
            "{e:?}"
        );
        assert!(matches!(
            classify(401, br#"{"error":"unauthorized"}"#, None),
            ModelError::Authentication { .. }
        ));
        assert!(matches!(
            classify(
                429,
                br#"{"error":"too many requests"}"#,
                Some(Duration::from_secs(1))
            ),
            ModelError::RateLimited {
                retry_after: Some(_),
                ..
            }
        ));
        assert!(matches!(
            classify(502, b"{}", None),
            ModelError::Overloaded { .. }
        ));
        let e = classify(
            0,
            br#"{"error":"an error was encountered while running the model"}"#,
            None,
        );
        assert!(matches!(e, ModelError::Server { status: 500, .. }), "{e:?}");
        let e = classify(
            400,
            br#"{"error":"prompt is longer than the context length"}"#,
            None,
        );
        assert!(matches!(e, ModelError::ContextTooLong { .. }), "{e:?}");
        let e = classify(500, b"plain text", None);
        assert!(
            matches!(&e, ModelError::Server { message, .. } if message == "plain text"),
            "{e:?}"
        );
    }
}
