//! Gemini errors (`google.rpc.Status`) → typed errors; a 429's
//! `RetryInfo.retryDelay` is the wait.

use parlance_model::ModelError;
use serde_json::Value;

/// A `google.rpc.Status` error → typed error; `RetryInfo.retryDelay` is the wait.
pub(crate) fn error_object(e: &Value, status_hint: Option<u16>) -> ModelError {
    let message = e
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("error")
        .to_string();
    let status = e.get("status").and_then(Value::as_str).unwrap_or("");
    let code = status_hint
        .or_else(|| {
            e.get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok())
        })
        .unwrap_or(0);
    let retry_after = e
        .get("details")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|d| d.get("retryDelay").and_then(Value::as_str))
        .and_then(|text| {
            let secs = text.strip_suffix('s')?.parse::<f64>().ok()?;
            crate::transport::wait_from_secs(secs, &format!("RetryInfo.retryDelay {text:?}"))
        });
    match (status, code) {
        ("RESOURCE_EXHAUSTED", _) | (_, 429) => {
            // A daily quota is not worth waiting for; a per-minute one is.
            if message.contains("per day") || message.to_lowercase().contains("billing") {
                ModelError::QuotaExceeded { message }
            } else {
                ModelError::RateLimited {
                    message,
                    retry_after,
                }
            }
        }
        ("UNAUTHENTICATED", _) | (_, 401) => ModelError::Authentication { message },
        ("PERMISSION_DENIED", _) | (_, 403) => ModelError::Permission { message },
        ("UNAVAILABLE", _) | (_, 503) => ModelError::Overloaded {
            message,
            retry_after,
        },
        ("INTERNAL", _) | ("DEADLINE_EXCEEDED", _) => ModelError::Server {
            status: if code >= 500 { code } else { 500 },
            message,
        },
        (_, c) if c >= 500 => ModelError::Server { status: c, message },
        ("INVALID_ARGUMENT", _) if message.contains("exceeds the maximum number of tokens") => {
            ModelError::ContextTooLong { message }
        }
        _ => ModelError::InvalidRequest { message },
    }
}

/// An error answer → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<std::time::Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let e = match v.get("error") {
        Some(e) => error_object(e, Some(status)),
        None => error_object(
            &serde_json::json!({"message": String::from_utf8_lossy(body)}),
            Some(status),
        ),
    };
    // RetryInfo in the body wins; a retry-after header is the fallback.
    match e {
        ModelError::RateLimited {
            message,
            retry_after: None,
        } => ModelError::RateLimited {
            message,
            retry_after,
        },
        other => other,
    }
}
