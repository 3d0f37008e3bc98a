//! Errors as JSON: `{"error": {"code", "message"}}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response as HttpResponse};
use parlance_store::StoreError;
use schemars::JsonSchema;
use serde::Serialize;

/// An error answer: `{"error": {"code", "message"}}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorDetail {
    /// A stable code: `invalid_request`, `unauthorized`, `forbidden`,
    /// `not_found`, `method_not_allowed`, `thread_busy`, `invalid_decision`,
    /// `conflict`, `body_too_large`, `internal`.
    pub code: String,
    /// For a person; names the JSON path for invalid requests.
    pub message: String,
}

/// A handler's error.
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub &'static str, pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> HttpResponse {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.1.into(),
                message: crate::secrets::redact(&self.2).into_owned(),
            },
        };
        (self.0, Json(body)).into_response()
    }
}

/// `400 invalid_request`.
pub fn bad(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, "invalid_request", message.into())
}

/// `400 invalid_decision`.
pub fn bad_decision(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, "invalid_decision", message.into())
}

/// `404 not_found`.
pub fn not_found(what: &str) -> ApiError {
    ApiError(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("{what} not found"),
    )
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Busy { .. } => ApiError(StatusCode::CONFLICT, "thread_busy", e.to_string()),
            StoreError::NotFound(w) => not_found(&w),
            StoreError::Conflict(m) => ApiError(StatusCode::CONFLICT, "conflict", m),
            StoreError::LeaseLost { .. } => {
                ApiError(StatusCode::CONFLICT, "conflict", e.to_string())
            }
            other => {
                tracing::error!(error = %other, "store error");
                ApiError(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    other.to_string(),
                )
            }
        }
    }
}

/// Any other path: a JSON 404.
pub async fn fallback() -> ApiError {
    ApiError(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such endpoint (see /openapi.json)".into(),
    )
}

/// A known path with another method: a JSON 405.
pub async fn method_not_allowed() -> ApiError {
    ApiError(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method (see /openapi.json)".into(),
    )
}
