//! What the two OpenAI APIs share: the error shape (`{"error": {"message",
//! "type", "code"}}`) and how tool call arguments are written.

use parlance_format::ToolCall;
use parlance_model::ModelError;
use serde_json::Value;

/// An error answer → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<std::time::Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let e = v.get("error").unwrap_or(&Value::Null);
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(body).chars().take(300).collect());
    let code = e.get("code").and_then(Value::as_str).unwrap_or("");
    let ty = e.get("type").and_then(Value::as_str).unwrap_or("");
    from_error(status, code, ty, message, retry_after)
}

pub(crate) fn from_error(
    status: u16,
    code: &str,
    ty: &str,
    message: String,
    retry_after: Option<std::time::Duration>,
) -> ModelError {
    if code == "insufficient_quota" || ty == "insufficient_quota" {
        return ModelError::QuotaExceeded { message };
    }
    if code == "context_length_exceeded" {
        return ModelError::ContextTooLong { message };
    }
    match status {
        401 => ModelError::Authentication { message },
        403 => ModelError::Permission { message },
        429 => ModelError::RateLimited {
            message,
            retry_after,
        },
        503 => ModelError::Overloaded {
            message,
            retry_after,
        },
        400 | 404 | 409 | 413 | 422 => ModelError::InvalidRequest { message },
        s if s >= 500 || s == 408 => ModelError::Server { status: s, message },
        // In-stream errors carry no status: judge by their type.
        _ => match ty {
            "rate_limit_exceeded" | "rate_limit_error" => ModelError::RateLimited {
                message,
                retry_after,
            },
            "server_error" | "api_error" => ModelError::Server {
                status: 500,
                message,
            },
            _ => ModelError::InvalidRequest { message },
        },
    }
}

/// A tool call's arguments as the JSON text both APIs carry: the text the
/// model wrote when it was not valid JSON, else the arguments written out.
pub(crate) fn arguments_text(c: &ToolCall) -> String {
    match &c.raw_arguments {
        Some(raw) if c.arguments.is_null() => raw.clone(),
        _ => serde_json::to_string(&c.arguments).expect("json"),
    }
}
