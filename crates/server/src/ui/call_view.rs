//! The decision page of a paused run: what was asked, what the model said,
//! and one card per call of the turn: waiting calls with the four
//! decisions, decided ones with how they were decided.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};

use super::args::{pretty, with_raw};
use super::form::{self, Errors, Prefill, Problems};
use super::page::{self, badge, when};
use super::paused::{Call, CallState, Paused};
use super::session::Viewer;

/// Why the page is drawn again after a post.
#[derive(Debug, Clone, Copy)]
pub enum Notice {
    /// Some calls were decided elsewhere meanwhile: nothing was sent.
    DecidedElsewhere,
    /// The run's agent is not configured here: decide through the API.
    NoAgent,
}

/// The page.
pub fn render(
    p: &Paused,
    viewer: &Viewer,
    prefill: &Prefill,
    problems: &Problems,
    notice: Option<Notice>,
    status: StatusCode,
) -> Response {
    let run = &p.run;
    let names: Vec<&str> = p.calls.iter().map(|c| c.call.name.as_str()).collect();
    let waiting = p.waiting();
    let decidable = waiting && p.agent.is_some();
    let body = html! {
        div .heading {
            h1 { "Decide: " (names.join(", ")) }
            (badge(&run.status))
        }
        p .meta {
            "Agent " strong { (p.agent_name.as_deref().unwrap_or("(inline)")) }
            " · thread " a href={ "/ui/threads/" (run.thread_id) } { code { (run.thread_id) } }
            @if viewer.who.operator { " · owner " (p.owner.as_deref().unwrap_or("(none)")) }
            " · run " code { (run.id) }
            " · paused " (when(run.updated_at))
        }
        div #notices role="status" aria-live="polite" {
            @match notice {
                Some(Notice::DecidedElsewhere) => p .notice .warn { "Nothing was sent: some calls were decided elsewhere meanwhile (another tab, the API, another reviewer). They are shown below as they are now; check the rest and send again." }
                Some(Notice::NoAgent) => p .notice .warn { "This run was made by an agent that is not configured on this server (an inline agent): decide it through the API (POST /v1/runs/{id}/decisions), giving the same agent." }
                None => {}
            }
            @if !waiting {
                p .notice { "This run is not waiting for decisions: it is " (run.status.replace('_', " ")) ". " a href={ "/ui/threads/" (run.thread_id) "#run-" (run.id) } { "See it in its thread" } "." }
            } @else if p.agent.is_none() && notice.is_none() {
                p .notice .warn { "This run was made by an agent that is not configured on this server (an inline agent): it can be read here, and decided through the API only." }
            }
        }
        @if let Some(q) = &p.asked { section .context { h2 { "Asked" } p .text { (q) } } }
        @if let Some(s) = &p.said { section .context { h2 { "The model said" } p .text { (s) } } }
        form #decide method="post" action={ "/ui/runs/" (run.id) "/decide" } novalidate
            data-check={ "/ui/runs/" (run.id) "/check" } data-live={ "/ui/runs/" (run.id) "/events" } data-event="run" {
            input type="hidden" name="csrf" value=(viewer.csrf);
            div .error .general #general-errors role="alert" {
                @for g in &problems.general { p { (g) } }
            }
            @for (n, c) in p.calls.iter().enumerate() {
                @let errors = problems.calls.get(&n).cloned().unwrap_or_default();
                @match (c.pending(), decidable) {
                    (Some(digest), true) => (pending_card(n, c, digest, prefill, &errors, p.calls.len() > 1)),
                    _ => (done_card(n, c, problems.conflicts.get(&n))),
                }
            }
            @if decidable && p.calls.iter().any(|c| c.pending().is_some()) {
                div .actions {
                    button type="submit" .primary { "Send decisions" }
                    span .muted { "All the calls above are sent together." }
                }
            }
        }
    };
    (status, page::layout("Decide", Some(viewer.banner()), body)).into_response()
}

fn slot(errors: &Errors, key: &str, id: &str) -> Markup {
    html! {
        p .error id=(id) data-ptr=(key) role="alert" {
            @if let Some(m) = errors.get(key) { @for (i, line) in m.iter().enumerate() { @if i > 0 { br; } (line) } }
        }
    }
}

const CHOICES: &[(&str, &str, &str)] = &[
    ("approve", "Approve", "run it as the model asked"),
    ("edit", "Edit", "run it with other arguments"),
    (
        "reject",
        "Reject",
        "do not run it; the model reads your reason",
    ),
    (
        "answer",
        "Answer",
        "do not run it; your answer is its result",
    ),
];

fn pending_card(
    n: usize,
    c: &Call,
    digest: &str,
    prefill: &Prefill,
    errors: &Errors,
    several: bool,
) -> Markup {
    let p = |s: &str| format!("call.{n}.{s}");
    let chosen = prefill.get(&p("decision")).unwrap_or("");
    let choice_err = format!("c{n}-decision-err");
    let json_text = prefill
        .get(&p("json"))
        .map(str::to_string)
        .unwrap_or_else(|| pretty(&c.call.arguments));
    let fields = c
        .schema
        .as_ref()
        .and_then(|s| form::render(n, s, &c.call.arguments, prefill, errors));
    let mode = prefill
        .get(&p("mode"))
        .unwrap_or(if fields.is_some() { "form" } else { "json" });
    html! {
        section .call .card data-n=(n) data-call=(c.call.id) id={ "call-" (n) } {
            header {
                h2 { code { (c.call.name) } }
                span .badge .wait .state { "waiting" }
            }
            @if let Some(d) = &c.description { p .description { (d) } }
            (with_raw(&c.call.arguments))
            p .decided-elsewhere role="alert" hidden {}
            input type="hidden" name=(p("id")) value=(c.call.id);
            input type="hidden" name=(p("digest")) value=(digest);
            fieldset .choice aria-describedby=(choice_err) {
                legend { "Decision" }
                @for (value, label, hint) in CHOICES {
                    label .option {
                        input type="radio" name=(p("decision")) value=(value) checked[chosen == *value];
                        " " strong { (label) } " " span .muted { "— " (hint) }
                    }
                }
                @if several {
                    label .option {
                        input type="radio" name=(p("decision")) value="later" checked[chosen == "later"];
                        " " strong { "Later" } " " span .muted { "— leave it waiting" }
                    }
                }
                (slot(errors, "#decision", &choice_err))
            }
            div .when data-when="edit" {
                h3 { "Edited arguments" }
                (slot(errors, "", &format!("c{n}-args-err")))
                @if let Some(f) = &fields {
                    label .mode {
                        "Edit with "
                        select name=(p("mode")) data-mode-select {
                            option value="form" selected[mode == "form"] { "the form" }
                            option value="json" selected[mode == "json"] { "JSON" }
                        }
                    }
                    div data-mode="form" { (f) }
                } @else {
                    input type="hidden" name=(p("mode")) value="json";
                }
                div data-mode="json" {
                    label for={ "c" (n) "-json" } { "Arguments (JSON)" }
                    textarea id={ "c" (n) "-json" } name=(p("json")) rows="8" spellcheck="false" aria-describedby={ "c" (n) "-args-err" } { (json_text) }
                }
            }
            div .when data-when="reject" {
                label for={ "c" (n) "-reason" } { "Reason (the model reads it)" }
                textarea id={ "c" (n) "-reason" } name=(p("reason")) rows="3" { (prefill.get(&p("reason")).unwrap_or("")) }
            }
            div .when data-when="answer" {
                label for={ "c" (n) "-answer" } { "Answer (the model reads it as the tool's result)" }
                textarea id={ "c" (n) "-answer" } name=(p("answer")) rows="4" aria-describedby={ "c" (n) "-answer-err" } { (prefill.get(&p("answer")).unwrap_or("")) }
                label .option {
                    input type="checkbox" name=(p("answer_json")) value="1" checked[prefill.get(&p("answer_json")).is_some()];
                    " The answer is JSON"
                }
                (slot(errors, "#answer", &format!("c{n}-answer-err")))
            }
        }
    }
}

fn done_card(n: usize, c: &Call, conflict: Option<&String>) -> Markup {
    html! {
        section .call .card .done data-n=(n) data-call=(c.call.id) id={ "call-" (n) } {
            header {
                h2 { code { (c.call.name) } }
                @match &c.state {
                    CallState::Pending { .. } | CallState::WaitsOn { .. } => (badge("waiting")),
                    CallState::Done(r) => (badge(r.approval.as_ref().map_or(r.status.as_str(), |a| a.decision.as_str()))),
                    CallState::Unknown => {}
                }
            }
            @if let Some(how) = conflict {
                p .notice .warn role="alert" { "Decided elsewhere meanwhile: " (how) ". Your decision for this call was not sent." }
            }
            @if let Some(d) = &c.description { p .description { (d) } }
            (with_raw(&c.call.arguments))
            @if let CallState::WaitsOn { run } = &c.state {
                p .notice { "This call is another agent's run, which waits for decisions of its own: " a href={ "/ui/runs/" (run) } { "decide them there" } ". This run goes on once it has finished." }
            }
            @if let CallState::Done(r) = &c.state {
                p .muted { "Decided: " (c.state.how()) @if let Some(a) = &r.approval { @if let Some(reason) = &a.reason { " — " (reason) } } }
                @if let Some(args) = r.approval.as_ref().and_then(|a| a.arguments.as_ref()) {
                    p .muted { "Ran with:" } (with_raw(args))
                }
            }
        }
    }
}
