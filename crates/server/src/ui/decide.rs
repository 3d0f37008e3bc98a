//! Deciding a paused run: the page, the check of a form before it is sent,
//! and the decisions themselves.
//!
//! Every call of the paused turn is decided in one form, sent at once
//! (one `POST`: the engine takes them as one batch); "later" leaves a call
//! waiting. Edited arguments go through the engine's own check
//! (`ToolBox::check`, what the engine runs on a decision) both when the
//! page asks as they are typed and when the form is sent; its messages
//! are put at the fields they name. A call decided elsewhere meanwhile
//! (another tab, the API, another server) is shown as such, and the form
//! is not sent: the engine would refuse it anyway (a call decided once is
//! never decided again).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Form, Json};
use futures::StreamExt;
use parlance_agent::Check;
use parlance_format::{Block, Decision, DecisionKind};
use serde_json::{Value, json};

use super::call_view::{self, Notice};
use super::form::{self, Errors, Prefill, Problems};
use super::live::{self, Tick};
use super::page::UiError;
use super::paused::{self, Paused};
use super::session::Viewer;
use crate::state::AppState;

fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The decisions a posted form makes on `p`, or what is wrong with it.
pub fn read(p: &Paused, pairs: &[(String, String)]) -> Result<Vec<Decision>, Problems> {
    let mut problems = Problems::default();
    let mut decisions = Vec::new();
    if !p.waiting() {
        problems.general.push(format!(
            "This run is not waiting for decisions any more (it is {}): nothing was sent.",
            p.run.status.replace('_', " ")
        ));
        return Err(problems);
    }
    for (n, c) in p.calls.iter().enumerate() {
        let choice = field(pairs, &format!("call.{n}.decision")).unwrap_or("");
        let posted_id = field(pairs, &format!("call.{n}.id"));
        if posted_id.is_some_and(|id| id != c.call.id) {
            problems.general.push(format!(
                "call {n}: the form was made for call {:?}, but this turn's call {n} is {:?}: reload the page.",
                posted_id.unwrap_or(""),
                c.call.id
            ));
            continue;
        }
        let Some(digest) = c.pending() else {
            if posted_id.is_some() && !choice.is_empty() && choice != "later" {
                problems.conflicts.insert(n, c.state.how());
            }
            continue;
        };
        if field(pairs, &format!("call.{n}.digest")).is_some_and(|d| d != digest) {
            problems
                .conflicts
                .insert(n, "changed since the page was drawn".into());
            continue;
        }
        let base = |kind: DecisionKind| Decision {
            tool_call_id: c.call.id.clone(),
            digest: digest.to_string(),
            decision: kind,
            arguments: None,
            reason: None,
            content: None,
        };
        match choice {
            "later" => {}
            "approve" => decisions.push(base(DecisionKind::Approved)),
            "edit" => match edited(p, n, pairs) {
                Ok(args) => decisions.push(Decision {
                    arguments: Some(args),
                    ..base(DecisionKind::Edited)
                }),
                Err(errors) => {
                    problems.calls.insert(n, errors);
                }
            },
            "reject" => {
                let reason = field(pairs, &format!("call.{n}.reason"))
                    .map(str::trim)
                    .filter(|r| !r.is_empty())
                    .map(str::to_string);
                decisions.push(Decision {
                    reason,
                    ..base(DecisionKind::Rejected)
                });
            }
            "answer" => match answer(n, pairs) {
                Ok(block) => decisions.push(Decision {
                    content: Some(vec![block]),
                    ..base(DecisionKind::Answered)
                }),
                Err(msg) => problems.at(n, "#answer", msg),
            },
            "" => problems.at(
                n,
                "#decision",
                "Choose a decision: approve, edit, reject or answer",
            ),
            other => problems.at(n, "#decision", format!("unknown decision {other:?}")),
        }
    }
    if problems.is_empty() && decisions.is_empty() {
        problems
            .general
            .push("Every call is left for later: choose a decision for at least one.".into());
    }
    if problems.is_empty() {
        Ok(decisions)
    } else {
        Err(problems)
    }
}

/// Call `n`'s edited arguments, checked by the engine's own rules.
fn edited(p: &Paused, n: usize, pairs: &[(String, String)]) -> Result<Value, Errors> {
    let c = &p.calls[n];
    let json_mode = field(pairs, &format!("call.{n}.mode")) != Some("form");
    let (args, mut errors, pointers) = if json_mode {
        let text = field(pairs, &format!("call.{n}.json")).unwrap_or("");
        match serde_json::from_str::<Value>(text) {
            Ok(v) => {
                let mut errors = Errors::new();
                if let Err(e) = parlance_format::check_depth(&v, "(arguments)") {
                    errors.insert(String::new(), vec![e.to_string()]);
                }
                (v, errors, Vec::new())
            }
            Err(e) => {
                let mut errors = Errors::new();
                errors.insert(
                    String::new(),
                    vec![format!("(arguments): not valid JSON: {e}")],
                );
                return Err(errors);
            }
        }
    } else {
        let (args, errors) = form::assemble(pairs, n);
        (args, errors, form::pointers(pairs, n))
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let Some(agent) = &p.agent else {
        // Without the agent there is no schema here; the API checks.
        return Ok(args);
    };
    match agent.tools().check(&c.call.name, &c.call, &args) {
        Check::Invalid(problems) => {
            errors = form::place(&problems, &pointers, &args);
            Err(errors)
        }
        Check::UnknownTool => Err(Errors::from([(
            String::new(),
            vec![format!("the agent has no tool {:?} any more", c.call.name)],
        )])),
        Check::Ready { .. } => Ok(args),
    }
}

/// Call `n`'s answer: text, or JSON when the box says so.
fn answer(n: usize, pairs: &[(String, String)]) -> Result<Block, String> {
    let text = field(pairs, &format!("call.{n}.answer")).unwrap_or("");
    if text.trim().is_empty() {
        return Err("Write the answer the model will read in place of the tool's result".into());
    }
    if field(pairs, &format!("call.{n}.answer_json")).is_some() {
        let json =
            serde_json::from_str::<Value>(text).map_err(|e| format!("not valid JSON: {e}"))?;
        parlance_format::check_depth(&json, "(answer)").map_err(|e| e.to_string())?;
        return Ok(Block::Json { json });
    }
    Ok(Block::text(text))
}

/// `GET /ui/runs/{id}`.
pub async fn page(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    let p = paused::load(&state, &viewer.who, &id).await?;
    Ok(call_view::render(
        &p,
        &viewer,
        &Prefill::default(),
        &Problems::default(),
        None,
        StatusCode::OK,
    ))
}

/// `POST /ui/runs/{id}/check`: what would be wrong with this form, as
/// JSON (nothing is sent).
pub async fn check(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, UiError> {
    viewer.check_post(field(&pairs, "csrf"))?;
    let p = paused::load(&state, &viewer.who, &id).await?;
    let problems = read(&p, &pairs).err().unwrap_or_default();
    let calls: serde_json::Map<String, Value> = problems
        .calls
        .iter()
        .map(|(n, e)| (n.to_string(), json!(e)))
        .collect();
    let conflicts: serde_json::Map<String, Value> = problems
        .conflicts
        .iter()
        .map(|(n, how)| (n.to_string(), json!(how)))
        .collect();
    Ok(Json(json!({
        "ok": problems.is_empty(),
        "calls": calls,
        "conflicts": conflicts,
        "general": problems.general,
        "status": p.run.status,
    }))
    .into_response())
}

/// `POST /ui/runs/{id}/decide`: the decisions are sent, the run goes on,
/// and the reviewer lands on the thread, which shows it live.
pub async fn decide(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
    Path(id): Path<String>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Response, UiError> {
    viewer.check_post(field(&pairs, "csrf"))?;
    let p = paused::load(&state, &viewer.who, &id).await?;
    let prefill = Prefill::from_pairs(&pairs);
    let decisions = match read(&p, &pairs) {
        Ok(d) => d,
        Err(problems) => {
            let status = if problems.conflicts.is_empty() && p.waiting() {
                StatusCode::UNPROCESSABLE_ENTITY
            } else {
                StatusCode::CONFLICT
            };
            let notice = (!problems.conflicts.is_empty()).then_some(Notice::DecidedElsewhere);
            return Ok(call_view::render(
                &p, &viewer, &prefill, &problems, notice, status,
            ));
        }
    };
    let Some(agent) = p.agent.clone() else {
        return Ok(call_view::render(
            &p,
            &viewer,
            &prefill,
            &Problems::default(),
            Some(Notice::NoAgent),
            StatusCode::CONFLICT,
        ));
    };
    let started = state.runner(agent).start_resume(&id, decisions, true).await;
    let accepted = match started {
        Ok(handle) => {
            // A refused batch ends the stream before any event; an
            // accepted one starts with its calls (or their results).
            let mut events = std::pin::pin!(handle.events());
            events.next().await.is_some()
        }
        Err(e) => {
            tracing::info!(run = %id, error = %e, "ui: decisions not taken");
            false
        }
    };
    if accepted {
        let to = format!("/ui/threads/{}#run-{}", p.run.thread_id, p.run.id);
        return Ok(Redirect::to(&to).into_response());
    }
    // Someone else was quicker: show the run as it is now.
    let now = paused::load(&state, &viewer.who, &id).await?;
    let problems = read(&now, &pairs).err().unwrap_or_default();
    Ok(call_view::render(
        &now,
        &viewer,
        &prefill,
        &problems,
        Some(Notice::DecidedElsewhere),
        StatusCode::CONFLICT,
    ))
}

/// `GET /ui/runs/{id}/events`: the run's status and its calls' states,
/// each time they change (the page marks calls decided elsewhere). `404`
/// for a run the viewer may not see; the stream ends if it goes away.
pub async fn events(
    State(state): State<Arc<AppState>>,
    viewer: Viewer,
    Path(id): Path<String>,
) -> Result<Response, UiError> {
    paused::load(&state, &viewer.who, &id).await?;
    let slot = viewer.open_stream()?;
    Ok(live::stream(
        viewer.expires(),
        slot,
        move |mark: Option<(String, i64)>| {
            let (state, viewer, id) = (Arc::clone(&state), viewer.clone(), id.clone());
            async move {
                let run = match state.store.run(&id).await {
                    Ok(run) => run,
                    Err(parlance_store::StoreError::NotFound(_)) => return Tick::End,
                    Err(_) => return Tick::Same(mark),
                };
                let now = (run.status.clone(), run.updated_at);
                if mark.as_ref() == Some(&now) {
                    return Tick::Same(mark);
                }
                let p = match paused::load(&state, &viewer.who, &id).await {
                    Ok(p) => p,
                    Err(e) if e.status == StatusCode::NOT_FOUND => return Tick::End,
                    Err(_) => return Tick::Same(mark),
                };
                let calls: Vec<Value> = p
                .calls
                .iter()
                .enumerate()
                .map(|(n, c)| json!({"n": n, "id": c.call.id, "pending": c.pending().is_some(), "how": c.state.how()}))
                .collect();
                let data =
                    json!({"status": p.run.status, "calls": calls, "thread": p.run.thread_id});
                let event = axum::response::sse::Event::default()
                    .event("run")
                    .data(data.to_string());
                Tick::Send(now, event)
            }
        },
    ))
}

#[cfg(test)]
mod tests {
    //! The decision reader fed random edits: every decision it makes
    //! reads back (no deeper than the format's limit), whatever was posted.
    use super::*;
    use parlance_format::{MAX_VALUE_DEPTH, ToolCall, within_depth};
    use paused::{Call, CallState};
    use proptest::prelude::*;

    fn paused() -> Paused {
        Paused {
            run: parlance_store::RunRecord {
                id: "run_1".into(),
                thread_id: "thr_1".into(),
                status: "requires_approval".into(),
                settings: Value::Null,
                usage: None,
                error: None,
                output: Value::Null,
                finish_reason: None,
                handoff: None,
                created_at: 0,
                updated_at: 0,
            },
            owner: None,
            agent: None,
            agent_name: None,
            asked: None,
            said: None,
            calls: vec![Call {
                call: ToolCall::new("c1", "pay", json!({"amount": 1})),
                state: CallState::Pending {
                    digest: "d1".into(),
                },
                description: None,
                schema: None,
            }],
        }
    }

    fn nested(levels: usize) -> Value {
        let mut v = json!(1);
        for i in 0..levels {
            v = if i % 2 == 0 {
                json!([v])
            } else {
                json!({"k": v})
            };
        }
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn decisions_read_from_a_form_always_read_back(
            json_mode in any::<bool>(),
            // A field names a place inside the arguments: one level at least
            // (the whole arguments as one field is not a field of any form).
            levels in prop_oneof![1usize..130, 130usize..20_000],
            value_depth in 0usize..126,
            answer in any::<bool>(),
        ) {
            let mut pairs: Vec<(String, String)> = vec![
                ("call.0.id".into(), "c1".into()),
                ("call.0.digest".into(), "d1".into()),
            ];
            if answer {
                pairs.push(("call.0.decision".into(), "answer".into()));
                pairs.push(("call.0.answer".into(), nested(value_depth).to_string()));
                pairs.push(("call.0.answer_json".into(), "on".into()));
            } else if json_mode {
                pairs.push(("call.0.decision".into(), "edit".into()));
                pairs.push(("call.0.json".into(), json!({"a": nested(value_depth)}).to_string()));
            } else {
                pairs.push(("call.0.decision".into(), "edit".into()));
                pairs.push(("call.0.mode".into(), "form".into()));
                let ptr: String = "/p".repeat(levels);
                pairs.push((format!("call.0.f.j.{ptr}"), nested(value_depth).to_string()));
            }
            match read(&paused(), &pairs) {
                Ok(decisions) => {
                    prop_assert_eq!(decisions.len(), 1);
                    let d = &decisions[0];
                    if let Some(a) = &d.arguments {
                        prop_assert!(within_depth(a, MAX_VALUE_DEPTH));
                    }
                    for b in d.content.iter().flatten() {
                        if let Block::Json { json } = b {
                            prop_assert!(within_depth(json, MAX_VALUE_DEPTH));
                        }
                    }
                    // The canonical reader takes it as it is.
                    let back = Decision::from_value(&serde_json::to_value(d).unwrap());
                    prop_assert!(back.is_ok(), "{:?}", back);
                }
                Err(problems) => {
                    let all = format!("{problems:?}");
                    prop_assert!(all.contains("nested deeper than 100 levels"), "{}", all);
                }
            }
        }
    }

    #[test]
    fn a_field_for_the_whole_arguments_is_named_as_not_a_field() {
        let pairs: Vec<(String, String)> = vec![
            ("call.0.id".into(), "c1".into()),
            ("call.0.digest".into(), "d1".into()),
            ("call.0.decision".into(), "edit".into()),
            ("call.0.mode".into(), "form".into()),
            ("call.0.f.j.".into(), "1".into()),
        ];
        let problems = read(&paused(), &pairs).expect_err("a root field is refused");
        let all = format!("{problems:?}");
        assert!(
            all.contains("call.0.f.j.: not a field of this form"),
            "{all}"
        );
    }
}
