//! OpenAI's Chat Completions API, served: `POST /v1/chat/completions`
//! with `model` = the name of a configured agent, so that a program
//! written against the OpenAI SDK runs a Parlance agent by changing its
//! base URL.
//!
//! - The request's messages are read as OpenAI's API reads them (the same
//!   decoder the provider uses): the trailing user messages are the run's
//!   input, the messages before them its earlier turns. The agent's tools
//!   run on the server; a request's own `tools` are refused (they would
//!   never be called).
//! - With the header `x-parlance-thread: THREAD_ID`, the run is on that
//!   stored thread (its history comes from the store; only the trailing
//!   user messages of the request are new), detached from the request as
//!   any run on a thread.
//! - The answer is a `chat.completion` (or, with `stream`, its
//!   `chat.completion.chunk`s, `data: [DONE]` last; `stream_options.
//!   include_usage` adds the usage chunk): the final answer's text, the
//!   finish reason, the usage in OpenAI's fields. A run that waits for a
//!   person's decision ends with `finish_reason: "stop"` and a message
//!   saying so; it is decided in the inbox or with `POST
//!   /v1/runs/{id}/decisions` (a stateless one sends back the signed
//!   `parlance.paused`). Each answer carries `parlance: {run_id,
//!   thread_id, status, pending}` beside OpenAI's fields. A run that fails
//!   is `422` with the run's error (not `5xx`: the SDK would run it again).

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures::StreamExt;
use parlance_agent::{Agent, RunEvent};
use parlance_format::{FinishReason, Message, Response, Role, RunStatus, Turn, Usage};
use parlance_runtime::ResumeError;
use serde_json::{Value, json};

use crate::api::{outbound, owned_thread};
use crate::auth::Principal;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;

/// The header that puts a run on a stored thread.
pub const THREAD_HEADER: &str = "x-parlance-thread";

/// What the request asks, read and checked.
struct Ask {
    agent: String,
    history: Vec<Message>,
    input: Vec<Message>,
    stream: bool,
    include_usage: bool,
}

/// The configured agent a request names as its `model`.
pub(super) fn agent_named(state: &AppState, body: &Value) -> Result<String, ApiError> {
    let agent = body.get("model").and_then(Value::as_str).ok_or_else(|| {
        ApiError::invalid_request("model: required: the name of an agent of this server")
    })?;
    if !state.agents.contains_key(agent) {
        let mut known: Vec<&str> = state.agents.keys().map(String::as_str).collect();
        known.sort_unstable();
        return Err(ApiError::not_found(&format!(
            "model {agent:?} (the agents of this server: {})",
            known.join(", ")
        )));
    }
    Ok(agent.to_string())
}

/// A request's own `tools` are refused: the agent's run on the server.
pub(super) fn no_tools(body: &Value) -> Result<(), ApiError> {
    if body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty())
    {
        return Err(ApiError::invalid_request(
            "tools: the agent's own tools run on the server; a request's tools would never be called (leave them out)",
        ));
    }
    Ok(())
}

/// A request's messages split into the earlier turns and the run's input
/// (the trailing user messages); `refusal` when it ends with no user's.
pub(super) fn split_input(
    mut messages: Vec<Message>,
    refusal: &str,
) -> Result<(Vec<Message>, Vec<Message>), ApiError> {
    let first_input = messages
        .iter()
        .rposition(|m| m.role != Role::User)
        .map_or(0, |i| i + 1);
    if first_input == messages.len() {
        return Err(ApiError::invalid_request(refusal));
    }
    let input = messages.split_off(first_input);
    Ok((messages, input))
}

fn read(state: &AppState, body: &Value) -> Result<Ask, ApiError> {
    let agent = agent_named(state, body)?;
    no_tools(body)?;
    let decoded = parlance_providers::openai_chat::decode_request(body)
        .map_err(|e| ApiError::invalid_request(e.to_string()))?;
    let (messages, input) = split_input(
        decoded.request.messages,
        "messages: the last message must be the user's (it is the run's input)",
    )?;
    Ok(Ask {
        agent,
        history: messages,
        input,
        stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
        include_usage: body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

/// `POST /v1/chat/completions`.
pub async fn chat_completions(
    State(state): State<Arc<AppState>>,
    who: Principal,
    headers: HeaderMap,
    JsonBody(body): JsonBody<Value>,
) -> Result<HttpResponse, ApiError> {
    let ask = read(&state, &body)?;
    let agent = state.agents[&ask.agent].clone();
    let agent_of_answer = agent.clone();
    let thread = match headers.get(THREAD_HEADER) {
        None => None,
        Some(v) => {
            let id = v.to_str().map_err(|_| {
                ApiError::invalid_request(format!("{THREAD_HEADER}: not a thread id"))
            })?;
            owned_thread(&state, &who, id).await?;
            Some(id.to_string())
        }
    };
    let id = parlance_format::new_id("chatcmpl");
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let head = Head {
        id,
        created,
        model: ask.agent.clone(),
    };
    if ask.stream {
        let events = match &thread {
            Some(t) => state
                .runner(agent)
                .start(t, ask.input, true)
                .await?
                .events()
                .boxed(),
            None => agent
                .run(ask.input)
                .turns([Turn {
                    messages: ask.history,
                }])
                .stream()
                .boxed(),
        };
        return Ok(stream(
            state,
            who,
            head,
            agent_of_answer,
            events,
            ask.include_usage,
        ));
    }
    let r = match &thread {
        Some(t) => {
            let handle = state.runner(agent).start(t, ask.input, false).await?;
            match handle.outcome().await {
                Ok(r) => r,
                Err(ResumeError::Store(e)) => return Err(e.into()),
                Err(ResumeError::Decision(e)) => {
                    return Err(ApiError::invalid_decision(e.to_string()));
                }
            }
        }
        None => {
            agent
                .run(ask.input)
                .turns([Turn {
                    messages: ask.history,
                }])
                .await
        }
    };
    if r.status == RunStatus::Failed {
        return Err(failed(&state, &r));
    }
    let message = json!({"role": "assistant", "content": content(&state, &r), "refusal": null});
    let mut answer = head.object("chat.completion");
    answer["choices"] =
        json!([{"index": 0, "message": message, "finish_reason": finish(&r), "logprobs": null}]);
    answer["usage"] = usage(&r.usage);
    answer["parlance"] = extension(&state, &who, &agent_of_answer, &r);
    Ok(Json(answer).into_response())
}

/// What every object of one answer shares.
struct Head {
    id: String,
    created: u64,
    model: String,
}

impl Head {
    fn object(&self, object: &str) -> Value {
        json!({"id": self.id, "object": object, "created": self.created, "model": self.model})
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        let mut c = self.object("chat.completion.chunk");
        c["choices"] =
            json!([{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}]);
        c
    }
}

/// A failed run: `422` with its error.
pub(super) fn failed(state: &AppState, r: &Response) -> ApiError {
    let (code, message) = r.error.as_ref().map_or(("failed", "the run failed"), |e| {
        (e.code.as_str(), e.message.as_str())
    });
    let text = format!(
        "the run failed ({code}): {message}{}",
        r.id.as_deref()
            .map(|id| format!(" (run {id})"))
            .unwrap_or_default()
    );
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "run_failed",
        state.redactor.redact(&text).into_owned(),
    )
}

/// The answer's text; for a run that waits for decisions, where to decide.
pub(super) fn content(state: &AppState, r: &Response) -> String {
    let text = match r.status {
        RunStatus::RequiresApproval => {
            let names: Vec<&str> = r.pending.iter().map(|p| p.name.as_str()).collect();
            let id = r.id.as_deref().unwrap_or("?");
            let how = match r.thread_id {
                Some(_) => "in the inbox or with POST /v1/runs/{id}/decisions",
                None => "with POST /v1/runs/{id}/decisions, sending back parlance.paused",
            };
            format!(
                "This request waits for a person's decision on {} (run {id}): decide it {}.",
                names.join(", "),
                how.replace("{id}", id),
            )
        }
        _ => r.text(),
    };
    state.redactor.redact(&text).into_owned()
}

fn finish(r: &Response) -> &'static str {
    match r.finish_reason {
        Some(FinishReason::Length) => "length",
        Some(FinishReason::ContentFilter) => "content_filter",
        _ => "stop",
    }
}

fn usage(u: &Usage) -> Value {
    let mut v = json!({
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cached_tokens},
    });
    if let Some(r) = u.reasoning_tokens {
        v["completion_tokens_details"] = json!({"reasoning_tokens": r});
    }
    v
}

/// What Parlance adds beside OpenAI's fields: where the run is, and for
/// a stateless run that waits, its paused response, signed, to send back
/// with the decisions (`POST /v1/runs/{id}/decisions` with `paused`).
pub(super) fn extension(state: &AppState, who: &Principal, agent: &Agent, r: &Response) -> Value {
    let mut v = outbound(
        state,
        who,
        json!({
            "run_id": r.id,
            "thread_id": r.thread_id,
            "status": r.status,
            "pending": r.pending,
        }),
    );
    if r.status == RunStatus::RequiresApproval && r.thread_id.is_none() {
        v["paused"] = crate::runs::stateless(state, who, agent, r);
    }
    v
}

/// The run's events as `chat.completion.chunk`s: the role first, the
/// answer's text as it comes, the finish reason, the usage when asked,
/// `[DONE]`. A run that fails mid-stream ends with OpenAI's error event.
fn stream(
    state: Arc<AppState>,
    who: Principal,
    head: Head,
    agent: Agent,
    events: futures::stream::BoxStream<'static, RunEvent>,
    include_usage: bool,
) -> HttpResponse {
    let first =
        futures::stream::iter([head.chunk(json!({"role": "assistant", "content": ""}), None)]);
    let body = events.flat_map(move |e| {
        let out: Vec<Value> = match e {
            RunEvent::TextDelta(t) if !t.is_empty() => {
                vec![head.chunk(json!({"content": state.redactor.redact(&t)}), None)]
            }
            RunEvent::RunCompleted(r) if r.status == RunStatus::Failed => {
                let e = failed(&state, &r);
                vec![json!({"error": {"message": e.message, "type": "run_failed", "code": r.error.as_ref().map(|e| e.code.clone())}})]
            }
            RunEvent::RunCompleted(r) => {
                let mut out = Vec::new();
                if r.status == RunStatus::RequiresApproval {
                    out.push(head.chunk(json!({"content": content(&state, &r)}), None));
                }
                let mut last = head.chunk(json!({}), Some(finish(&r)));
                last["parlance"] = extension(&state, &who, &agent, &r);
                out.push(last);
                if include_usage {
                    let mut u = head.object("chat.completion.chunk");
                    u["choices"] = json!([]);
                    u["usage"] = usage(&r.usage);
                    out.push(u);
                }
                out
            }
            _ => Vec::new(),
        };
        futures::stream::iter(out)
    });
    let data = first
        .chain(body)
        .map(|v| Event::default().data(v.to_string()))
        .chain(futures::stream::iter([Event::default().data("[DONE]")]))
        .map(Ok::<_, Infallible>);
    Sse::new(data).into_response()
}
