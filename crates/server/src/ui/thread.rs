//! Threads: the recent ones, one as people read it (live while a run goes
//! on), and retrying its failed last run.

use std::sync::Arc;

use axum::Form;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};

use super::conversation::{self, RunActions};
use super::live::{self, Tick};
use super::page::{self, UiError, badge, when};
use super::paused::visible;
use super::session::{CsrfForm, Viewer};
use crate::state::AppState;

/// `GET /ui/threads`: the viewer's threads, the most recently changed first.
pub async fn list(State(state): State<Arc<AppState>>, viewer: Viewer) -> Result<Response, UiError> {
    let owner = if viewer.who.operator {
        None
    } else {
        viewer.who.subject.as_deref()
    };
    let threads = state.store.recent_threads(owner, 100).await?;
    let body = html! {
        h1 { "Threads" }
        @if threads.is_empty() { p .empty { "No thread yet." } }
        @else {
            table .threads {
                thead { tr { th { "Thread" } th { "Last run" } th { "Changed" } @if viewer.who.operator { th { "Owner" } } } }
                tbody {
                    @for (t, status) in &threads {
                        tr {
                            td { a href={ "/ui/threads/" (t.id) } { code { (t.id) } } }
                            td { @if let Some(s) = status { (badge(s)) } @else { span .muted { "none" } } }
                            td { (when(t.updated_at)) }
                            @if viewer.who.operator { td { (t.owner.as_deref().unwrap_or("(none)")) } }
                        }
                    }
                }
            }
        }
    };
    Ok(page::layout("Threads", Some(viewer.banner()), body).into_response())
}

/// The thread's content, as the viewer may read it.
async fn content(state: &AppState, viewer: &Viewer, id: &str) -> Result<Markup, UiError> {
    let t = match state.store.thread(id).await {
        Ok(t) => t,
        Err(parlance_store::StoreError::NotFound(_)) => {
            return Err(UiError::not_found(&format!("Thread {id}")));
        }
        Err(e) => return Err(e.into()),
    };
    if !viewer.who.operator && t.owner != viewer.who.subject {
        return Err(UiError::not_found(&format!("Thread {id}")));
    }
    // Runs first: reading them marks dead runs (and repairs messages).
    let runs = state.store.runs(id).await?;
    let mut messages = match state.store.all_messages(id).await {
        Ok(m) => m,
        Err(e @ parlance_store::StoreError::Corrupt { .. }) => {
            // The store logged which record and why.
            let why = parlance_assemble::secrets::redact(&e.to_string()).into_owned();
            return Ok(html! {
                p .error .damaged role="alert" data-damaged="true" { "This thread's record is damaged: " (why) }
                @if viewer.who.operator { (delete_form(id, viewer)) }
                @else { p .muted { "An operator can delete it." } }
            });
        }
        Err(e) => return Err(e.into()),
    };
    let shown = visible(
        state,
        &viewer.who,
        messages.iter().map(|m| m.message.clone()).collect(),
    );
    for (m, s) in messages.iter_mut().zip(shown) {
        m.message = s;
    }
    let retry = runs.last().is_some_and(|r| {
        r.status == "failed"
            && r.settings["name"]
                .as_str()
                .is_some_and(|n| state.agents.contains_key(n))
    });
    // Agents used as tools: where this thread's sub-agents ran, and, for a
    // sub-agent's thread, the run that called it.
    let children = state.store.child_threads_of(id).await?;
    let caller = match &t.parent_run_id {
        Some(run) => state.store.run(run).await.ok(),
        None => None,
    };
    let body = conversation::body(id, &runs, &messages, viewer, &RunActions { retry });
    Ok(html! {
        @if let (Some(run), Some(call)) = (&caller, &t.parent_call_id) {
            p .notice .subagent { "A sub-agent's thread: called by " code { (call) } " of run "
                a href={ "/ui/threads/" (run.thread_id) "#run-" (run.id) } { code { (run.id) } } "." }
        }
        @if !children.is_empty() {
            section .subagents {
                h2 { "Sub-agents" }
                ul {
                    @for c in &children {
                        li {
                            "Call " code { (c.parent_call_id.as_deref().unwrap_or("")) } " of run "
                            code { (c.parent_run_id.as_deref().unwrap_or("")) } ": "
                            a href={ "/ui/threads/" (c.id) } { "thread " code { (c.id) } }
                        }
                    }
                }
            }
        }
        (body)
    })
}

fn thread_page(
    id: &str,
    viewer: &Viewer,
    content: Markup,
    notice: Option<&str>,
) -> axum::response::Html<String> {
    let body = html! {
        div .heading { h1 { "Thread " code { (id) } } }
        div #notices role="status" aria-live="polite" {
            @if let Some(n) = notice { p .notice .warn role="alert" { (n) } }
        }
        div #thread data-live={ "/ui/threads/" (id) "/events" } data-event="thread" { (content) }
    };
    page::layout("Thread", Some(viewer.banner()), body)
}

/// `GET /ui/threads/{id}`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    let c = content(&state, &viewer, &id).await?;
    Ok(thread_page(&id, &viewer, c, None).into_response())
}

/// What tells that a thread changed: its last change, and each run's id,
/// status and last change.
type Mark = (i64, Vec<(String, String, i64)>);

/// `GET /ui/threads/{id}/events`: the thread drawn again whenever it or
/// one of its runs changes. `404` for a thread the viewer may not see;
/// the stream ends if it is deleted.
pub async fn events(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    content(&state, &viewer, &id).await?;
    let slot = viewer.open_stream()?;
    Ok(live::stream(
        viewer.expires(),
        slot,
        move |mark: Option<Mark>| {
            let (state, viewer, id) = (Arc::clone(&state), viewer.clone(), id.clone());
            async move {
                let (t, runs) = match (state.store.thread(&id).await, state.store.runs(&id).await) {
                    (Ok(t), Ok(runs)) => (t, runs),
                    (Err(parlance_store::StoreError::NotFound(_)), _) => return Tick::End,
                    _ => return Tick::Same(mark),
                };
                let now = (
                    t.updated_at,
                    runs.into_iter()
                        .map(|r| (r.id, r.status, r.updated_at))
                        .collect(),
                );
                if mark.as_ref() == Some(&now) {
                    return Tick::Same(mark);
                }
                match content(&state, &viewer, &id).await {
                    Ok(c) => Tick::Send(now, live::html_event("thread", c.into_string())),
                    Err(e) if e.status == StatusCode::NOT_FOUND => Tick::End,
                    Err(_) => Tick::Same(mark),
                }
            }
        },
    ))
}

/// An operator's button that deletes a thread, also one a run waits on
/// (for a damaged record, which no one can decide).
pub fn delete_form(id: &str, viewer: &Viewer) -> Markup {
    html! {
        form method="post" action={ "/ui/threads/" (id) "/delete" } .delete {
            input type="hidden" name="csrf" value=(viewer.csrf);
            button .danger type="submit" { "Delete thread " code { (id) } }
        }
    }
}

/// `POST /ui/threads/{id}/delete` (operators): the thread is deleted with
/// its runs, also one waiting for decisions; back to the inbox.
pub async fn delete(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
) -> Result<Response, UiError> {
    viewer.check_post(form.csrf.as_deref())?;
    if !viewer.who.operator {
        return Err(UiError::new(
            StatusCode::FORBIDDEN,
            "Forbidden",
            "Only operators may delete a thread here.",
        ));
    }
    tracing::warn!(thread = %id, by = ?viewer.who.subject, "thread deleted from the inbox");
    state.store.delete_thread_waiting(&id).await?;
    Ok(Redirect::to("/ui").into_response())
}

/// `POST /ui/threads/{id}/retry`: retries the failed last run with the
/// agent that made it; the page then follows it live.
pub async fn retry(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
    Path(id): Path<String>,
    Form(form): Form<CsrfForm>,
) -> Result<Response, UiError> {
    viewer.check_post(form.csrf.as_deref())?;
    // The same visibility check as the page (404 for others' threads).
    content(&state, &viewer, &id).await?;
    let last = state.store.runs(&id).await?.pop();
    let agent = last
        .as_ref()
        .and_then(|r| r.settings["name"].as_str())
        .and_then(|n| state.agents.get(n))
        .cloned();
    let why = match agent {
        None => "The last run's agent is not configured on this server: retry through the API, giving the agent.".to_string(),
        Some(agent) => match state.runner(agent)
            .start_retry(&id, false)
            .await
        {
            Ok(handle) => {
                let to = format!("/ui/threads/{id}#run-{}", handle.run_id);
                return Ok(Redirect::to(&to).into_response());
            }
            Err(e) => format!("Not retried: {e}"),
        },
    };
    let c = content(&state, &viewer, &id).await?;
    Ok((
        StatusCode::CONFLICT,
        thread_page(&id, &viewer, c, Some(&why)),
    )
        .into_response())
}
