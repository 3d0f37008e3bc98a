//! Why the server could not start.

use parlance_store::StoreError;

use parlance_assemble::BuildError;

/// The server could not start: each names what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The store could not be opened, migrated or read.
    #[error("store {url}: {source}")]
    Store {
        /// The store's URL.
        url: String,
        /// Why.
        #[source]
        source: StoreError,
    },
    /// An agent of the configuration could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// `auth = "none"` and tokens: only one can hold.
    #[error("auth = \"none\" but tokens are configured: choose one")]
    AuthConflict,
    /// No tokens on an address other machines can reach.
    #[error(
        "refusing to listen on {listen} without API tokens: configure [[auth.tokens]] (or PARLANCE_API_TOKENS), listen on 127.0.0.1, or set auth = \"none\" to allow an open API"
    )]
    OpenApi {
        /// The address.
        listen: String,
    },
    /// The address could not be listened on (taken, not this machine's...).
    #[error("listen {listen}: {source}")]
    Listen {
        /// The address.
        listen: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("serving: {0}")]
    Serve(#[source] std::io::Error),
    /// `executor = "temporal"`: Temporal could not be reached, or the
    /// worker could not start.
    #[error("executor = \"temporal\": {0}")]
    Temporal(#[from] parlance_temporal::TemporalError),
}
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;

use crate::config::Config;
use crate::routes::router;
use crate::state::AppState;
use crate::{admission, metrics, ui};

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
    // The HTTP clients are built once the server listens (on one CPU
    // their build would delay it); a dead run carried on before that
    // builds its own.
    let client_builds = parlance_providers::transport::hold_builds();
    let state = Arc::new(AppState::new(config).await?);
    tracing::info!(
        connections = state.limits.connections,
        runs = state.limits.runs,
        "admitting at most this many connections and runs at once"
    );
    // The runs this server's previous incarnation left: carried on at
    // once (before anything of this start is claimed under its identity).
    // On Temporal, its workers carry dead runs on (their activities are
    // retried): this server's resumer stays out of their way.
    let resumer = match &state.temporal {
        None => {
            match state.resumer.resume_dead(true).await {
                Ok(done) => report_resumed(&done),
                Err(e) => tracing::warn!(error = %e, "looking for this server's dead runs failed"),
            }
            Some(state.resumer.clone().spawn(report_resumed))
        }
        Some(_) => None,
    };
    let worker = state.start_worker()?;
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
    drop(client_builds);
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
    if let Some(r) = resumer {
        r.abort();
    }
    if let Some(w) = worker {
        // Its tasks in hand may finish for a while (a run's step commits);
        // past that, Temporal gives what is left to another worker.
        let stopped = tokio::task::spawn_blocking(move || w.stop());
        let _ = tokio::time::timeout(Duration::from_secs(5), stopped).await;
    }
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
