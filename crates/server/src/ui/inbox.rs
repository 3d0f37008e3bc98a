//! The inbox: every run waiting for decisions that the viewer may see,
//! the most recently paused first, each with its agent, thread, time, and
//! every waiting call (tool, description, arguments readably, raw JSON on
//! demand). Live: the list is drawn again whenever a run starts or stops
//! waiting, on any server sharing the store.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::args::with_raw;
use super::live::{self, Tick};
use super::page::{self, UiError, badge, when};
use super::paused::{self, Paused};
use super::session::Viewer;
use crate::state::AppState;

/// At most this many runs are listed.
const LIMIT: u32 = 100;

/// `GET /ui`.
pub async fn page(State(state): State<Arc<AppState>>, viewer: Viewer) -> Result<Response, UiError> {
    let runs = waiting(&state, &viewer).await?;
    let body = html! {
        div .heading {
            h1 { "Inbox" }
            p .muted { "Runs waiting for a decision, the most recent first. This list updates by itself." }
        }
        p #live-status .muted role="status" aria-live="polite" {}
        div #inbox data-live="/ui/events" data-event="inbox" { (list(&runs, &viewer)) }
    };
    Ok(page::layout("Inbox", Some(viewer.banner()), body).into_response())
}

async fn waiting(state: &AppState, viewer: &Viewer) -> Result<Vec<Paused>, UiError> {
    let owner = if viewer.who.operator {
        None
    } else {
        viewer.who.subject.as_deref()
    };
    let mut out = Vec::new();
    for w in state.store.waiting_runs(owner, LIMIT).await? {
        let turn = state.store.run_turn(&w.run).await?;
        let messages = paused::visible(
            state,
            &viewer.who,
            turn.into_iter().map(|m| m.message).collect(),
        );
        out.push(paused::build(state, w.run, w.owner, &messages));
    }
    Ok(out)
}

/// The list itself (also what the live stream sends).
fn list(runs: &[Paused], viewer: &Viewer) -> Markup {
    html! {
        @if runs.is_empty() {
            p .empty data-count="0" { "Nothing is waiting for a decision." }
        } @else {
            p .count data-count=(runs.len()) {
                (runs.len()) @if runs.len() == 1 { " run waits" } @else { " runs wait" }
                @if runs.len() as u32 >= LIMIT { " (only the " (LIMIT) " most recent are shown)" }
            }
            ol .inbox {
                @for p in runs { li { (card(p, viewer)) } }
            }
        }
    }
}

fn card(p: &Paused, viewer: &Viewer) -> Markup {
    let run = &p.run;
    let pending: Vec<_> = p.calls.iter().filter(|c| c.pending().is_some()).collect();
    html! {
        article .card id={ "run-" (run.id) } data-run=(run.id) {
            header {
                h2 {
                    a href={ "/ui/runs/" (run.id) } {
                        @for (i, c) in pending.iter().enumerate() { @if i > 0 { ", " } (c.call.name) }
                        @if pending.is_empty() { "(no call waiting)" }
                    }
                }
                (badge(&run.status))
            }
            p .meta {
                "Agent " strong { (p.agent_name.as_deref().unwrap_or("(inline)")) }
                " · thread " a href={ "/ui/threads/" (run.thread_id) } { code { (run.thread_id) } }
                @if viewer.who.operator { " · owner " (p.owner.as_deref().unwrap_or("(none)")) }
                " · paused " (when(run.updated_at))
            }
            @if let Some(q) = &p.asked { p .asked { span .muted { "Asked: " } (q) } }
            @for c in &pending {
                section .call {
                    h3 { code { (c.call.name) } }
                    @if let Some(d) = &c.description { p .description { (d) } }
                    (with_raw(&c.call.arguments))
                }
            }
            p { a .button href={ "/ui/runs/" (run.id) } { "Decide" @if pending.len() > 1 { " (" (pending.len()) " calls)" } } }
        }
    }
}

/// `GET /ui/events`: the list, each time it changes.
pub async fn events(State(state): State<Arc<AppState>>, viewer: Viewer) -> Response {
    live::stream(viewer.expires(), move |mark: Option<Vec<(String, i64)>>| {
        let (state, viewer) = (Arc::clone(&state), viewer.clone());
        async move {
            let now = match state.store.waiting_marker().await {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!(error = %e, "inbox: reading the waiting runs failed");
                    return Tick::Same(mark);
                }
            };
            if mark.as_ref() == Some(&now) {
                return Tick::Same(mark);
            }
            match waiting(&state, &viewer).await {
                Ok(runs) => {
                    let html = list(&runs, &viewer).into_string();
                    Tick::Send(now, live::html_event("inbox", html))
                }
                Err(_) => Tick::Same(mark),
            }
        }
    })
}
