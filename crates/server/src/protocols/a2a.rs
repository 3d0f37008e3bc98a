//! A2A (protocol 1.0, JSON-RPC binding), served: each configured agent at
//! `/a2a/{agent}`, its card at `/a2a/{agent}/.well-known/agent-card.json`,
//! what `a2a-sdk`'s client (and `@a2a-js/sdk`) reads.
//!
//! - **Tasks are runs, contexts are threads.** `SendMessage` with a
//!   message whose `contextId` is a thread of the caller goes on in it;
//!   without one, a new thread of the caller. The task's `id` is the run's.
//!   The run's text parts are its input.
//! - **`input-required` is a run waiting for decisions.** Its status
//!   message names the calls and carries them as a data part
//!   (`{"pending": [...]}`, each with its `digest`). The answer is a
//!   message with that `taskId`: a data part `{"decisions": [...]}`
//!   (Parlance's decisions, all four kinds) or `{"decision": "approved" |
//!   "rejected", "reason"}` for every waiting call, or the text `approve`
//!   / `reject: why`.
//! - `SendStreamingMessage`: the task, then `artifactUpdate`s of the answer
//!   text as it streams (one artifact per model answer), `statusUpdate`s
//!   for the calls made and their results (data parts), and the last
//!   `statusUpdate` (completed, failed or input-required).
//!   `SubscribeToTask` follows a task from where the store has it (a
//!   reconnect loses nothing committed). `GetTask` reads it, `CancelTask`
//!   is refused (a run on a thread goes on to its end).
//! - Errors are JSON-RPC errors with A2A's codes (`-32001` task not found,
//!   `-32002` not cancelable, `-32004` unsupported, `-32602` invalid
//!   params, `-32601` method not found); a missing token is HTTP `401`.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures::StreamExt;
use parlance_agent::RunEvent;
use parlance_format::{ApprovalRequest, Block, Decision, DecisionKind, Message, Role, RunStatus};
use parlance_store::RunRecord;
use serde_json::{Value, json};

use crate::api::{outbound, owned_thread};
use crate::auth::Principal;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;
use crate::streams::{EventId, RunItem};

/// The protocol version this server speaks.
pub const PROTOCOL_VERSION: &str = "1.0";

/// A JSON-RPC error with A2A's code.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The code (`-32001` task not found...).
    pub code: i64,
    /// What is wrong, naming the field.
    pub message: String,
}

impl RpcError {
    fn params(message: impl Into<String>) -> Self {
        RpcError {
            code: -32602,
            message: message.into(),
        }
    }

    fn task_not_found(id: &str) -> Self {
        RpcError {
            code: -32001,
            message: format!("task {id} not found"),
        }
    }
}

/// A task's state, as A2A spells it, from a run's status.
pub fn state_of(status: &str) -> &'static str {
    match status {
        "running" => "TASK_STATE_WORKING",
        "completed" => "TASK_STATE_COMPLETED",
        "requires_approval" => "TASK_STATE_INPUT_REQUIRED",
        _ => "TASK_STATE_FAILED",
    }
}

/// The agent's message of a run's status: its answer, its failure, or the
/// calls it waits for (text, and a data part).
pub fn status_message(
    status: &str,
    output: &Value,
    error: Option<&Value>,
    pending: &[Value],
) -> Option<Value> {
    let parts = match status {
        "completed" => vec![json!({"text": text_of_output(output)})],
        "requires_approval" => {
            let names: Vec<String> = pending
                .iter()
                .map(|p| format!("{}({})", p["name"].as_str().unwrap_or("?"), p["arguments"]))
                .collect();
            vec![
                json!({"text": format!("Waiting for a decision on {}: answer with approve, reject: why, or a data part {{\"decisions\": [...]}}.", names.join(", "))}),
                json!({"data": {"pending": pending}, "mediaType": "application/json"}),
            ]
        }
        "running" => return None,
        _ => {
            let code = error.and_then(|e| e["code"].as_str()).unwrap_or("failed");
            let message = error
                .and_then(|e| e["message"].as_str())
                .unwrap_or("the run did not complete");
            vec![json!({"text": format!("{code}: {message}")})]
        }
    };
    Some(
        json!({"messageId": format!("status-{}", parlance_format::new_id("msg")), "role": "ROLE_AGENT", "parts": parts}),
    )
}

fn text_of_output(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A task as A2A reads it, from a run.
pub fn task(
    run: &str,
    thread: &str,
    status: &str,
    output: &Value,
    error: Option<&Value>,
    pending: &[Value],
    history: Vec<Value>,
) -> Value {
    let mut status_v = json!({"state": state_of(status)});
    if let Some(m) = status_message(status, output, error, pending) {
        status_v["message"] = m;
    }
    let mut t = json!({"id": run, "contextId": thread, "status": status_v});
    if status == "completed" {
        let part = match output {
            Value::String(s) => json!({"text": s}),
            other => json!({"data": other, "mediaType": "application/json"}),
        };
        t["artifacts"] = json!([{"artifactId": "answer", "name": "answer", "parts": [part]}]);
    }
    if !history.is_empty() {
        t["history"] = Value::Array(history);
    }
    t
}

/// A message of the thread as an A2A message (`None`: not one to show:
/// tool messages, the engine's own).
pub fn a2a_message(m: &Message, id: &str, run: &str, thread: &str) -> Option<Value> {
    let role = match m.role {
        Role::User if !is_engines(m) => "ROLE_USER",
        Role::Assistant => "ROLE_AGENT",
        _ => return None,
    };
    let mut parts: Vec<Value> = Vec::new();
    for b in &m.content {
        match b {
            Block::Text(t) if !t.text.is_empty() => parts.push(json!({"text": t.text})),
            Block::Json { json } => {
                parts.push(json!({"data": json, "mediaType": "application/json"}))
            }
            Block::ToolCall { tool_call } => parts
                .push(json!({"data": {"tool_call": tool_call}, "mediaType": "application/json"})),
            _ => {}
        }
    }
    (!parts.is_empty()).then(|| {
        json!({"messageId": id, "role": role, "parts": parts, "taskId": run, "contextId": thread})
    })
}

fn is_engines(m: &Message) -> bool {
    m.metadata
        .as_ref()
        .is_some_and(|d| d.contains_key("output_retry"))
}

/// What a user's message asks: its text, as the run's input.
pub fn input_of(message: &Value) -> Result<Vec<Message>, RpcError> {
    let parts = message["parts"]
        .as_array()
        .ok_or_else(|| RpcError::params("message.parts: required (an array of parts)"))?;
    let mut blocks = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            blocks.push(Block::text(t));
        } else if let Some(d) = p.get("data") {
            blocks.push(Block::Json { json: d.clone() });
        } else {
            return Err(RpcError {
                code: -32005,
                message: format!("message.parts[{i}]: only text and data parts are accepted"),
            });
        }
    }
    if blocks.is_empty() {
        return Err(RpcError::params("message.parts: empty (nothing to ask)"));
    }
    Ok(vec![Message::new(Role::User, blocks)])
}

/// The decisions a user's message makes on `pending`: a data part with
/// `decisions` (Parlance's) or one `decision` for every call, or the
/// text `approve` / `reject[: why]`.
pub fn decisions_of(
    message: &Value,
    pending: &[ApprovalRequest],
) -> Result<Vec<Decision>, RpcError> {
    let parts = message["parts"].as_array().cloned().unwrap_or_default();
    let every = |kind: DecisionKind, reason: Option<String>| {
        pending
            .iter()
            .map(|p| Decision {
                reason: reason.clone(),
                ..super::decision(p, kind)
            })
            .collect::<Vec<_>>()
    };
    for (i, p) in parts.iter().enumerate() {
        if let Some(d) = p.get("data") {
            if let Some(list) = d.get("decisions").and_then(Value::as_array) {
                return list
                    .iter()
                    .enumerate()
                    .map(|(j, v)| {
                        Decision::from_value(v).map_err(|e| {
                            RpcError::params(
                                e.under(&format!("message.parts[{i}].data.decisions[{j}]"))
                                    .to_string(),
                            )
                        })
                    })
                    .collect();
            }
            return match d.get("decision").and_then(Value::as_str) {
                Some("approved") => Ok(every(DecisionKind::Approved, None)),
                Some("rejected") => Ok(every(
                    DecisionKind::Rejected,
                    Some(
                        d["reason"]
                            .as_str()
                            .unwrap_or("the person rejected it")
                            .into(),
                    ),
                )),
                _ => Err(RpcError::params(format!(
                    "message.parts[{i}].data: decisions (a list) or decision (approved or rejected) required"
                ))),
            };
        }
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            let t = t.trim();
            let lower = t.to_lowercase();
            if ["approve", "approved", "yes"].contains(&lower.as_str()) {
                return Ok(every(DecisionKind::Approved, None));
            }
            if lower.starts_with("reject") || lower == "no" {
                let reason = t
                    .split_once(':')
                    .map(|(_, r)| r.trim().to_string())
                    .filter(|r| !r.is_empty())
                    .unwrap_or_else(|| "the person rejected it".into());
                return Ok(every(DecisionKind::Rejected, Some(reason)));
            }
        }
    }
    Err(RpcError::params(
        "message.parts: the task waits for decisions: approve, reject: why, or a data part {\"decisions\": [...]}",
    ))
}

/// Turns a run's events into A2A stream responses.
#[derive(Debug)]
pub struct A2aStream {
    run: String,
    thread: String,
    /// The answer artifact being streamed.
    artifact: Option<String>,
    answers: u32,
    /// The approval requests of the last tool message seen (what a
    /// stopped run waits for, when it stopped before this stream).
    waiting: Vec<Value>,
}

impl A2aStream {
    /// A translator for the task `run` of context `thread`.
    pub fn new(run: &str, thread: &str) -> Self {
        A2aStream {
            run: run.into(),
            thread: thread.into(),
            artifact: None,
            answers: 0,
            waiting: Vec::new(),
        }
    }

    /// The first response: the task, working.
    pub fn start(&self) -> Value {
        json!({"task": {"id": self.run, "contextId": self.thread, "status": {"state": "TASK_STATE_WORKING"}}})
    }

    fn working(&self, parts: Vec<Value>) -> Value {
        json!({"statusUpdate": {"taskId": self.run, "contextId": self.thread, "status": {
            "state": "TASK_STATE_WORKING",
            "message": {"messageId": parlance_format::new_id("msg"), "role": "ROLE_AGENT", "parts": parts}}}})
    }

    fn chunk(&mut self, text: &str, last: bool) -> Value {
        let (id, append) = match &self.artifact {
            Some(id) => (id.clone(), true),
            None => {
                self.answers += 1;
                let id = format!("answer-{}", self.answers);
                self.artifact = Some(id.clone());
                (id, false)
            }
        };
        json!({"artifactUpdate": {"taskId": self.run, "contextId": self.thread,
            "artifact": {"artifactId": id, "name": "answer", "parts": [{"text": text}]},
            "append": append, "lastChunk": last}})
    }

    /// The responses of one of the run's events.
    pub fn event(&mut self, e: &RunEvent) -> Vec<Value> {
        match e {
            RunEvent::TextDelta(t) if !t.is_empty() => vec![self.chunk(t, false)],
            RunEvent::MessageCompleted(m) => self.message(m),
            RunEvent::RunCompleted(r) => {
                let error = r
                    .error
                    .as_ref()
                    .map(|e| serde_json::to_value(e).expect("json"));
                let pending: Vec<Value> = r
                    .pending
                    .iter()
                    .map(|p| serde_json::to_value(p).expect("json"))
                    .collect();
                self.stopped(r.status.as_str(), &r.output, error.as_ref(), &pending)
            }
            _ => Vec::new(),
        }
    }

    /// The responses of a committed message.
    pub fn message(&mut self, m: &Message) -> Vec<Value> {
        let mut out = Vec::new();
        match m.role {
            Role::Assistant => {
                match self.artifact.take() {
                    // Its text streamed: the artifact is whole now.
                    Some(id) => {
                        self.artifact = Some(id);
                        out.push(self.chunk("", true));
                        self.artifact = None;
                    }
                    None if !m.text().is_empty() => {
                        out.push(self.chunk(&m.text(), true));
                        self.artifact = None;
                    }
                    None => {}
                }
                let calls: Vec<Value> = m
                    .tool_calls()
                    .map(|c| json!({"data": {"tool_call": c}, "mediaType": "application/json"}))
                    .collect();
                if !calls.is_empty() {
                    out.push(self.working(calls));
                }
            }
            Role::Tool => {
                self.waiting = crate::streams::pending_of(&m.content);
                let results: Vec<Value> = m
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolResult { tool_result } => Some(json!({"data": {"tool_result": tool_result}, "mediaType": "application/json"})),
                        _ => None,
                    })
                    .collect();
                if !results.is_empty() {
                    out.push(self.working(results));
                }
            }
            _ => {}
        }
        out
    }

    /// The last response: the task's final status.
    pub fn stopped(
        &mut self,
        status: &str,
        output: &Value,
        error: Option<&Value>,
        pending: &[Value],
    ) -> Vec<Value> {
        let mut s = json!({"state": state_of(status)});
        if let Some(m) = status_message(status, output, error, pending) {
            s["message"] = m;
        }
        vec![json!({"statusUpdate": {"taskId": self.run, "contextId": self.thread, "status": s}})]
    }
}

/// `GET /a2a/{agent}/.well-known/agent-card.json`: the agent's card.
pub async fn card(
    State(state): State<Arc<AppState>>,
    _who: Principal,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<HttpResponse, ApiError> {
    let config = state
        .config
        .agents
        .get(&name)
        .ok_or_else(|| ApiError::not_found(&format!("agent {name}")))?;
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("http");
    let description = config
        .instructions
        .clone()
        .unwrap_or_else(|| format!("The {name} agent of a Parlance server."));
    let mut card = json!({
        "name": name,
        "description": description,
        "supportedInterfaces": [{"url": format!("{scheme}://{host}/a2a/{name}"), "protocolBinding": "JSONRPC", "protocolVersion": PROTOCOL_VERSION}],
        "version": env!("CARGO_PKG_VERSION"),
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{"id": name, "name": name, "description": description, "tags": ["parlance", "agent"]}],
    });
    if !state.tokens.is_empty() {
        card["securitySchemes"] =
            json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}});
        card["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
    }
    Ok(Json(card).into_response())
}

/// `POST /a2a/{agent}`: A2A's JSON-RPC methods.
pub async fn rpc(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(name): Path<String>,
    JsonBody(body): JsonBody<Value>,
) -> Result<HttpResponse, ApiError> {
    let id = body.get("id").cloned().unwrap_or(Value::Null);
    let reply = |result: Result<Value, RpcError>| {
        let v = match result {
            Ok(r) => json!({"jsonrpc": "2.0", "id": id, "result": r}),
            Err(e) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": e.code, "message": e.message}})
            }
        };
        Json(outbound(&state, &who, v)).into_response()
    };
    let agent = super::configured(&state, &name)?;
    if body.get("jsonrpc") != Some(&json!("2.0")) {
        return Ok(reply(Err(RpcError {
            code: -32600,
            message: "jsonrpc: \"2.0\" required".into(),
        })));
    }
    let params = body.get("params").cloned().unwrap_or(json!({}));
    let method = body["method"].as_str().unwrap_or("");
    match method {
        "SendMessage" | "SendStreamingMessage" => {
            let stream = method == "SendStreamingMessage";
            let handle = match start(&state, &who, &agent, &name, &params, stream).await {
                Ok(h) => h,
                Err(e) => return Ok(reply(Err(e))),
            };
            if !stream {
                let run = handle.run_id.clone();
                let result = match handle.outcome().await {
                    Ok(_) => stored_task(&state, &run, 0).await,
                    Err(e) => Err(RpcError::params(e.to_string())),
                };
                return Ok(reply(result.map(|t| json!({"task": t}))));
            }
            let (run, thread) = (handle.run_id.clone(), handle.thread_id.clone());
            let items = match state.live.adopt(handle) {
                Ok(live) => {
                    if let Err(e) = live.started().await {
                        return Ok(reply(Err(RpcError::params(e.to_string()))));
                    }
                    live.follow(0).map(|(id, e)| RunItem::Live(id, e)).boxed()
                }
                Err(handle) => handle
                    .events()
                    .map(|e| RunItem::Live(EventId::default(), e))
                    .boxed(),
            };
            Ok(stream_response(
                state.clone(),
                who.clone(),
                id,
                &run,
                &thread,
                items,
            ))
        }
        "SubscribeToTask" => {
            let Some(task) = params["id"].as_str() else {
                return Ok(reply(Err(RpcError::params("id: required"))));
            };
            let record = match owned_run(&state, &who, task).await {
                Ok(r) => r,
                Err(e) => return Ok(reply(Err(e))),
            };
            let items =
                crate::streams::items(state.clone(), record.id.clone(), EventId::default()).boxed();
            Ok(stream_response(
                state.clone(),
                who.clone(),
                id,
                &record.id,
                &record.thread_id,
                items,
            ))
        }
        "GetTask" => {
            let Some(task) = params["id"].as_str() else {
                return Ok(reply(Err(RpcError::params("id: required"))));
            };
            let history = params["historyLength"].as_u64().unwrap_or(u64::MAX);
            let result = match owned_run(&state, &who, task).await {
                Ok(_) => stored_task(&state, task, history).await,
                Err(e) => Err(e),
            };
            Ok(reply(result))
        }
        "CancelTask" => {
            let task = params["id"].as_str().unwrap_or("");
            let result = match owned_run(&state, &who, task).await {
                Ok(_) => Err(RpcError {
                    code: -32002,
                    message: format!(
                        "task {task} cannot be canceled: a run on a thread goes on to its end (a waiting one is decided: reject its calls)"
                    ),
                }),
                Err(e) => Err(e),
            };
            Ok(reply(result))
        }
        "ListTasks"
        | "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig"
        | "GetExtendedAgentCard" => Ok(reply(Err(RpcError {
            code: -32004,
            message: format!("{method} is not supported by this server"),
        }))),
        other => Ok(reply(Err(RpcError {
            code: -32601,
            message: format!("method {other:?} not found"),
        }))),
    }
}

/// Starts (or, for a waiting task, decides and resumes) the run a
/// message asks for.
async fn start(
    state: &Arc<AppState>,
    who: &Principal,
    agent: &parlance_agent::Agent,
    name: &str,
    params: &Value,
    stream: bool,
) -> Result<parlance_runtime::RunHandle, RpcError> {
    let message = params
        .get("message")
        .ok_or_else(|| RpcError::params("message: required"))?;
    let runner = state.runner(agent.clone());
    if let Some(task) = message.get("taskId").and_then(Value::as_str) {
        let record = owned_run(state, who, task).await?;
        if record.status != RunStatus::RequiresApproval.as_str() {
            return Err(RpcError::params(format!(
                "message.taskId: task {task} is {}, not waiting for input",
                state_of(&record.status)
            )));
        }
        if record.settings["name"].as_str() != Some(name) {
            return Err(RpcError::params(format!(
                "message.taskId: task {task} is not agent {name:?}'s"
            )));
        }
        let pending = super::waiting_calls(state, &record)
            .await
            .map_err(|e| RpcError::params(e.to_string()))?;
        let decided = decisions_of(message, &pending)?;
        return runner
            .start_resume(task, decided, stream)
            .await
            .map_err(|e| RpcError::params(e.to_string()));
    }
    let input = input_of(message)?;
    let thread = match message.get("contextId").and_then(Value::as_str) {
        Some(thread) => {
            owned_thread(state, who, thread).await.map_err(|_| {
                RpcError::params(format!("message.contextId: no context {thread:?} of yours"))
            })?;
            thread.to_string()
        }
        None => {
            state
                .store
                .create_thread(who.subject.as_deref(), json!({"source": "a2a"}))
                .await
                .map_err(|e| RpcError::params(e.to_string()))?
                .id
        }
    };
    runner
        .start(&thread, input, stream)
        .await
        .map_err(|e| RpcError::params(e.to_string()))
}

/// The run `task` of `who`, else "task not found" (another's too).
async fn owned_run(state: &AppState, who: &Principal, task: &str) -> Result<RunRecord, RpcError> {
    let record = state
        .store
        .run(task)
        .await
        .map_err(|_| RpcError::task_not_found(task))?;
    owned_thread(state, who, &record.thread_id)
        .await
        .map_err(|_| RpcError::task_not_found(task))?;
    Ok(record)
}

/// The task `run` as stored, with at most `history` messages.
async fn stored_task(state: &AppState, run: &str, history: u64) -> Result<Value, RpcError> {
    let record = state
        .store
        .run(run)
        .await
        .map_err(|_| RpcError::task_not_found(run))?;
    let mine = state
        .store
        .run_turn(&record)
        .await
        .map_err(|e| RpcError::params(e.to_string()))?;
    let pending = match mine.last() {
        Some(last) if record.status == "requires_approval" => {
            crate::streams::pending_of(&last.message.content)
        }
        _ => Vec::new(),
    };
    let mut messages: Vec<Value> = mine
        .iter()
        .filter_map(|m| {
            a2a_message(
                &m.message,
                &format!("msg-{}", m.seq),
                run,
                &record.thread_id,
            )
        })
        .collect();
    let keep = messages
        .len()
        .saturating_sub(history.min(usize::MAX as u64) as usize);
    messages.drain(..keep);
    Ok(task(
        run,
        &record.thread_id,
        &record.status,
        &record.output,
        record.error.as_ref(),
        &pending,
        messages,
    ))
}

/// A stream of JSON-RPC responses (one per A2A stream response), as SSE.
fn stream_response(
    state: Arc<AppState>,
    who: Principal,
    id: Value,
    run: &str,
    thread: &str,
    items: futures::stream::BoxStream<'static, RunItem>,
) -> HttpResponse {
    let mut a2a = A2aStream::new(run, thread);
    let first = a2a.start();
    let responses = items.map(move |item| match item {
        RunItem::Live(_, e) => a2a.event(&e),
        RunItem::Stored(m) => a2a.message(&m.message),
        RunItem::Stopped(r) => {
            let pending = std::mem::take(&mut a2a.waiting);
            a2a.stopped(&r.status, &r.output, r.error.as_ref(), &pending)
        }
        RunItem::Failed(message) => vec![json!({"statusUpdate": {"status": {"state": "TASK_STATE_FAILED", "message": {"messageId": "error", "role": "ROLE_AGENT", "parts": [{"text": message}]}}}})],
    });
    let events = futures::stream::iter([vec![first]])
        .chain(responses)
        .flat_map(futures::stream::iter)
        .map(move |result| {
            let v = json!({"jsonrpc": "2.0", "id": id, "result": result});
            Ok::<_, Infallible>(Event::default().data(outbound(&state, &who, v).to_string()))
        });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

#[cfg(test)]
#[path = "a2a_tests.rs"]
mod tests;
