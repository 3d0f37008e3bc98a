//! Parlance's HTTP API (axum).
//!
//! | method and path | what |
//! |---|---|
//! | `POST /v1/runs` | run an agent: stateless (`turns[]`) or on a thread (`thread_id`, detached from the connection); `stream: true` answers with SSE |
//! | `GET /v1/runs/{id}` | a run on a thread as stored: status, messages, output, usage, pending calls, error |
//! | `POST /v1/runs/{id}/decisions` | decide pending calls; the run resumes (on any server sharing the store) |
//! | `POST /v1/threads`, `GET /v1/threads` | create, list (the caller's own, paged) |
//! | `GET /v1/threads/{id}`, `DELETE /v1/threads/{id}` | read (messages, runs; artifacts for operators), delete |
//! | `POST /v1/threads/{id}/retry` | retry the thread's failed last run |
//! | `POST /v1/chat/completions` | OpenAI's Chat Completions, `model` = a configured agent ([`protocols`]) |
//! | `POST /v1/sessions/end` | operators: end every inbox session of a subject ([`sessions`]) |
//! | `GET /openapi.json` | the OpenAPI 3.1 document (also checked in as `schema/openapi.json`) |
//! | `GET /healthz` | liveness |
//! | `GET /metrics` | Prometheus metrics (operators; see `metrics.rs`) |
//! | `/ui` | the approval inbox: web pages for the people who decide ([`ui`]) |
//!
//! Errors are `{"error": {"code", "message"}}`; invalid requests name the
//! JSON path. Browsers' requests are checked first ([`guard`]: the `Host`
//! names served, no cross-site request that changes something). Bearer tokens come from the configuration or the environment;
//! a token sees only its own threads.

pub mod admission;
pub mod api;
pub mod auth;
pub mod body;
pub mod build;
/// The application configuration (the `parlance-config` crate).
pub use parlance_config as config;
pub mod error;
pub mod guard;
pub mod http_tool;
pub mod identity;
pub mod metrics;
mod openapi;
pub mod protocols;
pub mod runs;
pub mod secrets;
pub mod sessions;
pub mod signing;
mod start;
pub mod state;
pub mod streams;
pub mod threads;
pub mod ui;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::serve::ListenerExt;

pub use auth::Principal;
pub use config::Config;
pub use error::ApiError;
pub use openapi::openapi;
pub use start::StartError;
pub use state::AppState;

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

/// Refuses an open API on an address other machines can reach: without
/// tokens, only loopback, unless `auth = "none"` says so.
pub fn check_exposure(config: &Config, listen: &str) -> Result<(), StartError> {
    let auth = &config.auth;
    if auth.none && !auth.tokens.is_empty() {
        return Err(StartError::AuthConflict);
    }
    if !auth.tokens.is_empty() {
        return Ok(());
    }
    let loopback = listen
        .parse::<SocketAddr>()
        .map(|a| a.ip().is_loopback())
        .unwrap_or_else(|_| listen.starts_with("localhost:"));
    if loopback {
        return Ok(());
    }
    if auth.none {
        tracing::warn!(
            listen,
            "auth = \"none\": the API is open to anyone who can reach {listen}"
        );
        return Ok(());
    }
    Err(StartError::OpenApi {
        listen: listen.to_string(),
    })
}

/// Serves until SIGINT or SIGTERM; requests in flight finish first (a run
/// waiting for approval is already stored, so nothing is lost).
pub async fn serve(config: Config) -> Result<(), StartError> {
    let listen = config
        .listen
        .clone()
        .unwrap_or_else(|| "127.0.0.1:8080".into());
    check_exposure(&config, &listen)?;
    raise_fd_limit();
    // Recording starts now, so that /metrics counts every run.
    metrics::handle();
    let state = Arc::new(AppState::new(config).await?);
    tracing::info!(
        connections = state.limits.connections,
        runs = state.limits.runs,
        "admitting at most this many connections and runs at once"
    );
    // The runs this server's previous incarnation left: carried on at
    // once (before anything of this start is claimed under its identity).
    match state.resumer.resume_dead(true).await {
        Ok(done) => report_resumed(&done),
        Err(e) => tracing::warn!(error = %e, "looking for this server's dead runs failed"),
    }
    let resumer = state.resumer.clone().spawn(report_resumed);
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .map_err(|source| StartError::Listen {
            listen: listen.clone(),
            source,
        })?;
    let addr = listener.local_addr().map_err(StartError::Serve)?;
    let sweeper = tokio::spawn(sweep_forever(state.store.clone()));
    // Scripts and tests read this line to find the port.
    println!("parlance: listening on http://{addr}");
    // The peer's address: login attempts are limited per address.
    let app = router(Arc::clone(&state)).into_make_service_with_connect_info::<SocketAddr>();
    // At most so many connections open: the rest wait to be accepted.
    let listener = admission::Limited::new(listener, state.limits.connections).tap_io(|_| {});
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async {
            shutdown().await;
            // Live pages' streams would hold the shutdown open.
            ui::close_streams();
        })
        .await
        .map_err(StartError::Serve);
    sweeper.abort();
    resumer.abort();
    state.shutdown().await;
    served
}

/// Raises the soft limit on open files to the hard limit: every run on
/// a thread, HTTP tool call and client holds descriptors, and running out
/// must not look like success. Logged either way.
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not everywhere
pub fn raise_fd_limit() -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit only read and write the struct given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
            tracing::warn!("could not read the open-file limit");
            return None;
        }
        let before = lim.rlim_cur;
        if lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            // SAFETY: as above.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) } != 0 {
                tracing::warn!(
                    soft = before,
                    hard = lim.rlim_max,
                    "could not raise the open-file limit"
                );
                lim.rlim_cur = before;
            }
        }
        let (soft, hard) = (lim.rlim_cur as u64, lim.rlim_max as u64);
        if soft < 4096 {
            tracing::warn!(
                soft,
                hard,
                "the open-file limit is low: many runs at once may fail (raise the hard limit)"
            );
        } else {
            tracing::info!(before = before as u64, soft, hard, "open-file limit");
        }
        Some((before as u64, soft))
    }
    #[cfg(not(unix))]
    None
}

/// Logs and counts what a pass of the resumer did.
fn report_resumed(done: &[parlance_runtime::Resumed]) {
    parlance_runtime::log_resumed(done);
    let carried = done.iter().filter(|r| r.outcome.is_ok()).count();
    ::metrics::counter!(metrics::RUNS_RESUMED).increment(carried as u64);
}

/// Marks runs whose process died as interrupted, once per lease, so that
/// no thread stays blocked by one even if nobody touches it.
async fn sweep_forever(store: parlance_store::Store) {
    loop {
        tokio::time::sleep(store.lease().max(Duration::from_secs(1))).await;
        match store.sweep_expired().await {
            Ok(ids) if !ids.is_empty() => {
                tracing::warn!(
                    count = ids.len(),
                    "runs whose process died were marked interrupted"
                )
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "sweeping dead runs failed"),
        }
    }
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
