//! Request bodies: [`JsonBody`], the extractor every handler reads its
//! JSON with.
//!
//! Unlike `axum::Json`, a problem is named by its JSON path
//! (`turns[0].messages[1].role: unknown variant ...`), any content type is
//! read as JSON, bytes after the value are refused, and every refusal is an
//! [`ApiError`] like the handlers' own. `Option<JsonBody<T>>` takes an
//! empty body as `None` (for requests whose every field is optional).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, OptionalFromRequest, Request};
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON request body read into `T`.
#[derive(Debug, Clone)]
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state).await.map_err(too_large)?;
        parse(&bytes).map(JsonBody)
    }
}

impl<T: DeserializeOwned, S: Send + Sync> OptionalFromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Option<Self>, ApiError> {
        let bytes = Bytes::from_request(req, state).await.map_err(too_large)?;
        if bytes.is_empty() {
            return Ok(None);
        }
        parse(&bytes).map(|v| Some(JsonBody(v)))
    }
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
