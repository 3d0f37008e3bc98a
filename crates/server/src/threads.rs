//! Thread handlers: create, list, read, delete.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response as HttpResponse};
use serde_json::json;

use crate::api::{AppState, ListQuery, NewThread, body, outbound, owned_thread};
use crate::auth::principal;
use crate::error::{ApiError, bad};

/// `POST /v1/threads`.
pub async fn create_thread(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    let req: NewThread = match &bytes {
        Ok(b) if b.is_empty() => NewThread::default(),
        _ => body(bytes)?,
    };
    let t = state
        .store
        .create_thread(who.subject.as_deref(), req.metadata.unwrap_or(json!({})))
        .await?;
    Ok((StatusCode::CREATED, Json(t)).into_response())
}

/// `GET /v1/threads`: the caller's threads, paged.
pub async fn list_threads(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    let Query(q) = q.map_err(|e| bad(format!("(query): {}", e.body_text())))?;
    let owner = if who.operator {
        None
    } else {
        who.subject.as_deref()
    };
    let page = state
        .store
        .list_threads(owner, q.after.as_deref(), q.limit.unwrap_or(50))
        .await?;
    Ok(Json(page).into_response())
}

/// `GET /v1/threads/{id}`: messages and runs (dead runs already marked
/// `interrupted`); artifacts for operators.
pub async fn get_thread(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    let t = owned_thread(&state, &who, &id).await?;
    // Runs first: reading them sweeps dead runs, which may repair messages.
    let runs = state.store.runs(&id).await?;
    let messages = state.store.messages(&id, 0, 100_000).await?;
    let mut out = json!({"thread": t, "messages": messages, "runs": runs});
    if who.operator {
        out["artifacts"] = serde_json::to_value(state.store.artifacts(&id).await?).expect("json");
    }
    Ok(Json(outbound(&state, &who, out)).into_response())
}

/// `DELETE /v1/threads/{id}`.
pub async fn delete_thread(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    owned_thread(&state, &who, &id).await?;
    state.store.delete_thread(&id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
