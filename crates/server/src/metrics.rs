//! `GET /metrics`: the Prometheus text format, for operators.
//!
//! The agent records its metrics (runs, model calls, tokens, tool calls,
//! store writes: `parlance_agent::telemetry`) into one process-wide
//! recorder, installed here once; pending approvals are counted in the
//! store at each scrape (they outlive any one process), and that read's
//! latency is recorded too.
//!
//! With tokens configured, only operator tokens may read it: the counters
//! cover every tenant.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;

/// Runs waiting for decisions, in the store, at the last scrape.
pub const PENDING_APPROVALS: &str = "parlance_pending_approvals";
/// How long the store's reads for `/metrics` took, in seconds.
pub const STORE_READ_SECONDS: &str = "parlance_store_read_duration_seconds";
/// Requests to run an agent refused with `503 overloaded` (counted where
/// they are refused).
pub use crate::admission::RUNS_REFUSED;
/// Runs of dead servers this server carried on.
pub const RUNS_RESUMED: &str = "parlance_runs_resumed_total";

/// Bucket bounds in seconds: from a fast store write (1 ms) to a long
/// run (5 min).
const BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The process's recorder, installed by the first call (one per process:
/// the `metrics` facade has one global recorder).
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS)
            .expect("non-empty buckets")
            .build_recorder();
        let handle = recorder.handle();
        // Another recorder may be installed by the program embedding the
        // server: its own exporter then sees the metrics, and this page
        // only what is described here.
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("a metrics recorder was already installed: /metrics shows only its own");
        }
        describe();
        parlance_agent::telemetry::enable_metrics();
        handle
    })
}

fn describe() {
    use metrics::Unit;
    use parlance_agent::telemetry as t;
    metrics::describe_counter!(
        t::RUNS,
        "Runs finished, by status (a resume or retry counts as a run)."
    );
    metrics::describe_histogram!(
        t::RUN_SECONDS,
        Unit::Seconds,
        "How long runs took, by status."
    );
    metrics::describe_gauge!(t::RUNS_IN_FLIGHT, "Runs in progress in this process.");
    metrics::describe_counter!(
        t::MODEL_CALLS,
        "Model calls, by provider, model and outcome."
    );
    metrics::describe_histogram!(
        t::MODEL_SECONDS,
        Unit::Seconds,
        "How long model calls took, by provider, model and outcome."
    );
    metrics::describe_counter!(
        t::TOKENS,
        "Tokens, by provider, model and type (input, output)."
    );
    metrics::describe_counter!(
        t::COST,
        "What model calls cost, in nano-dollars (1e-9 USD), by provider and model (priced models only)."
    );
    metrics::describe_counter!(t::TOOL_CALLS, "Tool calls, by tool and status.");
    metrics::describe_histogram!(
        t::TOOL_SECONDS,
        Unit::Seconds,
        "How long tool calls took, by tool and status."
    );
    metrics::describe_histogram!(
        t::STORE_SECONDS,
        Unit::Seconds,
        "How long storing a run's step took, by outcome."
    );
    metrics::describe_gauge!(
        PENDING_APPROVALS,
        "Runs waiting for decisions, in the store."
    );
    metrics::describe_histogram!(
        STORE_READ_SECONDS,
        Unit::Seconds,
        "How long the store's reads for /metrics took."
    );
    metrics::describe_counter!(
        RUNS_REFUSED,
        "Requests to run an agent refused with 503 overloaded (beyond max_runs and its queue)."
    );
    metrics::describe_counter!(
        RUNS_RESUMED,
        "Runs whose server died that this server took over and carried on."
    );
    // Present from the start, so that a dashboard sees 0 rather than nothing.
    metrics::gauge!(t::RUNS_IN_FLIGHT).set(0.0);
    metrics::counter!(RUNS_REFUSED).absolute(0);
    metrics::counter!(RUNS_RESUMED).absolute(0);
}

/// `GET /metrics`.
pub async fn metrics(
    State(state): State<Arc<AppState>>,
    caller: Principal,
) -> Result<Response, ApiError> {
    if !state.config.auth.tokens.is_empty() && !caller.operator {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "/metrics is for operator tokens",
        ));
    }
    let handle = handle();
    let started = Instant::now();
    let waiting = state.store.waiting_marker().await;
    metrics::histogram!(STORE_READ_SECONDS).record(started.elapsed().as_secs_f64());
    match waiting {
        Ok(w) => metrics::gauge!(PENDING_APPROVALS).set(w.len() as f64),
        Err(e) => tracing::warn!(error = %e, "/metrics: pending approvals could not be counted"),
    }
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle.render(),
    )
        .into_response())
}
