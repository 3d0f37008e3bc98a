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
use std::time::{Duration, SystemTime, UNIX_EPOCH};

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

/// Resolves when the server starts shutting down.
pub(crate) async fn closed() {
    let mut rx = closing().subscribe();
    let _ = rx.wait_for(|c| *c).await;
}

/// What one look at the store gives a live page.
pub enum Tick<M> {
    /// Nothing to send; the mark to compare with next time.
    Same(Option<M>),
    /// Send this event; the new mark.
    Send(M, Event),
    /// What the page shows is gone (or no longer the viewer's): the
    /// stream ends, and the page's reconnection learns why.
    End,
}

/// What a stream holds while it is open: its session's slot (given back
/// when the stream is dropped), asked at every [`POLL`] whether the
/// session was ended meanwhile.
pub trait Hold: Send + Sync + 'static {
    /// Whether the stream must end now (its session was ended).
    fn ended(&self) -> impl Future<Output = bool> + Send;
}

impl Hold for super::session::StreamSlot {
    async fn ended(&self) -> bool {
        self.session_ended().await
    }
}

/// A stream of events: `next(last_mark)` is called every [`POLL`] and
/// tells what to send ([`Tick`]). The first call has no mark, so the page
/// gets its current state at once (after a reconnection too). The stream
/// ends at `until` (the session's expiry, in seconds since the epoch: an
/// open page does not outlive its session), when `next` says so, when
/// `hold` says its session was ended (a logout, an operator), or when the
/// server shuts down. `hold` is dropped with the stream.
pub fn stream<M, F, Fut, H>(until: u64, hold: H, next: F) -> Response
where
    M: PartialEq + Send + 'static,
    F: Fn(Option<M>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Tick<M>> + Send + 'static,
    H: Hold,
{
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if until <= now {
        let none = futures::stream::empty::<Result<Event, Infallible>>();
        return Sse::new(none).into_response();
    }
    let expired = tokio::time::sleep(Duration::from_secs(until - now));
    let end = futures::future::select(Box::pin(closed()), Box::pin(expired));
    let events = futures::stream::unfold(
        (next, hold, None::<M>, true),
        |(next, hold, mark, first)| async move {
            let mut mark = mark;
            let mut first = first;
            loop {
                if !first {
                    tokio::time::sleep(POLL).await;
                    if hold.ended().await {
                        return None;
                    }
                }
                first = false;
                match next(mark.take()).await {
                    Tick::Same(m) => mark = m,
                    Tick::Send(m, e) => {
                        return Some((Ok::<_, Infallible>(e), (next, hold, Some(m), false)));
                    }
                    Tick::End => return None,
                }
            }
        },
    )
    .take_until(end);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that nobody ends (no session to check).
    struct Open;
    impl Hold for Open {
        async fn ended(&self) -> bool {
            false
        }
    }

    fn now() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    /// The whole body, or `None` if it is still open after `wait`.
    async fn body(resp: Response, wait: Duration) -> Option<String> {
        let read = axum::body::to_bytes(resp.into_body(), usize::MAX);
        let bytes = tokio::time::timeout(wait, read).await.ok()?.unwrap();
        Some(String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn a_stream_ends_with_its_session() {
        let resp = stream(now().saturating_sub(1), Open, |_: Option<u32>| async {
            Tick::Send(1, html_event("x", "never sent".into()))
        });
        let text = body(resp, Duration::from_secs(5)).await;
        assert_eq!(text.as_deref(), Some(""), "an expired session gets nothing");
        // A session that ends while the page is open: the stream ends then.
        let resp = stream(now() + 1, Open, |mark: Option<u32>| async move {
            match mark {
                None => Tick::Send(1, html_event("x", "shown".into())),
                Some(_) => Tick::Same(mark),
            }
        });
        let text = body(resp, Duration::from_secs(5)).await;
        assert_eq!(text.as_deref(), Some("event: x\ndata: shown\n\n"));
    }

    #[tokio::test]
    async fn a_stream_sends_changes_only_and_ends_when_told() {
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let seen = calls.clone();
        let resp = stream(now() + 3600, Open, move |mark: Option<u32>| {
            let n = seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async move {
                match n {
                    0 => Tick::Send(7, html_event("x", "first\r".into())),
                    1 => {
                        assert_eq!(mark, Some(7), "the mark comes back");
                        Tick::Same(mark)
                    }
                    2 => Tick::Send(8, html_event("x", "second".into())),
                    _ => Tick::End,
                }
            }
        });
        let text = body(resp, Duration::from_secs(10)).await.expect("ended");
        assert_eq!(
            text,
            "event: x\ndata: first&#13;\n\nevent: x\ndata: second\n\n"
        );
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_stream_stays_open_while_nothing_changes() {
        let resp = stream(now() + 3600, Open, |mark: Option<u32>| async move {
            Tick::Same(mark)
        });
        assert_eq!(body(resp, Duration::from_millis(1500)).await, None);
    }
}
