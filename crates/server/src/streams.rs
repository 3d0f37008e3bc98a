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

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures::{Stream, StreamExt};
use parlance_agent::RunEvent;
use parlance_format::{Block, RunStatus};
use parlance_store::{LoggedMessage, RunRecord};
use serde_json::{Value, json};

use crate::api::{outbound, owned_thread};
use crate::auth::Principal;
use crate::error::ApiError;
use crate::state::AppState;

pub use crate::live::{EventId, LiveRun, LiveRuns};

/// How often a run that runs elsewhere is read from the store.
pub const POLL: Duration = Duration::from_millis(250);

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
    let run = match stored_run(state, record).await {
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
    let mut v = stored_run(state, record).await.map_err(|e| e.to_string())?;
    if let Some(o) = v.as_object_mut() {
        o.remove("created_at");
        o.remove("updated_at");
        o.remove("handoff");
    }
    parlance_format::Response::from_value(&v).map_err(|e| e.to_string())
}

/// The approval requests of a message, as JSON.
pub(crate) fn pending_of(content: &[Block]) -> Vec<Value> {
    approval_requests(content)
        .iter()
        .map(|r| serde_json::to_value(r).expect("json"))
        .collect()
}

/// The SSE name and data of a run event.
pub fn event_data(e: &RunEvent) -> (&'static str, Value) {
    let data = match e {
        RunEvent::TextDelta(t) | RunEvent::ThinkingDelta(t) => json!({"text": t}),
        RunEvent::MessageCompleted(m) => serde_json::to_value(m).expect("json"),
        RunEvent::ToolCallStarted { call_id, name } => json!({"call_id": call_id, "name": name}),
        RunEvent::ToolCallFinished {
            call_id,
            name,
            status,
            elapsed,
        } => {
            json!({"call_id": call_id, "name": name, "status": status, "elapsed_ms": elapsed.as_millis() as u64})
        }
        RunEvent::ApprovalRequired(p) => json!({"pending": p}),
        RunEvent::ContextCompacted(c) => json!({
            "strategy": c.strategy.as_str(),
            "replaces": c.replaces,
            "tokens_before": c.tokens_before,
            "tokens_after": c.tokens_after,
        }),
        RunEvent::RunCompleted(r) => serde_json::to_value(r).expect("json"),
    };
    (e.name(), data)
}

/// The SSE form of a run event (as an operator reads it).
pub fn sse_event(e: &RunEvent) -> Event {
    let (name, data) = event_data(e);
    Event::default().event(name).data(data.to_string())
}

/// A run as stored, as `GET /v1/runs/{id}` reads it (before it is made
/// fit for its reader).
pub(crate) async fn stored_run(
    state: &AppState,
    record: &RunRecord,
) -> Result<Value, parlance_store::StoreError> {
    let messages: Vec<_> = state
        .store
        .run_turn(record)
        .await?
        .into_iter()
        .map(|m| m.message)
        .collect();
    let pending = match messages.last() {
        Some(last) if record.status == RunStatus::RequiresApproval.as_str() => {
            let own = approval_requests(&last.content);
            // A call waiting on a sub-agent lists the sub-agent's calls.
            let pending = match own.iter().any(|r| r.run_id.is_some()) {
                true => parlance_runtime::children::pending(&state.store, &messages).await?,
                false => own,
            };
            pending
                .iter()
                .map(|r| serde_json::to_value(r).expect("json"))
                .collect()
        }
        _ => Vec::new(),
    };
    Ok(json!({
        "id": record.id,
        "thread_id": record.thread_id,
        "status": record.status,
        "messages": messages,
        "output": record.output,
        "usage": record.usage.unwrap_or_default(),
        "finish_reason": record.finish_reason,
        "handoff": record.handoff,
        "pending": pending,
        "error": record.error,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
    }))
}

/// The approval requests in a message's content.
pub(crate) fn approval_requests(content: &[Block]) -> Vec<parlance_format::ApprovalRequest> {
    content
        .iter()
        .filter_map(|b| match b {
            Block::ApprovalRequest { approval_request } => Some(approval_request.clone()),
            _ => None,
        })
        .collect()
}
