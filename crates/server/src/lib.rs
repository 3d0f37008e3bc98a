//! Parlance's HTTP API (axum).
//!
//! | method and path | what |
//! |---|---|
//! | `POST /v1/runs` | run an agent: stateless (`turns[]`) or on a thread (`thread_id`); `stream: true` answers with SSE |
//! | `POST /v1/runs/{id}/decisions` | decide pending calls; the run resumes (on any server sharing the store) |
//! | `POST /v1/threads`, `GET /v1/threads` | create, list (the caller's own, paged) |
//! | `GET /v1/threads/{id}`, `DELETE /v1/threads/{id}` | read (messages, runs; artifacts for operators), delete |
//! | `GET /openapi.json` | the OpenAPI 3.1 document (also checked in as `schema/openapi.json`) |
//! | `GET /healthz` | liveness |
//!
//! Errors are `{"error": {"code", "message"}}`; invalid requests name the
//! JSON path. Bearer tokens come from the configuration or the environment;
//! a token sees only its own threads.

pub mod api;
pub mod build;
pub mod config;
mod openapi;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub use api::AppState;
pub use config::Config;
pub use openapi::openapi;

/// The default largest request body: 2 MiB.
pub const DEFAULT_MAX_BODY: usize = 2 * 1024 * 1024;

/// Builds the shared state: the store opened (and migrated), every agent
/// of the configuration built (a bad one is an error naming it).
pub async fn state(config: Config) -> Result<Arc<AppState>, String> {
    let url = config
        .store
        .url
        .clone()
        .unwrap_or_else(|| "sqlite://./parlance.db".into());
    let store = parlance_store::Store::open(&url)
        .await
        .map_err(|e| format!("store: {e}"))?;
    parlance_providers::transport::install_crypto();
    let http = reqwest::Client::new();
    let mut agents = HashMap::new();
    for (name, a) in &config.agents {
        let agent = build::agent(&config, Some(name), a, &http)
            .map_err(|e| format!("agents.{name}.{e}"))?;
        agents.insert(name.clone(), agent);
    }
    let tokens = config
        .auth
        .tokens
        .iter()
        .map(|t| {
            (
                t.token.clone(),
                api::Principal {
                    subject: Some(t.subject.clone()),
                    operator: t.operator,
                },
            )
        })
        .collect();
    Ok(Arc::new(AppState {
        config,
        store,
        agents,
        tokens,
        http,
    }))
}

/// The routes.
pub fn router(state: Arc<AppState>) -> Router {
    let limit = state.config.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY);
    Router::new()
        .route("/v1/runs", post(api::create_run))
        .route("/v1/runs/{id}/decisions", post(api::decide))
        .route(
            "/v1/threads",
            post(api::create_thread).get(api::list_threads),
        )
        .route(
            "/v1/threads/{id}",
            get(api::get_thread).delete(api::delete_thread),
        )
        .route("/openapi.json", get(|| async { axum::Json(openapi()) }))
        .route("/healthz", get(|| async { "ok" }))
        .fallback(api::fallback)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

/// Serves until SIGINT or SIGTERM; requests in flight finish first (a run
/// waiting for approval is already stored, so nothing is lost).
pub async fn serve(config: Config) -> Result<(), String> {
    let listen = config
        .listen
        .clone()
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    let state = state(config).await?;
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .map_err(|e| format!("listen {listen}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    // Scripts and tests read this line to find the port.
    println!("parlance: listening on http://{addr}");
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown())
        .await
        .map_err(|e| e.to_string())
}

async fn shutdown() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("signal handler");
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutting down: finishing requests in flight");
}
