//! The inbox: every run waiting for decisions that the viewer may see,
//! the most recently paused first, each with its agent, thread, time, and
//! every waiting call (tool, description, arguments readably, raw JSON on
//! demand). Live: the list is drawn again whenever a run starts or stops
//! waiting, on any server sharing the store. A run whose stored turn does
//! not read (a damaged record) is listed as such, with its ids and why,
//! and an operator can delete its thread from there: one damaged record
//! never takes the inbox down.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::args::with_raw;
use super::live::{self, Tick};
use super::page::{self, UiError, badge, when};
use super::paused::{self, Paused};
use super::session::Viewer;
use super::thread;
use crate::state::AppState;
use parlance_store::{RunRecord, StoreError};

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
        @if viewer.who.operator { (end_sessions_form(&viewer)) }
    };
    Ok(page::layout("Inbox", Some(viewer.banner()), body).into_response())
}

/// An operator's form that ends every session of a subject (a lost
/// laptop, a stolen cookie), on every server sharing the store.
fn end_sessions_form(viewer: &Viewer) -> Markup {
    html! {
        section .sessions aria-labelledby="sessions-heading" {
            h2 #sessions-heading { "Sessions" }
            form method="post" action="/ui/sessions/end" {
                input type="hidden" name="csrf" value=(viewer.csrf);
                label for="end-subject" { "End every session of" }
                " "
                select #end-subject name="subject" required {
                    @for s in viewer.subjects() { option value=(s) { (s) } }
                }
                " "
                button type="submit" { "End sessions" }
            }
            p .muted { "Every browser logged in as that subject is logged out, on every server sharing the store. Its API tokens keep working." }
        }
    }
}

/// A run in the list: readable, or damaged.
enum Entry {
    Run(Box<Paused>),
    Damaged { run: Box<RunRecord>, error: String },
}

async fn waiting(state: &AppState, viewer: &Viewer) -> Result<Vec<Entry>, UiError> {
    let owner = if viewer.who.operator {
        None
    } else {
        viewer.who.subject.as_deref()
    };
    let mut out = Vec::new();
    for w in state.store.waiting_runs(owner, LIMIT).await? {
        let turn = match state.store.run_turn(&w.run).await {
            Ok(turn) => turn,
            Err(e @ StoreError::Corrupt { .. }) => {
                // The store logged which record and why.
                out.push(Entry::Damaged {
                    run: Box::new(w.run),
                    error: parlance_assemble::secrets::redact(&e.to_string()).into_owned(),
                });
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let messages = paused::visible(
            state,
            &viewer.who,
            turn.into_iter().map(|m| m.message).collect(),
        );
        out.push(Entry::Run(Box::new(paused::build(
            state, w.run, w.owner, &messages,
        ))));
    }
    Ok(out)
}

/// The list itself (also what the live stream sends).
fn list(runs: &[Entry], viewer: &Viewer) -> Markup {
    html! {
        @if runs.is_empty() {
            p .empty data-count="0" { "Nothing is waiting for a decision." }
        } @else {
            p .count data-count=(runs.len()) {
                (runs.len()) @if runs.len() == 1 { " run waits" } @else { " runs wait" }
                @if runs.len() as u32 >= LIMIT { " (only the " (LIMIT) " most recent are shown)" }
            }
            ol .inbox {
                @for e in runs {
                    li {
                        @match e {
                            Entry::Run(p) => (card(p, viewer)),
                            Entry::Damaged { run, error } => (damaged(run, error, viewer)),
                        }
                    }
                }
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

/// A waiting run that cannot be read: its ids, why, and for operators the
/// way out (deleting its thread: the run can never be decided).
fn damaged(run: &RunRecord, error: &str, viewer: &Viewer) -> Markup {
    html! {
        article .card .damaged id={ "run-" (run.id) } data-run=(run.id) data-damaged="true" {
            header { h2 { "Damaged record" } (badge(&run.status)) }
            p .meta {
                "Run " code { (run.id) } " · thread " code { (run.thread_id) }
                " · paused " (when(run.updated_at))
            }
            p .error role="alert" { "This run cannot be read or decided: " (error) }
            @if viewer.who.operator {
                (thread::delete_form(&run.thread_id, viewer))
            } @else {
                p .muted { "An operator can delete its thread." }
            }
        }
    }
}

/// `GET /ui/events`: the list, each time it changes.
pub async fn events(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
) -> Result<Response, UiError> {
    let slot = viewer.open_stream()?;
    Ok(live::stream(
        viewer.expires(),
        slot,
        move |mark: Option<Vec<(String, i64)>>| {
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
        },
    ))
}
