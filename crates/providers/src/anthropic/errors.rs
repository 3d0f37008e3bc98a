//! Anthropic error bodies (an HTTP answer or an in-stream `error` event) →
//! typed errors.

use parlance_model::ModelError;
use serde_json::Value;

/// An error body (HTTP or in-stream `error` event) → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<std::time::Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let e = v.get("error").unwrap_or(&Value::Null);
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(300).collect());
    let ty = e.get("type").and_then(Value::as_str).unwrap_or("");
    from_error(status, ty, message, retry_after)
}

pub(crate) fn from_error(
    status: u16,
    ty: &str,
    message: String,
    retry_after: Option<std::time::Duration>,
) -> ModelError {
    match (ty, status) {
        ("invalid_request_error", _) if message.contains("prompt is too long") => {
            ModelError::ContextTooLong { message }
        }
        ("authentication_error", _) | (_, 401) => ModelError::Authentication { message },
        ("permission_error", _) | ("billing_error", _) | (_, 403) => {
            ModelError::Permission { message }
        }
        ("rate_limit_error", _) | (_, 429) => ModelError::RateLimited {
            message,
            retry_after,
        },
        ("overloaded_error", _) | (_, 529) => ModelError::Overloaded {
            message,
            retry_after,
        },
        ("api_error", _) | ("timeout_error", _) => ModelError::Server {
            status: if status >= 500 { status } else { 500 },
            message,
        },
        (_, s) if s >= 500 || s == 408 || s == 409 => ModelError::Server { status: s, message },
        _ => ModelError::InvalidRequest { message },
    }
}
