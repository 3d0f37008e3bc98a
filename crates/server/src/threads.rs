//! Thread handlers: create, list, read, delete.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response as HttpResponse};
use serde_json::json;

use crate::api::{DeleteQuery, ListQuery, NewThread, outbound, owned_thread};
use crate::auth::Principal;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;

/// `POST /v1/threads`.
pub async fn create_thread(
    State(state): State<Arc<AppState>>,
    who: Principal,
    req: Option<JsonBody<NewThread>>,
) -> Result<HttpResponse, ApiError> {
    let req = req.map(|JsonBody(r)| r).unwrap_or_default();
    let t = state
        .store
        .create_thread(who.subject.as_deref(), req.metadata.unwrap_or(json!({})))
        .await?;
    Ok((StatusCode::CREATED, Json(t)).into_response())
}

/// `GET /v1/threads`: the caller's threads, paged.
pub async fn list_threads(
    State(state): State<Arc<AppState>>,
    who: Principal,
    q: Result<Query<ListQuery>, QueryRejection>,
) -> Result<HttpResponse, ApiError> {
    let Query(q) =
        q.map_err(|e| ApiError::invalid_request(format!("(query): {}", e.body_text())))?;
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

/// What a thread's (or a run's) model calls spent, summed over its stored
/// messages.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Totals {
    /// Input plus output tokens.
    pub tokens: u64,
    /// US dollars; `null` when a model call has no price (the price table
    /// does not know its model): never a sum that leaves a call out.
    pub cost: Option<f64>,
    /// Model calls (answers, and summaries written by a model).
    pub model_calls: u64,
    /// Tool calls the model asked for.
    pub tool_calls: u64,
}

impl Totals {
    /// The totals of `messages`.
    pub fn of<'a>(messages: impl Iterator<Item = &'a parlance_format::Message> + Clone) -> Totals {
        let spent = parlance_format::Spend::of_all(messages.clone());
        Totals {
            tokens: spent.tokens,
            cost: parlance_format::total_cost(messages),
            model_calls: spent.model_calls,
            tool_calls: spent.tool_calls,
        }
    }
}

/// `GET /v1/threads/{id}`: messages and runs (dead runs already marked
/// `interrupted`); artifacts for operators.
pub async fn get_thread(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<HttpResponse, ApiError> {
    let t = owned_thread(&state, &who, &id).await?;
    // Runs first: reading them sweeps dead runs, which may repair messages.
    let runs = state.store.runs(&id).await?;
    let messages = state.store.all_messages(&id).await?;
    let totals = Totals::of(messages.iter().map(|m| &m.message));
    let mut out = json!({"thread": t, "messages": messages, "runs": runs, "totals": totals});
    if who.operator {
        out["artifacts"] = serde_json::to_value(state.store.artifacts(&id).await?).expect("json");
    }
    Ok(Json(outbound(&state, &who, out)).into_response())
}

/// `DELETE /v1/threads/{id}`; `?force=true` (operators): even while a
/// run waits for decisions on it (a damaged run no one can decide).
pub async fn delete_thread(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(id): Path<String>,
    q: Result<Query<DeleteQuery>, QueryRejection>,
) -> Result<HttpResponse, ApiError> {
    let Query(q) =
        q.map_err(|e| ApiError::invalid_request(format!("(query): {}", e.body_text())))?;
    owned_thread(&state, &who, &id).await?;
    if q.force && !who.operator {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "force: only operators may delete a thread a run waits on",
        ));
    }
    if q.force {
        tracing::warn!(thread = %id, by = ?who.subject, "thread deleted with force");
        state.store.delete_thread_waiting(&id).await?;
    } else {
        state.store.delete_thread(&id).await?;
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}
