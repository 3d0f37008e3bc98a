//! Mistral error bodies → typed errors. Mistral answers in several
//! shapes: `{"object": "error", "message", "type", "param", "code"}`,
//! `{"message": "Unauthorized", "request_id"}`, `{"detail":
//! "Unauthorized"}` and, for a request its schema refuses (422),
//! `{"detail": [{"loc", "msg", "type"}]}`; OpenAI's nested
//! `{"error": {…}}` is read too. The status decides, as for OpenAI.

use std::time::Duration;

use parlance_model::ModelError;
use serde_json::Value;

use crate::openai_common::from_error;

/// The message of an error body (the body's text when it has none).
fn message(v: &Value, body: &[u8]) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    };
    if let Some(m) = v.get("message").and_then(text) {
        return m;
    }
    if let Some(m) = v.pointer("/error/message").and_then(text) {
        return m;
    }
    match v.get("detail") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|d| {
                let loc = d
                    .get("loc")
                    .and_then(Value::as_array)
                    .map(|l| {
                        l.iter()
                            .map(|p| match p {
                                Value::String(s) => s.clone(),
                                other => other.to_string(),
                            })
                            .collect::<Vec<_>>()
                            .join(".")
                    })
                    .unwrap_or_default();
                let msg = d.get("msg").and_then(Value::as_str).unwrap_or("invalid");
                format!("{loc}: {msg}")
            })
            .collect::<Vec<_>>()
            .join("; "),
        Some(d) => text(d).unwrap_or_default(),
        None => String::from_utf8_lossy(body).chars().take(300).collect(),
    }
}

/// An error answer → a typed error.
pub fn classify(status: u16, body: &[u8], retry_after: Option<Duration>) -> ModelError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let e = v.get("error").filter(|e| e.is_object()).unwrap_or(&v);
    let code = match e.get("code") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let ty = e.get("type").and_then(Value::as_str).unwrap_or("");
    from_error(status, &code, ty, message(&v, body), retry_after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shape_gives_its_message_and_the_status_its_kind() {
        let e = classify(401, br#"{"detail":"Unauthorized"}"#, None);
        assert!(
            matches!(&e, ModelError::Authentication { message } if message == "Unauthorized"),
            "{e:?}"
        );
        let e = classify(401, br#"{"message":"Unauthorized","request_id":"x"}"#, None);
        assert!(
            matches!(&e, ModelError::Authentication { message } if message == "Unauthorized"),
            "{e:?}"
        );
        let e = classify(
            400,
            br#"{"object":"error","message":"Invalid model: nope","type":"invalid_model","param":null,"code":"1500"}"#,
            None,
        );
        assert!(
            matches!(&e, ModelError::InvalidRequest { message } if message == "Invalid model: nope"),
            "{e:?}"
        );
        let e = classify(
            422,
            br#"{"detail":[{"loc":["body","messages",0,"content"],"msg":"Field required","type":"missing"}]}"#,
            None,
        );
        assert!(
            matches!(&e, ModelError::InvalidRequest { message } if message == "body.messages.0.content: Field required"),
            "{e:?}"
        );
        let e = classify(
            429,
            br#"{"message":"Requests rate limit exceeded"}"#,
            Some(Duration::from_secs(2)),
        );
        assert!(
            matches!(
                e,
                ModelError::RateLimited {
                    retry_after: Some(_),
                    ..
                }
            ),
            "{e:?}"
        );
        let e = classify(503, b"upstream down", None);
        assert!(
            matches!(&e, ModelError::Overloaded { message, .. } if message == "upstream down"),
            "{e:?}"
        );
    }
}
