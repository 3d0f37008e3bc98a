//! Who is calling: a bearer token's subject, or nobody.
//!
//! Anonymous callers (no token configured at all) own the threads they
//! create like any subject, but are never operators: artifacts and other
//! subjects' threads need an operator token.
//!
//! A handler names the caller by taking a [`Principal`] argument (an axum
//! extractor): a request without a valid token is answered `401` before
//! the handler runs.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;

use crate::config::AuthConfig;
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
    /// The caller when no token is configured at all.
    pub const ANONYMOUS: Principal = Principal {
        subject: None,
        operator: false,
    };

    /// The name used to bind signed state to a caller.
    pub fn name(&self) -> &str {
        self.subject.as_deref().unwrap_or("")
    }
}

/// The accepted bearer tokens and whose they are (cheap to clone). With
/// none, every caller is [`Principal::ANONYMOUS`].
#[derive(Debug, Clone, Default)]
pub struct Tokens(Arc<HashMap<String, Principal>>);

impl Tokens {
    /// The tokens of the configuration.
    pub fn new(auth: &AuthConfig) -> Tokens {
        Tokens(Arc::new(
            auth.tokens
                .iter()
                .map(|t| {
                    let who = Principal {
                        subject: Some(t.subject.clone()),
                        operator: t.operator,
                    };
                    (t.token.clone(), who)
                })
                .collect(),
        ))
    }

    /// Whether no token is configured (every caller is anonymous).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The caller, from `Authorization: Bearer TOKEN` (the scheme in any case).
    pub fn caller(&self, headers: &HeaderMap) -> Result<Principal, ApiError> {
        if self.0.is_empty() {
            return Ok(Principal::ANONYMOUS);
        }
        let value = headers
            .get("authorization")
            .ok_or_else(|| ApiError::unauthorized("missing bearer token"))?
            .to_str()
            .map_err(|_| ApiError::unauthorized("the authorization header is not text"))?;
        let expected = || ApiError::unauthorized("expected `Authorization: Bearer TOKEN`");
        let (scheme, token) = value.trim().split_once(' ').ok_or_else(expected)?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(expected());
        }
        self.0
            .get(token.trim())
            .cloned()
            .ok_or_else(|| ApiError::unauthorized("unknown token"))
    }
}

/// The caller of a request, for any router state that holds the [`Tokens`].
impl<S: Send + Sync> FromRequestParts<S> for Principal
where
    Tokens: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Tokens::from_ref(state).caller(&parts.headers)
    }
}
