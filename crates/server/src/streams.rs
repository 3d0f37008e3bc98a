//! Streams that survive reconnects: every event of a run on a thread
//! carries an id, and a client that lost its stream asks for what came
//! after the last id it saw (`Last-Event-ID`, or `GET
//! /v1/runs/{id}/events?after=ID`), from this server or any other of the
//! store.
//!
//! Ids: a `message` event's id is its run's log position (`P`, see
//! `parlance_store::LoggedMessage`: one per committed write, the same in
//! every process); the events between two messages (text, reasoning,
//! tool calls starting and ending) are `P.k`, the k-th after message `P`.
//!
//! Where the missed events come from:
//!
//! - **This server streams it** ([`LiveRuns`]): the events of this part of
//!   the run are kept in memory while it runs, so a reconnect resumes
//!   exactly after its id, deltas included, and follows on live.
//! - **Anywhere else** (another server, an earlier part of the run, a
//!   run that ended or waits): its messages past `P` come from the store, each
//!   whole (a message whose deltas were half sent arrives complete), then
//!   the store is read every [`POLL`] until the run stops; the run's
//!   status, its pending calls and its outcome end the stream. Polling
//!   rather than PostgreSQL's `LISTEN/NOTIFY`: the same on SQLite and
//!   PostgreSQL, no connection held per listener, and a follower learns
//!   nothing a committed step did not store anyway.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures::{Stream, StreamExt};
use parlance_agent::RunEvent;
use parlance_format::{Block, RunStatus};
use parlance_runtime::{ResumeError, RunHandle};
use parlance_store::{LoggedMessage, RunRecord};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::api::{outbound, owned_thread};
use crate::auth::Principal;
use crate::error::ApiError;
use crate::runs::event_data;
use crate::state::AppState;

/// How often a run that runs elsewhere is read from the store.
pub const POLL: Duration = Duration::from_millis(250);

/// An event's id: the log position of the last message at or before it,
/// and how many events after that message it is (0: the message itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct EventId {
    /// The run's log position.
    pub position: u64,
    /// Events since that message.
    pub after: u64,
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.after {
            0 => write!(f, "{}", self.position),
            k => write!(f, "{}.{k}", self.position),
        }
    }
}

impl FromStr for EventId {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad =
            || format!("{s:?} is not an event id (a number, or two joined by a dot: 12 or 12.3)");
        let (position, after) = s.split_once('.').unwrap_or((s, "0"));
        Ok(EventId {
            position: position.trim().parse().map_err(|_| bad())?,
            after: after.trim().parse().map_err(|_| bad())?,
        })
    }
}

/// A streamed run's events of this part of it, as this server sent them.
pub struct LiveRun {
    /// The run.
    pub run_id: String,
    /// Its thread.
    pub thread_id: String,
    /// The log position when this part began (its events come after).
    pub start: u64,
    events: Mutex<Vec<(EventId, RunEvent)>>,
    /// How many events there are; `true` beside it once the run ended.
    count: watch::Sender<(usize, bool)>,
    /// Why the run never started, when it ended without an event (its
    /// decisions refused: it still waits).
    refused: Mutex<Option<ResumeError>>,
}

impl LiveRun {
    /// The events from index `from` on, and whether the run ended.
    fn since(&self, from: usize) -> (Vec<(EventId, RunEvent)>, bool) {
        let ended = self.count.borrow().1;
        let events = self.events.lock().expect("not poisoned");
        (events.get(from..).unwrap_or_default().to_vec(), ended)
    }

    /// Waits for the run's first event: `Err` with the reason when it
    /// ended without one (refused decisions, a store that failed).
    pub async fn started(&self) -> Result<(), ResumeError> {
        let mut rx = self.count.subscribe();
        let _ = rx.wait_for(|(n, ended)| *n > 0 || *ended).await;
        match self.refused.lock().expect("not poisoned").take() {
            Some(e) if self.count.borrow().0 == 0 => Err(e),
            _ => Ok(()),
        }
    }

    /// The index of the first event past `after`.
    fn index_after(&self, after: EventId) -> usize {
        let events = self.events.lock().expect("not poisoned");
        events.partition_point(|(id, _)| *id <= after)
    }

    /// Its events from index `from` on (0: all of them), then live until
    /// the run ends.
    pub fn follow(self: Arc<Self>, from: usize) -> impl Stream<Item = (EventId, RunEvent)> + Send {
        let rx = self.count.subscribe();
        futures::stream::unfold(
            (self, rx, from, false),
            |(live, mut rx, next, done)| async move {
                if done {
                    return None;
                }
                loop {
                    let (events, ended) = live.since(next);
                    if !events.is_empty() {
                        let next = next + events.len();
                        let batch = futures::stream::iter(events);
                        return Some((batch, (live, rx, next, false)));
                    }
                    if ended {
                        return None;
                    }
                    if rx.changed().await.is_err() {
                        return None;
                    }
                }
            },
        )
        .flatten()
    }
}

/// The runs this server streams, by id.
#[derive(Default)]
pub struct LiveRuns(Mutex<HashMap<String, Arc<LiveRun>>>);

impl LiveRuns {
    /// The run `id`, if this server streams it.
    pub fn get(&self, id: &str) -> Option<Arc<LiveRun>> {
        self.0.lock().expect("not poisoned").get(id).cloned()
    }

    /// Takes `handle`'s events (a streamed run): numbered and kept as they
    /// come, whoever reads them, until the run stops.
    /// `None` when the run's log position is unknown (no ids to give).
    pub fn adopt(self: &Arc<Self>, handle: RunHandle) -> Result<Arc<LiveRun>, RunHandle> {
        let Some(start) = handle.log_start else {
            return Err(handle);
        };
        let live = Arc::new(LiveRun {
            run_id: handle.run_id.clone(),
            thread_id: handle.thread_id.clone(),
            start,
            events: Mutex::new(Vec::new()),
            count: watch::channel((0, false)).0,
            refused: Mutex::new(None),
        });
        self.0
            .lock()
            .expect("not poisoned")
            .insert(live.run_id.clone(), live.clone());
        let (runs, pumped) = (self.clone(), live.clone());
        tokio::spawn(async move {
            let mut id = EventId {
                position: start,
                after: 0,
            };
            let (events, outcome) = handle.split();
            let mut events = std::pin::pin!(events);
            while let Some(e) = events.next().await {
                id = match e {
                    RunEvent::MessageCompleted(_) => EventId {
                        position: id.position + 1,
                        after: 0,
                    },
                    _ => EventId {
                        after: id.after + 1,
                        ..id
                    },
                };
                let n = {
                    let mut kept = pumped.events.lock().expect("not poisoned");
                    kept.push((id, e));
                    kept.len()
                };
                pumped.count.send_replace((n, false));
            }
            if pumped.count.borrow().0 == 0
                && let Err(e) = outcome.await
            {
                *pumped.refused.lock().expect("not poisoned") = Some(e);
            }
            // Its outcome is stored: from now on the store tells it all
            // (and a later part of the run, here or elsewhere, too).
            pumped.count.send_modify(|c| c.1 = true);
            let mut map = runs.0.lock().expect("not poisoned");
            // A later part of the run (a resume) may have taken its place.
            if map
                .get(&pumped.run_id)
                .is_some_and(|l| Arc::ptr_eq(l, &pumped))
            {
                map.remove(&pumped.run_id);
            }
        });
        Ok(live)
    }
}

/// The SSE event of a run event with its id, as `who` may read it.
pub fn sse_with_id(state: &AppState, who: &Principal, id: EventId, e: &RunEvent) -> Event {
    let (name, data) = event_data(e);
    Event::default()
        .id(id.to_string())
        .event(name)
        .data(outbound(state, who, data).to_string())
}

/// A streamed run's answer: `run_started` (where to read the run later
/// should the connection drop; its id is where the run's log stood), then
/// its events with their ids.
pub fn live_response(state: Arc<AppState>, who: Principal, live: Arc<LiveRun>) -> HttpResponse {
    let started = Event::default()
        .id(EventId {
            position: live.start,
            after: 0,
        }
        .to_string())
        .event("run_started")
        .data(json!({"id": live.run_id, "thread_id": live.thread_id}).to_string());
    let events = live
        .follow(0)
        .map(move |(id, e)| sse_with_id(&state, &who, id, &e));
    let events = futures::stream::iter([started]).chain(events);
    Sse::new(events.map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// `after` of `GET /v1/runs/{id}/events`.
#[derive(Debug, serde::Deserialize)]
pub struct After {
    after: Option<String>,
}

/// `GET /v1/runs/{id}/events`: the run's events after `Last-Event-ID` (or
/// `?after=`; from the start of the run when neither), then live until it
/// stops — ended, or waiting for decisions.
pub async fn run_events(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(id): Path<String>,
    Query(q): Query<After>,
    headers: HeaderMap,
) -> Result<HttpResponse, ApiError> {
    // The header wins: a browser reconnecting sends it with the URL it
    // first opened.
    let given = headers
        .get("last-event-id")
        .map(|v| {
            (
                v.to_str().unwrap_or("\u{fffd}").to_string(),
                "Last-Event-ID",
            )
        })
        .or(q.after.map(|a| (a, "after")));
    let after = match given {
        None => EventId::default(),
        Some((v, name)) => v
            .parse::<EventId>()
            .map_err(|e| ApiError::invalid_request(format!("{name}: {e}")))?,
    };
    let record = state.store.run(&id).await?;
    owned_thread(&state, &who, &record.thread_id)
        .await
        .map_err(|_| ApiError::not_found(&format!("run {id}")))?;
    let events = replay(state.clone(), who.clone(), record, after).map(Ok::<_, Infallible>);
    Ok(Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// What a run's stream is made of, whatever protocol tells it.
#[derive(Debug, Clone)]
pub enum RunItem {
    /// An event of the run as this server streams it.
    Live(EventId, RunEvent),
    /// A message the client missed, whole, from the store.
    Stored(LoggedMessage),
    /// The run stopped (ended, or waits for decisions), as stored.
    Stopped(Box<RunRecord>),
    /// The store could not be read: the stream ends.
    Failed(String),
}

/// The events of `record`'s run after `after`, as SSE (Parlance's own).
fn replay(
    state: Arc<AppState>,
    who: Principal,
    record: RunRecord,
    after: EventId,
) -> impl Stream<Item = Event> + Send {
    items(state.clone(), record.id, after)
        .then(move |item| {
            let (state, who) = (state.clone(), who.clone());
            async move {
                match item {
                    RunItem::Live(id, e) => vec![sse_with_id(&state, &who, id, &e)],
                    RunItem::Stored(m) => {
                        let data = serde_json::to_value(&m.message).expect("json");
                        vec![
                            Event::default()
                                .id(m.position.to_string())
                                .event("message")
                                .data(outbound(&state, &who, data).to_string()),
                        ]
                    }
                    RunItem::Stopped(record) => ending(&state, &who, &record).await,
                    RunItem::Failed(message) => vec![
                        Event::default()
                            .event("error")
                            .data(json!({"message": message}).to_string()),
                    ],
                }
            }
        })
        .flat_map(futures::stream::iter)
}

/// The items of run `run` after `after`: from this server's live run when
/// it has the part they belong to, else from the store, read every
/// [`POLL`] until the run stops.
pub fn items(
    state: Arc<AppState>,
    run: String,
    after: EventId,
) -> impl Stream<Item = RunItem> + Send {
    enum Next {
        /// Read the store past this position.
        Store(u64),
        Done,
    }
    futures::stream::unfold(Next::Store(after.position), move |next| {
        let (state, run) = (state.clone(), run.clone());
        async move {
            let Next::Store(mut position) = next else {
                return None;
            };
            let once = |item| futures::stream::iter([item]).boxed();
            loop {
                if let Some(live) = state.live.get(&run)
                    && position >= live.start
                {
                    // This server has the rest, deltas included.
                    let id = if position == after.position {
                        after
                    } else {
                        EventId { position, after: 0 }
                    };
                    let from = live.index_after(id);
                    let rest = live
                        .follow(from)
                        .map(|(id, e)| RunItem::Live(id, e))
                        .boxed();
                    return Some((rest, Next::Done));
                }
                // Status first: a run that stopped has all its messages
                // stored by the time its status says so.
                let record = match state.store.run(&run).await {
                    Ok(r) => r,
                    Err(e) => return Some((once(RunItem::Failed(e.to_string())), Next::Done)),
                };
                let logged = match state
                    .store
                    .log_after(&record.thread_id, &run, position)
                    .await
                {
                    Ok(m) => m,
                    Err(e) => return Some((once(RunItem::Failed(e.to_string())), Next::Done)),
                };
                let live_here = state.live.get(&run);
                let mut out = Vec::new();
                for m in logged {
                    // What this server streams live, it sends from there.
                    if live_here.as_ref().is_some_and(|l| m.position > l.start) {
                        break;
                    }
                    position = m.position;
                    out.push(RunItem::Stored(m));
                }
                let running = record.status == "running";
                if !running && live_here.is_none() {
                    out.push(RunItem::Stopped(Box::new(record)));
                    return Some((futures::stream::iter(out).boxed(), Next::Done));
                }
                if let Some(live) = &live_here {
                    // Everything up to where its live part began is sent.
                    position = position.max(live.start);
                }
                if !out.is_empty() {
                    return Some((futures::stream::iter(out).boxed(), Next::Store(position)));
                }
                if live_here.is_some() {
                    continue;
                }
                tokio::select! {
                    _ = tokio::time::sleep(POLL) => {}
                    _ = crate::ui::live::closed() => return None,
                }
            }
        }
    })
    .flatten()
}

/// How a run that stopped ends its stream, as stored: the calls it
/// waits for, then its outcome.
async fn ending(state: &AppState, who: &Principal, record: &RunRecord) -> Vec<Event> {
    let run = match crate::runs::stored_run(state, record).await {
        Ok(v) => outbound(state, who, v),
        Err(e) => {
            return vec![
                Event::default()
                    .event("error")
                    .data(json!({"message": e.to_string()}).to_string()),
            ];
        }
    };
    let mut out = Vec::new();
    if record.status == RunStatus::RequiresApproval.as_str() {
        out.push(
            Event::default()
                .event("approval_required")
                .data(json!({"pending": run["pending"]}).to_string()),
        );
    }
    out.push(
        Event::default()
            .event("run_completed")
            .data(run.to_string()),
    );
    out
}

/// A run as a response envelope, from the store: its messages, output,
/// usage, error, and the calls it waits for.
pub async fn stored_response(
    state: &AppState,
    record: &RunRecord,
) -> Result<parlance_format::Response, String> {
    let mut v = crate::runs::stored_run(state, record)
        .await
        .map_err(|e| e.to_string())?;
    if let Some(o) = v.as_object_mut() {
        o.remove("created_at");
        o.remove("updated_at");
    }
    parlance_format::Response::from_value(&v).map_err(|e| e.to_string())
}

/// The approval requests of a message, as JSON.
pub(crate) fn pending_of(content: &[Block]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|b| match b {
            Block::ApprovalRequest { approval_request } => {
                Some(serde_json::to_value(approval_request).expect("json"))
            }
            _ => None,
        })
        .collect()
}
