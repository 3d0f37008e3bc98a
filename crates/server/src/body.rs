//! Request bodies: [`JsonBody`], the extractor every handler reads its
//! JSON with.
//!
//! Like `axum::Json`, only `Content-Type: application/json` is read (`415`
//! otherwise: a page of another site can send a form or `text/plain`
//! without asking first, never JSON). Unlike it, a problem is named by its
//! JSON path (`turns[0].messages[1].role: unknown variant ...`), bytes
//! after the value are refused, nesting past serde_json's limit is named as
//! such, and every refusal is an [`ApiError`] like the handlers' own.
//! `Option<JsonBody<T>>` takes an empty body (of any type) as `None` (for
//! requests whose every field is optional).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, OptionalFromRequest, Request};
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON request body read into `T`.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        is_json(&req)?;
        let bytes = Bytes::from_request(req, state).await.map_err(too_large)?;
        parse(&bytes).map(JsonBody)
    }
}

impl<T: DeserializeOwned, S: Send + Sync> OptionalFromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, ApiError> {
        let json = is_json(&req);
        let bytes = Bytes::from_request(req, state).await.map_err(too_large)?;
        if bytes.is_empty() {
            return Ok(None);
        }
        json?;
        parse(&bytes).map(|v| Some(JsonBody(v)))
    }
}

/// `415` unless the body is declared `application/json` (parameters such
/// as `charset=utf-8` allowed).
fn is_json(req: &Request) -> Result<(), ApiError> {
    let declared = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = declared.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("application/json") {
        return Ok(());
    }
    let got = if declared.is_empty() {
        "none".to_string()
    } else {
        format!("{declared:?}")
    };
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        format!("(body): expected Content-Type: application/json, got {got}"),
    ))
}

fn too_large(e: BytesRejection) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::body_too_large(e.body_text())
    } else {
        ApiError::invalid_request(e.body_text())
    }
}

/// `bytes` as one JSON value of type `T`, or the path of the first problem.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.to_string().starts_with("recursion limit exceeded") {
            // The path of the 129th level: its start says where.
            let at = match path.char_indices().nth(60) {
                _ if path == "." => "(body)".to_string(),
                Some((i, _)) => format!("{}…", &path[..i]),
                None => path,
            };
            return ApiError::invalid_request(format!(
                "{at}: nested deeper than 128 levels of arrays and objects (a request body's limit; a free-form value inside it, such as arguments or metadata, may nest {} levels)",
                parlance_format::MAX_VALUE_DEPTH
            ));
        }
        if path == "." {
            ApiError::invalid_request(format!("(body): {inner}"))
        } else {
            ApiError::invalid_request(format!("{path}: {inner}"))
        }
    })?;
    de.end().map_err(|e| {
        ApiError::invalid_request(format!("(body): {e} (only one JSON value is allowed)"))
    })?;
    Ok(value)
}
