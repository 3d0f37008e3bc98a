//! The HTTP API: handlers, their request types, errors as JSON.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures::StreamExt;
use parlance_agent::{Agent, Resume, RunEvent, RunInput};
use parlance_format::{Decision, Message, Response, Turn};
use parlance_store::{ResumeError, Store, StoreError, ThreadRunner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::build;
use crate::config::{AgentConfig, Config};

/// Everything the handlers share.
pub struct AppState {
    pub config: Config,
    pub store: Store,
    pub agents: HashMap<String, Agent>,
    pub tokens: HashMap<String, Principal>,
    pub http: reqwest::Client,
}

/// Who is calling.
#[derive(Debug, Clone)]
pub struct Principal {
    /// Owner of the threads it creates (`None`: the open API).
    pub subject: Option<String>,
    /// Sees every thread and the artifacts.
    pub operator: bool,
}

/// An error answer: `{"error": {"code", "message"}}`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// What went wrong.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ErrorDetail {
    /// A stable code: `invalid_request`, `unauthorized`, `not_found`,
    /// `thread_busy`, `invalid_decision`, `conflict`, `body_too_large`, `internal`.
    pub code: String,
    /// For a person; names the JSON path for invalid requests.
    pub message: String,
}

/// A handler's error.
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub &'static str, pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> HttpResponse {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.1.into(),
                message: self.2,
            },
        };
        (self.0, Json(body)).into_response()
    }
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, "invalid_request", message.into())
}

fn not_found(what: &str) -> ApiError {
    ApiError(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("{what} not found"),
    )
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Busy { .. } => ApiError(StatusCode::CONFLICT, "thread_busy", e.to_string()),
            StoreError::NotFound(w) => not_found(&w),
            StoreError::Conflict(m) => ApiError(StatusCode::CONFLICT, "conflict", m),
            other => {
                tracing::error!(error = %other, "store error");
                ApiError(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    other.to_string(),
                )
            }
        }
    }
}

/// The caller, from `Authorization: Bearer TOKEN`.
pub fn principal(state: &AppState, headers: &HeaderMap) -> Result<Principal, ApiError> {
    if state.tokens.is_empty() {
        return Ok(Principal {
            subject: None,
            operator: true,
        });
    }
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or_else(|| {
            ApiError(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "missing bearer token".into(),
            )
        })?;
    state.tokens.get(token.trim()).cloned().ok_or_else(|| {
        ApiError(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "unknown token".into(),
        )
    })
}

/// Reads a JSON body into `T` with the path of the first problem.
fn body<T: for<'de> Deserialize<'de>>(bytes: Result<Bytes, BytesRejection>) -> Result<T, ApiError> {
    let bytes = bytes.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                e.body_text(),
            )
        } else {
            bad(e.body_text())
        }
    })?;
    let de = &mut serde_json::Deserializer::from_slice(&bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            bad(format!("(body): {inner}"))
        } else {
            bad(format!("{path}: {inner}"))
        }
    })
}

/// An agent named in the configuration, or given inline.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AgentSpec {
    /// The name of an agent in the server's configuration.
    Named(String),
    /// An agent given in the request.
    Inline(Box<AgentConfig>),
}

/// The new input: a text (one user message) or messages.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum InputSpec {
    /// One user message.
    Text(String),
    /// Canonical messages.
    Messages(#[schemars(with = "Vec<Message>")] Vec<Value>),
}

/// `POST /v1/runs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Which agent runs.
    pub agent: AgentSpec,
    /// What is new this turn.
    pub input: InputSpec,
    /// Earlier turns (stateless multi-turn); only their `messages` reach the model.
    #[serde(default)]
    #[schemars(with = "Vec<Turn>")]
    pub turns: Vec<Value>,
    /// Run on a stored thread instead (stateful multi-turn).
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Answer with server-sent events.
    #[serde(default)]
    pub stream: bool,
}

/// `POST /v1/runs/{id}/decisions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionsRequest {
    /// One decision per call decided now.
    #[schemars(with = "Vec<Decision>")]
    pub decisions: Vec<Value>,
    /// Stateless runs: the paused response, as it was returned.
    #[serde(default)]
    #[schemars(with = "Option<Response>")]
    pub paused: Option<Value>,
    /// Stateless runs: the turns before the paused one.
    #[serde(default)]
    #[schemars(with = "Vec<Turn>")]
    pub turns: Vec<Value>,
    /// The agent (default: the one recorded with the run).
    #[serde(default)]
    pub agent: Option<AgentSpec>,
}

/// `POST /v1/threads`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewThread {
    /// The application's data.
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// `GET /v1/threads` paging.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListQuery {
    /// Start after this thread id.
    pub after: Option<String>,
    /// At most this many (default 50).
    pub limit: Option<u32>,
}

fn agent_for(state: &AppState, spec: &AgentSpec, path: &str) -> Result<Agent, ApiError> {
    match spec {
        AgentSpec::Named(name) => state
            .agents
            .get(name)
            .cloned()
            .ok_or_else(|| bad(format!("{path}: no agent named {name:?}"))),
        AgentSpec::Inline(cfg) => build::agent(&state.config, None, cfg, &state.http)
            .map_err(|e| bad(format!("{path}.{e}"))),
    }
}

fn input_messages(input: &InputSpec) -> Result<Vec<Message>, ApiError> {
    match input {
        InputSpec::Text(t) => Ok(vec![Message::user(t.clone())]),
        InputSpec::Messages(v) => {
            parlance_format::messages_from_value(&Value::Array(v.clone()), "input")
                .map_err(|e| bad(e.to_string()))
        }
    }
}

fn turns(v: &[Value]) -> Result<Vec<Turn>, ApiError> {
    v.iter()
        .enumerate()
        .map(|(i, t)| {
            Turn::from_value(t).map_err(|e| bad(e.under(&format!("turns[{i}]")).to_string()))
        })
        .collect()
}

async fn owned_thread(
    state: &AppState,
    who: &Principal,
    id: &str,
) -> Result<parlance_store::Thread, ApiError> {
    let t = state.store.thread(id).await?;
    if !who.operator && t.owner != who.subject {
        return Err(not_found(&format!("thread {id}")));
    }
    Ok(t)
}

/// `POST /v1/runs`: run an agent, stateless (`turns`) or on a thread.
pub async fn create_run(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    let req: RunRequest = body(bytes)?;
    let agent = agent_for(&state, &req.agent, "agent")?;
    let input = input_messages(&req.input)?;
    let turns = turns(&req.turns)?;
    if let Some(thread) = &req.thread_id {
        if !turns.is_empty() {
            return Err(bad(
                "turns: not allowed with thread_id (the thread holds the history)",
            ));
        }
        owned_thread(&state, &who, thread).await?;
        if req.stream {
            let events = ThreadRunner::new(state.store.clone(), agent)
                .run_stream(thread, input)
                .await?;
            let events = events.map(|e| Ok::<_, Infallible>(sse_event(&e)));
            return Ok(Sse::new(events).into_response());
        }
        let r = ThreadRunner::new(state.store.clone(), agent)
            .run(thread, input)
            .await?;
        return Ok(Json(r).into_response());
    }
    let run = RunInput {
        input,
        turns,
        run_id: None,
        thread_id: None,
    };
    if req.stream {
        let events = agent
            .run_stream(run)
            .map(|e| Ok::<_, Infallible>(sse_event(&e)));
        return Ok(Sse::new(events).into_response());
    }
    Ok(Json(agent.run(run).await).into_response())
}

/// The SSE form of a run event.
pub fn sse_event(e: &RunEvent) -> Event {
    let (name, data) = match e {
        RunEvent::TextDelta(t) => ("text_delta", json!({"text": t})),
        RunEvent::ThinkingDelta(t) => ("thinking_delta", json!({"text": t})),
        RunEvent::MessageCompleted(m) => ("message", serde_json::to_value(m).expect("json")),
        RunEvent::ToolCallStarted { call_id, name } => (
            "tool_call_started",
            json!({"call_id": call_id, "name": name}),
        ),
        RunEvent::ToolCallFinished {
            call_id,
            name,
            status,
            elapsed,
        } => (
            "tool_call_finished",
            json!({"call_id": call_id, "name": name, "status": status, "elapsed_ms": elapsed.as_millis() as u64}),
        ),
        RunEvent::ApprovalRequired(p) => ("approval_required", json!({"pending": p})),
        RunEvent::RunCompleted(r) => ("run_completed", serde_json::to_value(r).expect("json")),
    };
    Event::default().event(name).data(data.to_string())
}

/// `POST /v1/runs/{id}/decisions`: decide pending calls; the run resumes.
pub async fn decide(
    State(state): State<Arc<AppState>>,
    Path(run_id): Path<String>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    let req: DecisionsRequest = body(bytes)?;
    let decisions: Vec<Decision> = req
        .decisions
        .iter()
        .enumerate()
        .map(|(i, d)| {
            Decision::from_value(d)
                .map_err(|e| bad(e.under(&format!("decisions[{i}]")).to_string()))
        })
        .collect::<Result<_, _>>()?;
    if let Some(paused) = &req.paused {
        // Stateless: the client holds the paused state.
        let paused =
            Response::from_value(paused).map_err(|e| bad(e.under("paused").to_string()))?;
        if paused.id.as_deref() != Some(run_id.as_str()) {
            return Err(bad(format!("paused.id: expected {run_id:?}")));
        }
        let spec = req
            .agent
            .as_ref()
            .ok_or_else(|| bad("agent: required with paused"))?;
        let agent = agent_for(&state, spec, "agent")?;
        let resume = Resume {
            turns: turns(&req.turns)?,
            paused,
            decisions,
        };
        return match agent.resume(resume).await {
            Ok(r) => Ok(Json(r).into_response()),
            Err(e) => Err(ApiError(
                StatusCode::BAD_REQUEST,
                "invalid_decision",
                e.to_string(),
            )),
        };
    }
    let record = state.store.run(&run_id).await?;
    owned_thread(&state, &who, &record.thread_id).await?;
    let agent = match &req.agent {
        Some(spec) => agent_for(&state, spec, "agent")?,
        None => {
            let name = record.settings["name"]
                .as_str()
                .ok_or_else(|| bad("agent: required (the run was made by an inline agent)"))?;
            state.agents.get(name).cloned().ok_or_else(|| {
                bad(format!(
                    "agent: the run's agent {name:?} is not configured here"
                ))
            })?
        }
    };
    match ThreadRunner::new(state.store.clone(), agent)
        .resume(&run_id, decisions)
        .await
    {
        Ok(r) => Ok(Json(r).into_response()),
        Err(ResumeError::Decision(e)) => Err(ApiError(
            StatusCode::BAD_REQUEST,
            "invalid_decision",
            e.to_string(),
        )),
        Err(ResumeError::Store(e)) => Err(e.into()),
    }
}

/// `POST /v1/threads`.
pub async fn create_thread(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    let req: NewThread = match &bytes {
        Ok(b) if b.is_empty() => NewThread::default(),
        _ => body(bytes)?,
    };
    let t = state
        .store
        .create_thread(who.subject.as_deref(), req.metadata.unwrap_or(json!({})))
        .await?;
    Ok((StatusCode::CREATED, Json(t)).into_response())
}

/// `GET /v1/threads`: the caller's threads, paged.
pub async fn list_threads(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    q: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    let Query(q) = q.map_err(|e| bad(format!("(query): {}", e.body_text())))?;
    let owner = if who.operator {
        None
    } else {
        who.subject.as_deref()
    };
    let page = state
        .store
        .list_threads(owner, q.after.as_deref(), q.limit.unwrap_or(50))
        .await?;
    Ok(Json(page).into_response())
}

/// `GET /v1/threads/{id}`: messages and runs; artifacts for operators.
pub async fn get_thread(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    let t = owned_thread(&state, &who, &id).await?;
    let messages = state.store.messages(&id, 0, 100_000).await?;
    let runs = state.store.runs(&id).await?;
    let mut out = json!({"thread": t, "messages": messages, "runs": runs});
    if who.operator {
        out["artifacts"] = serde_json::to_value(state.store.artifacts(&id).await?).expect("json");
    } else {
        // Artifacts are for operators: stripped from what others read.
        strip_artifacts(&mut out["messages"]);
    }
    Ok(Json(out).into_response())
}

fn strip_artifacts(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.get("type").and_then(Value::as_str) == Some("tool_result")
                && let Some(Value::Object(r)) = m.get_mut("tool_result")
            {
                r.remove("artifact");
            }
            m.values_mut().for_each(strip_artifacts);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_artifacts),
        _ => {}
    }
}

/// `DELETE /v1/threads/{id}`.
pub async fn delete_thread(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<HttpResponse, ApiError> {
    let who = principal(&state, &headers)?;
    owned_thread(&state, &who, &id).await?;
    state.store.delete_thread(&id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Any other path or method: a JSON 404.
pub async fn fallback() -> ApiError {
    ApiError(
        StatusCode::NOT_FOUND,
        "not_found",
        "no such endpoint (see /openapi.json)".into(),
    )
}
