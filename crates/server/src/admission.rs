//! Back-pressure: the server admits only the connections and runs its
//! file descriptors can carry, so that running out of them never looks
//! like a tool's or a model's failure.
//!
//! Every client connection, model request, HTTP tool call and store
//! connection holds a descriptor. From the open-file limit (raised to the
//! hard limit at start), with a reserve for the store, the listener, logs
//! and MCP servers:
//!
//! - **connections**: half of it (`max_connections`). Beyond, the listener
//!   stops accepting: new clients wait in the kernel's queue, nothing is
//!   refused;
//! - **runs**: a quarter of it (`max_runs`): requests that run an agent
//!   (`POST /v1/runs`, decisions, retries), each needing a model
//!   connection and tools'. Beyond, a request waits for a turn up to
//!   `run_queue_ms` (at most `max_runs` wait at once), then gets `503
//!   overloaded` with `Retry-After`. A streamed run keeps its turn until its
//!   stream ends.
//!
//! HTTP tools are capped per host (`max_connections_per_host`) within the
//! last quarter. Should the process still run out, an HTTP tool's call
//! that could not get a descriptor is retried, then ends the run as the
//! server's failure (`server_resources`), never handed to the model as the
//! tool's (`http_tool`).

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::Config;
use crate::error::ApiError;

/// Requests to run an agent refused with `503 overloaded` (the counter's
/// name; `/metrics` shows it).
pub const RUNS_REFUSED: &str = "parlance_runs_refused_total";

/// Descriptors kept apart from connections and runs.
const RESERVE: u64 = 64;
/// How long a request beyond `max_runs` waits for a turn, by default.
pub const DEFAULT_QUEUE: Duration = Duration::from_secs(10);

/// The open-file limit of the process (its soft limit), if it can be read.
#[allow(clippy::unnecessary_cast)] // rlim_t is u64 on Linux, not everywhere
pub fn open_files() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes the struct given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
            return Some(lim.rlim_cur as u64);
        }
    }
    None
}

/// What the server admits at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Client connections.
    pub connections: usize,
    /// Requests that run an agent.
    pub runs: usize,
}

impl Limits {
    /// From the open-file limit (see the module's doc), unless the
    /// configuration sets them.
    pub fn new(config: &Config, open_files: Option<u64>) -> Limits {
        let usable = open_files.unwrap_or(4096).saturating_sub(RESERVE);
        let clamp = |n: u64, least: usize| usize::try_from(n).unwrap_or(usize::MAX).max(least);
        Limits {
            connections: config
                .max_connections
                .unwrap_or_else(|| clamp(usable / 2, 16))
                .max(1),
            runs: config
                .max_runs
                .unwrap_or_else(|| clamp(usable / 4, 4))
                .max(1),
        }
    }
}

/// Turns for requests that run an agent.
#[derive(Debug)]
pub struct Admission {
    turns: Arc<Semaphore>,
    /// Requests waiting for a turn now.
    waiting: AtomicUsize,
    max_waiting: usize,
    queue: Duration,
}

impl Admission {
    /// `runs` turns; a request waits `queue` at most.
    pub fn new(runs: usize, queue: Duration) -> Admission {
        Admission {
            turns: Arc::new(Semaphore::new(runs)),
            waiting: AtomicUsize::new(0),
            max_waiting: runs,
            queue,
        }
    }

    /// A turn, or the `503` to answer.
    async fn turn(&self) -> Result<OwnedSemaphorePermit, Response> {
        if let Ok(p) = Arc::clone(&self.turns).try_acquire_owned() {
            return Ok(p);
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(overloaded("its queue is full"));
        }
        let got = tokio::time::timeout(self.queue, Arc::clone(&self.turns).acquire_owned()).await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        match got {
            Ok(Ok(p)) => Ok(p),
            _ => Err(overloaded("no turn came free in time")),
        }
    }
}

/// `503 overloaded`, with `Retry-After`.
fn overloaded(why: &str) -> Response {
    metrics::counter!(RUNS_REFUSED).increment(1);
    let mut r = ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "overloaded",
        format!(
            "the server is running as many runs as it can carry and {why}: try again in a second (Retry-After)"
        ),
    )
    .into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// The middleware of the routes that run an agent: a turn for the
/// request, kept until its answer is sent (a stream's, until it ends).
pub async fn admit(State(admission): State<Arc<Admission>>, req: Request, next: Next) -> Response {
    let turn = match admission.turn().await {
        Ok(t) => t,
        Err(refused) => return refused,
    };
    let resp = next.run(req).await;
    let streamed = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !streamed {
        return resp;
    }
    let (parts, body) = resp.into_parts();
    let body = body.into_data_stream().map(move |chunk| {
        let _turn = &turn;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(body))
}

/// A listener that holds at most `max` connections open: beyond, it stops
/// accepting until one closes (clients wait in the kernel's queue).
pub struct Limited {
    inner: TcpListener,
    open: Arc<Semaphore>,
}

impl Limited {
    /// `inner`, at most `max` connections at once.
    pub fn new(inner: TcpListener, max: usize) -> Limited {
        Limited {
            inner,
            open: Arc::new(Semaphore::new(max)),
        }
    }
}

impl axum::serve::Listener for Limited {
    type Io = Held;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Held, SocketAddr) {
        let turn = Arc::clone(&self.open)
            .acquire_owned()
            .await
            .expect("never closed");
        loop {
            match self.inner.accept().await {
                Ok((io, addr)) => {
                    return (Held { io, _turn: turn }, addr);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionAborted
                            | std::io::ErrorKind::ConnectionReset
                            | std::io::ErrorKind::ConnectionRefused
                    ) => {}
                Err(e) => {
                    // Out of descriptors (or another passing failure): the
                    // clients wait in the kernel's queue meanwhile.
                    tracing::error!(error = %e, "accepting a connection failed; trying again in 100 ms");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// A connection and its place among the open ones.
pub struct Held {
    io: TcpStream,
    _turn: OwnedSemaphorePermit,
}

impl AsyncRead for Held {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl AsyncWrite for Held {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_follow_the_open_file_limit_unless_set() {
        let c = Config::default();
        assert_eq!(
            Limits::new(&c, Some(1024)),
            Limits {
                connections: 480,
                runs: 240
            }
        );
        assert_eq!(
            Limits::new(&c, Some(10)),
            Limits {
                connections: 16,
                runs: 4
            }
        );
        let set = Config {
            max_connections: Some(100),
            max_runs: Some(0),
            ..Config::default()
        };
        assert_eq!(
            Limits::new(&set, Some(1024)),
            Limits {
                connections: 100,
                runs: 1
            }
        );
    }

    #[tokio::test]
    async fn beyond_its_turns_a_request_waits_then_is_refused_with_retry_after() {
        let a = Admission::new(1, Duration::from_millis(50));
        let first = a.turn().await.unwrap();
        // One may wait; it gets the turn when it comes free in time.
        let (waited, _) = tokio::join!(a.turn(), async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            drop(first);
        });
        let held = waited.unwrap();
        // Not in time: 503 with Retry-After.
        let refused = a.turn().await.unwrap_err();
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()[header::RETRY_AFTER], "1");
        // A full queue refuses at once.
        let (r1, r2) = tokio::join!(a.turn(), async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let start = std::time::Instant::now();
            let r = a.turn().await;
            (r, start.elapsed())
        });
        assert!(r1.is_err());
        let (r2, took) = r2;
        assert!(r2.is_err() && took < Duration::from_millis(40), "{took:?}");
        drop(held);
        assert!(a.turn().await.is_ok());
    }
}
