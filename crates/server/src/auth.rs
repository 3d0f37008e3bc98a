//! Who is calling: a bearer token's subject, or nobody.
//!
//! Anonymous callers (no token configured at all) own the threads they
//! create like any subject, but are never operators: artifacts and other
//! subjects' threads need an operator token.

use axum::http::{HeaderMap, StatusCode};

use crate::api::AppState;
use crate::error::ApiError;

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// Owner of the threads it creates (`None`: an anonymous caller).
    pub subject: Option<String>,
    /// Sees every thread and the artifacts.
    pub operator: bool,
}

impl Principal {
    /// The name used to bind signed state to a caller.
    pub fn name(&self) -> &str {
        self.subject.as_deref().unwrap_or("")
    }
}

fn unauthorized(message: &str) -> ApiError {
    ApiError(StatusCode::UNAUTHORIZED, "unauthorized", message.into())
}

/// The caller, from `Authorization: Bearer TOKEN` (the scheme in any case).
pub fn principal(state: &AppState, headers: &HeaderMap) -> Result<Principal, ApiError> {
    if state.tokens.is_empty() {
        return Ok(Principal {
            subject: None,
            operator: false,
        });
    }
    let value = headers
        .get("authorization")
        .ok_or_else(|| unauthorized("missing bearer token"))?
        .to_str()
        .map_err(|_| unauthorized("the authorization header is not text"))?;
    let (scheme, token) = value
        .trim()
        .split_once(' ')
        .ok_or_else(|| unauthorized("expected `Authorization: Bearer TOKEN`"))?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(unauthorized("expected `Authorization: Bearer TOKEN`"));
    }
    state
        .tokens
        .get(token.trim())
        .cloned()
        .ok_or_else(|| unauthorized("unknown token"))
}
