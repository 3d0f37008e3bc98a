//! Bedrock error answers (`{"message": ...}` with the exception's name in
//! the `x-amzn-ErrorType` header or the body's `__type`) and exception
//! events of a ConverseStream → typed errors.
//!
//! The transport hands a classifier the status and the body only; the
//! status alone already names the exception family (the service model
//! gives each exception one status: 400 validation, 403 access denied, 404
//! not found, 408 model timeout, 424 model error, 429 throttling or model
//! not ready, 500 internal, 503 unavailable), and a body's `__type` refines
//! it where present.

use parlance_model::ModelError;
use serde_json::Value;

/// An HTTP error answer → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<std::time::Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let message = message_of(&v).unwrap_or_else(|| {
        String::from_utf8_lossy(body)
            .chars()
            .take(300)
            .collect::<String>()
    });
    let ty = v
        .get("__type")
        .and_then(Value::as_str)
        .map(exception_name)
        .unwrap_or("");
    from_exception(status, ty, message, retry_after)
}

fn message_of(v: &Value) -> Option<String> {
    v.get("message")
        .or_else(|| v.get("Message"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// `x-amzn-ErrorType` and `__type` values may carry a namespace
/// (`com.amazon.coral#ThrottlingException`) or a URL after a colon
/// (`ValidationException:http://...`): the bare name.
pub fn exception_name(raw: &str) -> &str {
    let raw = raw.split(':').next().unwrap_or(raw);
    raw.rsplit('#').next().unwrap_or(raw)
}

/// An exception by name (either `ThrottlingException` or the stream
/// union's `throttlingException`) and status → a typed error.
pub fn from_exception(
    status: u16,
    ty: &str,
    message: String,
    retry_after: Option<std::time::Duration>,
) -> ModelError {
    let lower = ty.to_ascii_lowercase();
    match (lower.as_str(), status) {
        ("validationexception", _) | ("", 400)
            if message.contains("too long") || message.contains("context window") =>
        {
            ModelError::ContextTooLong { message }
        }
        ("throttlingexception" | "modelnotreadyexception", _) | ("", 429) => {
            ModelError::RateLimited {
                message,
                retry_after,
            }
        }
        ("serviceunavailableexception", _) | ("", 503) => ModelError::Overloaded {
            message,
            retry_after,
        },
        ("internalserverexception", _) | ("modelstreamerrorexception", _) => ModelError::Server {
            status: if status >= 500 { status } else { 500 },
            message,
        },
        ("modelerrorexception", _) | ("", 424) => ModelError::Server {
            status: 424,
            message,
        },
        ("modeltimeoutexception", _) | ("", 408) => ModelError::Server {
            status: 408,
            message,
        },
        ("unrecognizedclientexception", _)
        | ("invalidsignatureexception", _)
        | ("expiredtokenexception", _)
        | ("", 401) => ModelError::Authentication { message },
        ("accessdeniedexception", _) | ("", 403) => {
            // A bad or expired signature is a 403 too; AWS says so in the message.
            if message.contains("signature")
                || message.contains("security token")
                || message.contains("Authorization header")
            {
                ModelError::Authentication { message }
            } else {
                ModelError::Permission { message }
            }
        }
        (_, s) if s >= 500 => ModelError::Server { status: s, message },
        _ => ModelError::InvalidRequest { message },
    }
}

/// An exception event of a ConverseStream (`:exception-type` names the
/// union member) → a typed error; `data` is its JSON payload.
pub fn stream_exception(ty: &str, data: &str) -> ModelError {
    let v: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    let mut message = message_of(&v).unwrap_or_else(|| format!("{ty} in the stream"));
    // A model's own failure: its status and message are kept.
    if let Some(orig) = v.get("originalMessage").and_then(Value::as_str) {
        message = format!("{message} (model said: {orig})");
    }
    let status = match exception_name(ty).to_ascii_lowercase().as_str() {
        "throttlingexception" => 429,
        "serviceunavailableexception" => 503,
        "validationexception" => 400,
        _ => 500,
    };
    from_exception(status, exception_name(ty), message, None)
}
