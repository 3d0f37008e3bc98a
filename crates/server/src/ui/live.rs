//! Live pages: server-sent events drawn from the store.
//!
//! The store is the only place that knows every change (runs on threads
//! may be decided, resumed or retried by any server sharing it), so a live
//! page watches a cheap mark of what it shows (the waiting runs' ids and
//! times; a thread's runs and last change) every [`POLL`], and sends the
//! page's new content only when the mark moved. The streams end when the
//! server shuts down, so that they never hold a graceful shutdown open.

use std::convert::Infallible;
use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use tokio::sync::watch;

/// How often a live page's mark is read.
pub const POLL: Duration = Duration::from_millis(500);

fn closing() -> &'static watch::Sender<bool> {
    static CLOSING: OnceLock<watch::Sender<bool>> = OnceLock::new();
    CLOSING.get_or_init(|| watch::channel(false).0)
}

/// Ends every live page's stream (the server is shutting down).
pub fn close_streams() {
    closing().send_replace(true);
}

async fn closed() {
    let mut rx = closing().subscribe();
    let _ = rx.wait_for(|c| *c).await;
}

/// A stream of events: `next(last_mark)` is called every [`POLL`] and
/// gives the new mark and, when something must be sent, the event. The
/// first call has no mark, so the page gets its current state at once
/// (after a reconnection too).
pub fn stream<M, F, Fut>(next: F) -> Response
where
    M: PartialEq + Send + 'static,
    F: Fn(Option<M>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = (Option<M>, Option<Event>)> + Send + 'static,
{
    let events =
        futures::stream::unfold((next, None::<M>, true), |(next, mark, first)| async move {
            let mut mark = mark;
            let mut first = first;
            loop {
                if !first {
                    tokio::time::sleep(POLL).await;
                }
                first = false;
                let (new_mark, event) = next(mark.take()).await;
                mark = new_mark;
                if let Some(e) = event {
                    return Some((Ok::<_, Infallible>(e), (next, mark, false)));
                }
            }
        })
        .take_until(closed());
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// An event carrying HTML (a carriage return cannot cross SSE: it is sent
/// as its character reference, which HTML reads back the same).
pub fn html_event(name: &str, html: String) -> Event {
    Event::default()
        .event(name)
        .data(html.replace('\r', "&#13;"))
}
