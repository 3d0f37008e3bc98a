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
    /// `conflict`, `body_too_large`, `unsupported_media_type`, `cross_site`,
    /// `misdirected_host`, `damaged_record`, `overloaded` (503, with
    /// `Retry-After`), `internal`.
    pub code: String,
    /// For a person; names the JSON path for invalid requests.
    pub message: String,
}

/// A handler's error: answered as [`ErrorBody`] with `status` (secrets
/// scrubbed from the message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable code ([`ErrorDetail::code`]).
    pub code: &'static str,
    /// For a person.
    pub message: String,
}

impl ApiError {
    /// Any status and code.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// `400 invalid_request`: the message names the JSON path.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_request", message)
    }

    /// `400 invalid_decision`: a decision was refused; the run still waits.
    pub fn invalid_decision(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_decision", message)
    }

    /// `401 unauthorized`.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    /// `404 not_found`: "`what` not found".
    pub fn not_found(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("{what} not found"),
        )
    }

    /// `409 conflict`.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }

    /// `413 body_too_large`.
    pub fn body_too_large(message: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "body_too_large", message)
    }

    /// `500 internal` (logged).
    pub fn internal(message: impl Into<String>) -> Self {
        let message = message.into();
        tracing::error!(error = %message, "internal error");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> HttpResponse {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.into(),
                message: parlance_assemble::secrets::redact(&self.message).into_owned(),
            },
        };
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            // RFC 6750: which scheme to answer with (MCP clients read it).
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer realm=\"parlance\""),
            );
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Busy { .. } => {
                ApiError::new(StatusCode::CONFLICT, "thread_busy", e.to_string())
            }
            StoreError::NotFound(w) => ApiError::not_found(&w),
            StoreError::Conflict(m) => ApiError::conflict(m),
            StoreError::LeaseLost { .. } => ApiError::conflict(e.to_string()),
            StoreError::Unstorable(_) => ApiError::invalid_request(e.to_string()),
            StoreError::Corrupt { ref thread, .. } => {
                let message = format!(
                    "{e} (the record is damaged: an operator can delete the thread with DELETE /v1/threads/{thread}?force=true)"
                );
                tracing::error!(error = %message, "damaged record");
                ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "damaged_record", message)
            }
            other => ApiError::internal(other.to_string()),
        }
    }
}

/// Any other path: a JSON 404.
pub async fn fallback() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such endpoint (see /openapi.json)",
    )
}

/// A known path with another method: a JSON 405.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not take that method (see /openapi.json)",
    )
}
