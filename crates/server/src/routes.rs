//! The routes: every endpoint of the API, the protocols, the inbox, and
//! the layers around them (the browser guard, body limits, admission for
//! what runs an agent, the caller of MCP requests).

use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

use crate::state::AppState;
use crate::{
    admission, error, guard, metrics, openapi, protocols, runs, sessions, streams, threads, ui,
};

/// The default largest request body: 2 MiB.
pub const DEFAULT_MAX_BODY: usize = 2 * 1024 * 1024;

/// The routes.
pub fn router(state: Arc<AppState>) -> Router {
    let limit = state.config.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY);
    let guard = Arc::new(guard::Guard::new(
        &state.config.allowed_hosts,
        &state.config.allowed_origins,
    ));
    // What runs an agent waits for a turn (`admission`).
    let running = Router::new()
        .route("/v1/runs", post(runs::create_run))
        .route("/v1/runs/{id}/decisions", post(runs::decide))
        .route("/v1/threads/{id}/retry", post(runs::retry))
        .route(
            "/v1/chat/completions",
            post(protocols::openai_chat::chat_completions),
        )
        .route(
            "/v1/responses",
            post(protocols::openai_responses::responses),
        )
        .route("/v1/agents/{agent}/chat", post(protocols::ai_sdk::chat))
        .route("/v1/agents/{agent}/ag-ui", post(protocols::ag_ui::run))
        .route("/a2a/{agent}", post(protocols::a2a::rpc))
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state.admission),
            admission::admit,
        ));
    // MCP over streamable HTTP, its caller from the same bearer tokens.
    let mcp = Router::new()
        .route_service("/mcp", protocols::mcp::http_service(Arc::clone(&state)))
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            protocols::mcp::with_caller,
        ));
    Router::new()
        .merge(running)
        .merge(mcp)
        .route("/v1/runs/{id}", get(runs::get_run))
        .route("/v1/runs/{id}/events", get(streams::run_events))
        .route(
            "/v1/agents/{agent}/ag-ui/connect",
            post(protocols::ag_ui::connect),
        )
        .route(
            "/v1/responses/{id}",
            get(protocols::openai_responses::retrieve),
        )
        .route(
            "/a2a/{agent}/.well-known/agent-card.json",
            get(protocols::a2a::card),
        )
        .route(
            "/v1/agents/{agent}/chat/{id}/stream",
            get(protocols::ai_sdk::reconnect),
        )
        .route(
            "/v1/threads/{id}/ui-messages",
            get(protocols::ai_sdk::thread_messages),
        )
        .route(
            "/v1/threads",
            post(threads::create_thread).get(threads::list_threads),
        )
        .route(
            "/v1/threads/{id}",
            get(threads::get_thread).delete(threads::delete_thread),
        )
        .route("/v1/sessions/end", post(sessions::end_sessions))
        .route("/openapi.json", get(|| async { axum::Json(openapi()) }))
        .route("/healthz", get(|| async { "ok" }))
        .route("/metrics", get(metrics::metrics))
        .merge(ui::routes(&state))
        .fallback(error::fallback)
        .method_not_allowed_fallback(error::method_not_allowed)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(guard, guard::check))
        .with_state(state)
}
