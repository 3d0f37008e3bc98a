//! Responses API error objects (`response.failed`, `error` events nested or
//! flat) → typed errors. HTTP error bodies have the Chat Completions shape
//! (see `openai_common`).

use parlance_model::ModelError;
use serde_json::Value;

use crate::openai_common::from_error;

/// An `error` object (response.failed, or an `error` event nested or flat) → typed error.
pub(crate) fn error_object(e: &Value) -> ModelError {
    let inner = e.get("error").unwrap_or(e);
    let message = inner
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("the response failed")
        .to_string();
    let code = inner.get("code").and_then(Value::as_str).unwrap_or("");
    let ty = inner.get("type").and_then(Value::as_str).unwrap_or(code);
    from_error(0, code, ty, message, None)
}
