//! `POST /v1/sessions/end`: an operator ends every inbox session of a
//! subject (a lost laptop, a stolen cookie), on every server sharing the
//! store. The subject's API tokens are not sessions: they keep working
//! until they are removed from the configuration.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::auth::Principal;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;

/// `POST /v1/sessions/end`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndSessions {
    /// The subject (of a configured token) whose sessions end: every one
    /// issued up to now; later logins are not affected.
    pub subject: String,
}

/// `POST /v1/sessions/end`: `{"subject", "ended_up_to"}` (microseconds
/// since the epoch: sessions issued up to then are ended).
pub async fn end_sessions(
    State(state): State<Arc<AppState>>,
    who: Principal,
    JsonBody(req): JsonBody<EndSessions>,
) -> Result<Response, ApiError> {
    if !who.operator {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "only an operator token can end a subject's sessions",
        ));
    }
    let subject = req.subject.trim();
    if !state
        .config
        .auth
        .tokens
        .iter()
        .any(|t| t.subject == subject)
    {
        return Err(ApiError::invalid_request(format!(
            "subject: no configured token has the subject {subject:?}"
        )));
    }
    let up_to = crate::ui::end_sessions_of(&state.store, subject).await?;
    tracing::info!(
        subject,
        by = who.name(),
        "every session of the subject ended"
    );
    Ok(Json(json!({"subject": subject, "ended_up_to": up_to})).into_response())
}
