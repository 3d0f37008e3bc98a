//! Run handlers: start a run (stateless or on a thread), decide pending
//! calls, read a run later.
//!
//! A run on a thread is detached from the request that started it: it runs
//! to its end and stores its outcome even if the client hangs up; the
//! client reads it later with `GET /v1/runs/{id}`. A stateless run lives
//! in its request: when the client leaves, it stops.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures::{Stream, StreamExt};
use parlance_agent::{Agent, Resume, RunEvent};
use parlance_format::{Decision, Response, RunStatus};
use parlance_runtime::{ResumeError, RunHandle};
use serde_json::{Value, json};

use crate::api::{
    AgentSpec, DecisionsRequest, RetryRequest, RunRequest, agent_for, input_messages, outbound,
    owned_thread, turns,
};
use crate::auth::Principal;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;
use crate::streams::event_data;

/// `POST /v1/runs`: run an agent, stateless (`turns`) or on a thread.
pub async fn create_run(
    State(state): State<Arc<AppState>>,
    who: Principal,
    JsonBody(req): JsonBody<RunRequest>,
) -> Result<HttpResponse, ApiError> {
    let agent = agent_for(&state, &req.agent, "agent")?;
    let input = input_messages(&req.input)?;
    let turns = turns(&req.turns)?;
    if let Some(thread) = &req.thread_id {
        if !turns.is_empty() {
            return Err(ApiError::invalid_request(
                "turns: not allowed with thread_id (the thread holds the history)",
            ));
        }
        owned_thread(&state, &who, thread).await?;
        let handle = state.runner(agent).start(thread, input, req.stream).await?;
        return detached(state, who, handle, req.stream).await;
    }
    let run = agent.run(input).turns(turns);
    if req.stream {
        let events = run.stream();
        return Ok(sse(state, who, events, Some(agent)));
    }
    let r = run.await;
    Ok(Json(stateless(&state, &who, &agent, &r)).into_response())
}

/// A stateless run's response as `who` may read it; paused, with the
/// signature that a decision on it must bring back.
pub(crate) fn stateless(state: &AppState, who: &Principal, agent: &Agent, r: &Response) -> Value {
    let mut v = outbound(state, who, serde_json::to_value(r).expect("json"));
    if r.status == RunStatus::RequiresApproval {
        // Signed as the client reads it, so that it comes back identical.
        let shown = Response::from_value(&v).expect("our own response reads back");
        v["signature"] = Value::String(state.signer.sign(who, agent, &shown));
    }
    v
}

/// The answer for a run on a thread: its events, or its outcome. Either
/// way the run itself is not tied to this request.
async fn detached(
    state: Arc<AppState>,
    who: Principal,
    handle: RunHandle,
    stream: bool,
) -> Result<HttpResponse, ApiError> {
    if stream {
        let handle = match state.live.adopt(handle) {
            Ok(live) => {
                // Refused decisions are an answer of their own, not an
                // empty stream.
                live.started().await.map_err(resume_error)?;
                return Ok(crate::streams::live_response(state, who, live));
            }
            // The log's position unknown: events without ids.
            Err(handle) => handle,
        };
        // First, where to read the run later should the connection drop.
        let started = RunEvent::TextDelta(String::new());
        let (id, thread) = (handle.run_id.clone(), handle.thread_id.clone());
        let events = futures::stream::iter([started]).chain(handle.events());
        let mut first = true;
        let events = events.map(move |e| {
            if std::mem::take(&mut first) {
                return Event::default()
                    .event("run_started")
                    .data(json!({"id": id, "thread_id": thread}).to_string());
            }
            let (name, data) = event_data(&e);
            Event::default()
                .event(name)
                .data(outbound(&state, &who, data).to_string())
        });
        return Ok(Sse::new(events.map(Ok::<_, Infallible>)).into_response());
    }
    match handle.outcome().await {
        Ok(r) => Ok(answer(&state, &who, &r)),
        Err(e) => Err(resume_error(e)),
    }
}

/// A run that did not start (or resume), as the API answers it.
pub(crate) fn resume_error(e: ResumeError) -> ApiError {
    match e {
        ResumeError::Decision(e) => ApiError::invalid_decision(e.to_string()),
        ResumeError::Store(e) => e.into(),
    }
}

/// A run's response as `who` may read it.
fn answer(state: &AppState, who: &Principal, r: &Response) -> HttpResponse {
    let v = serde_json::to_value(r).expect("json");
    Json(outbound(state, who, v)).into_response()
}

/// Events as SSE, each as `who` may read it; for a stateless run
/// (`signer_agent`), a paused `run_completed` carries its signature.
fn sse(
    state: Arc<AppState>,
    who: Principal,
    events: impl Stream<Item = RunEvent> + Send + 'static,
    signer_agent: Option<Agent>,
) -> HttpResponse {
    let events = events.map(move |e| {
        let (name, data) = match (&e, &signer_agent) {
            (RunEvent::RunCompleted(r), Some(agent)) => {
                ("run_completed", stateless(&state, &who, agent, r))
            }
            _ => {
                let (name, data) = event_data(&e);
                (name, outbound(&state, &who, data))
            }
        };
        Ok::<_, Infallible>(Event::default().event(name).data(data.to_string()))
    });
    Sse::new(events).into_response()
}

/// `POST /v1/runs/{id}/decisions`: decide pending calls; the run resumes.
pub async fn decide(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(run_id): Path<String>,
    JsonBody(req): JsonBody<DecisionsRequest>,
) -> Result<HttpResponse, ApiError> {
    let decisions: Vec<Decision> = req
        .decisions
        .iter()
        .enumerate()
        .map(|(i, d)| {
            Decision::from_value(d).map_err(|e| {
                ApiError::invalid_request(e.under(&format!("decisions[{i}]")).to_string())
            })
        })
        .collect::<Result<_, _>>()?;
    if let Some(paused) = &req.paused {
        // Stateless: the client holds the paused state, signed by us.
        let mut paused = paused.clone();
        let signature = match paused.as_object_mut().and_then(|o| o.remove("signature")) {
            Some(Value::String(s)) => s,
            _ => {
                return Err(ApiError::invalid_decision(
                    "paused.signature: required (the paused response is sent back as it was returned, with its signature)",
                ));
            }
        };
        let paused = Response::from_value(&paused)
            .map_err(|e| ApiError::invalid_request(e.under("paused").to_string()))?;
        if paused.id.as_deref() != Some(run_id.as_str()) {
            return Err(ApiError::invalid_request(format!(
                "paused.id: expected {run_id:?}"
            )));
        }
        let spec = req
            .agent
            .as_ref()
            .ok_or_else(|| ApiError::invalid_request("agent: required with paused"))?;
        let agent = agent_for(&state, spec, "agent")?;
        if !state.signer.verify(&who, &agent, &paused, &signature) {
            return Err(ApiError::invalid_decision(
                "paused.signature: does not match: the paused response was altered, or was handed out to another caller or for another agent",
            ));
        }
        let resume = Resume {
            turns: turns(&req.turns)?,
            paused,
            decisions,
        };
        if req.stream {
            let events = agent
                .resume(resume)
                .stream()
                .map_err(|e| ApiError::invalid_decision(e.to_string()))?;
            return Ok(sse(state, who, events, Some(agent)));
        }
        return match agent.resume(resume).await {
            Ok(r) => Ok(Json(stateless(&state, &who, &agent, &r)).into_response()),
            Err(e) => Err(ApiError::invalid_decision(e.to_string())),
        };
    }
    let record = state.store.run(&run_id).await?;
    owned_thread(&state, &who, &record.thread_id)
        .await
        .map_err(|_| ApiError::not_found(&format!("run {run_id}")))?;
    // A stored run resumes only with the agent it was made by: the same
    // configured agent (by name: its configuration may have changed since),
    // or, for an inline agent, the very same settings.
    let configured = |name: &str| {
        state.agents.get(name).cloned().ok_or_else(|| {
            ApiError::invalid_request(format!(
                "agent: the run's agent {name:?} is not configured here"
            ))
        })
    };
    let agent = match (&req.agent, record.settings["name"].as_str()) {
        (None, Some(name)) => configured(name)?,
        (Some(AgentSpec::Named(n)), Some(name)) if n == name => configured(name)?,
        (Some(_), Some(name)) => {
            return Err(ApiError::invalid_request(format!(
                "agent: not the agent this run was made by ({name:?}): a run resumes only with its own agent"
            )));
        }
        (Some(spec @ AgentSpec::Inline(_)), None) => {
            let agent = agent_for(&state, spec, "agent")?;
            if agent.settings() != record.settings {
                return Err(ApiError::invalid_request(
                    "agent: not the agent this run was made by (its settings differ): a run resumes only with its own agent",
                ));
            }
            agent
        }
        (_, None) => {
            return Err(ApiError::invalid_request(
                "agent: required (the run was made by an inline agent: give the same one)",
            ));
        }
    };
    let handle = state
        .runner(agent)
        .start_resume(&run_id, decisions, req.stream)
        .await?;
    detached(state, who, handle, req.stream).await
}

/// `POST /v1/threads/{id}/retry`: retries the thread's failed last run
/// (its failed calls run again, then the run goes on; see
/// `ThreadRunner::retry`). A new run, detached like any run on a thread.
pub async fn retry(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(thread): Path<String>,
    req: Option<JsonBody<RetryRequest>>,
) -> Result<HttpResponse, ApiError> {
    let req = req.map(|JsonBody(r)| r).unwrap_or_default();
    owned_thread(&state, &who, &thread).await?;
    let agent = match &req.agent {
        Some(spec) => agent_for(&state, spec, "agent")?,
        None => {
            let last = state.store.runs(&thread).await?.pop();
            let name = last
                .as_ref()
                .and_then(|r| r.settings["name"].as_str().map(str::to_string))
                .ok_or_else(|| {
                    ApiError::invalid_request("agent: required (the last run was made by an inline agent, or there is none)")
                })?;
            state.agents.get(&name).cloned().ok_or_else(|| {
                ApiError::invalid_request(format!(
                    "agent: the run's agent {name:?} is not configured here"
                ))
            })?
        }
    };
    let handle = state.runner(agent).start_retry(&thread, req.stream).await?;
    detached(state, who, handle, req.stream).await
}

/// `GET /v1/runs/{id}`: a run on a thread as stored — while it runs, and
/// after its client went away: status (`running`, `requires_approval`,
/// `completed`, `failed`), this run's messages, output, usage, pending
/// calls, error.
pub async fn get_run(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(id): Path<String>,
) -> Result<HttpResponse, ApiError> {
    let record = state.store.run(&id).await?;
    owned_thread(&state, &who, &record.thread_id)
        .await
        .map_err(|_| ApiError::not_found(&format!("run {id}")))?;
    let out = crate::streams::stored_run(&state, &record).await?;
    Ok(Json(outbound(&state, &who, out)).into_response())
}
