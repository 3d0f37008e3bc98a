//! OpenAI's Responses API, served: `POST /v1/responses` with `model` = the
//! name of a configured agent.
//!
//! - `input` (a string or items) is read by the OpenAI Responses provider's
//!   own request decoder; the trailing user messages are the run's input.
//!   The agent's tools run on the server: a request's `tools` are refused.
//! - Conversations are threads. A response's `id` is its run's id; by
//!   default (`store`, as OpenAI's, defaults to true) each new conversation
//!   is a thread of the caller, so `previous_response_id` = an earlier
//!   response's id goes on in that run's thread (only the new input is
//!   sent; the history comes from the store). `store: false` runs
//!   stateless, with the request's items before the input as its earlier
//!   turns and its `instructions` after the agent's (on a thread, a
//!   request's `instructions` are refused: the agent's apply).
//! - The answer is a `response` object with one `message` output item (the
//!   final answer as `output_text`) and OpenAI's usage fields; streamed,
//!   the whole event sequence (`response.created`, `response.in_progress`,
//!   `response.output_item.added`, `response.content_part.added`,
//!   `response.output_text.delta`..., `response.output_text.done`,
//!   `response.content_part.done`, `response.output_item.done`,
//!   `response.completed`, each with its `sequence_number`), so that the
//!   SDKs' `responses.stream()` assemble it. A run that waits for a
//!   decision completes with a message saying where to decide; a failed run
//!   is `422` (streamed: `response.failed`). `parlance: {run_id, thread_id,
//!   status, pending}` rides beside OpenAI's fields.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures::StreamExt;
use parlance_agent::{Agent, RunEvent};
use parlance_format::{Message, Response, RunStatus, Turn};
use parlance_runtime::ResumeError;
use serde_json::{Value, json};

use super::openai_chat::{content, extension, failed};
use crate::api::{outbound, owned_thread};
use crate::auth::Principal;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;

/// Where the run goes.
enum Place {
    /// Stateless: earlier turns from the request.
    Stateless(Vec<Message>),
    /// On a stored thread.
    Thread(String),
}

/// `POST /v1/responses`.
pub async fn responses(
    State(state): State<Arc<AppState>>,
    who: Principal,
    JsonBody(body): JsonBody<Value>,
) -> Result<HttpResponse, ApiError> {
    let name = super::openai_chat::agent_named(&state, &body)?;
    super::openai_chat::no_tools(&body)?;
    let agent = state.agents[&name].clone();
    let decoded = parlance_providers::openai_responses::decode_request(&body)
        .map_err(|e| ApiError::invalid_request(e.to_string()))?;
    let (messages, input) = super::openai_chat::split_input(
        decoded.request.messages,
        "input: the last item must be the user's (it is the run's input)",
    )?;
    let previous = body.get("previous_response_id").and_then(Value::as_str);
    let store = body.get("store").and_then(Value::as_bool).unwrap_or(true);
    let place = match (previous, store) {
        (Some(run), _) => {
            let record = state
                .store
                .run(run)
                .await
                .map_err(|_| ApiError::not_found(&format!("response {run}")))?;
            owned_thread(&state, &who, &record.thread_id)
                .await
                .map_err(|_| ApiError::not_found(&format!("response {run}")))?;
            Place::Thread(record.thread_id)
        }
        (None, true) => {
            let t = state
                .store
                .create_thread(
                    who.subject.as_deref(),
                    json!({"created_by": "openai_responses"}),
                )
                .await?;
            Place::Thread(t.id)
        }
        (None, false) => Place::Stateless(messages.clone()),
    };
    if matches!(place, Place::Thread(_)) && !messages.is_empty() {
        return Err(ApiError::invalid_request(
            "instructions, input: on a stored conversation only the new user input is sent (the agent's instructions apply; the history comes from the store): leave out instructions and earlier items, or set store: false",
        ));
    }
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if stream {
        let (events, thread, id) = match place {
            Place::Thread(t) => {
                let h = state.runner(agent.clone()).start(&t, input, true).await?;
                let id = h.run_id.clone();
                // Kept while it runs, for `retrieve` with `starting_after`.
                let events = match state.live.adopt(h) {
                    Ok(live) => live.follow(0).map(|(_, e)| e).boxed(),
                    Err(h) => h.events().boxed(),
                };
                (events, Some(t), id)
            }
            Place::Stateless(history) => {
                let id = parlance_format::new_id("run");
                let events = agent
                    .run(input)
                    .id(&id)
                    .turns([Turn { messages: history }])
                    .stream()
                    .boxed();
                (events, None, id)
            }
        };
        let frame = Frame {
            created,
            model: name,
            previous: previous.map(str::to_string),
            thread,
        };
        return Ok(streamed(state, who, agent, frame, id, events, None));
    }
    let (r, thread) = match place {
        Place::Thread(t) => {
            let h = state.runner(agent.clone()).start(&t, input, false).await?;
            match h.outcome().await {
                Ok(r) => (r, Some(t)),
                Err(ResumeError::Store(e)) => return Err(e.into()),
                Err(ResumeError::Decision(e)) => {
                    return Err(ApiError::invalid_decision(e.to_string()));
                }
            }
        }
        Place::Stateless(history) => (
            agent.run(input).turns([Turn { messages: history }]).await,
            None,
        ),
    };
    if r.status == RunStatus::Failed {
        return Err(failed(&state, &r));
    }
    let frame = Frame {
        created,
        model: name,
        previous: previous.map(str::to_string),
        thread,
    };
    let text = content(&state, &r);
    let mut v = frame.response(
        r.id.as_deref().unwrap_or(""),
        "completed",
        vec![item(&r, &text, "completed")],
    );
    v["usage"] = usage(&r);
    v["parlance"] = extension(&state, &who, &agent, &r);
    Ok(Json(v).into_response())
}

/// What every `response` object of one answer shares.
struct Frame {
    created: u64,
    model: String,
    previous: Option<String>,
    thread: Option<String>,
}

impl Frame {
    fn response(&self, id: &str, status: &str, output: Vec<Value>) -> Value {
        let text: String = output
            .iter()
            .flat_map(|i| i["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["text"].as_str().map(str::to_string))
            .collect();
        json!({
            "id": id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "error": null,
            "incomplete_details": null,
            "instructions": null,
            "max_output_tokens": null,
            "model": self.model,
            "output": output,
            "output_text": text,
            "parallel_tool_calls": true,
            "previous_response_id": self.previous,
            "store": self.thread.is_some(),
            "temperature": null,
            "text": {"format": {"type": "text"}},
            "tool_choice": "auto",
            "tools": [],
            "top_p": null,
            "truncation": "disabled",
            "usage": null,
            "metadata": {},
        })
    }
}

/// The id of the run's answer message.
fn message_id(run: &str) -> String {
    format!("msg_{}", run.trim_start_matches("run_"))
}

/// The answer as a `message` output item.
fn item(r: &Response, text: &str, status: &str) -> Value {
    json!({
        "id": message_id(r.id.as_deref().unwrap_or("")),
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    })
}

fn usage(r: &Response) -> Value {
    let u = &r.usage;
    json!({
        "input_tokens": u.input_tokens,
        "input_tokens_details": {"cached_tokens": u.cached_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens.unwrap_or(0)},
        "total_tokens": u.input_tokens + u.output_tokens,
    })
}

/// The run's events (run `id`, the response's) as the Responses API's
/// streaming events.
fn streamed(
    state: Arc<AppState>,
    who: Principal,
    agent: Agent,
    frame: Frame,
    id: String,
    events: futures::stream::BoxStream<'static, RunEvent>,
    starting_after: Option<u64>,
) -> HttpResponse {
    let item_id = message_id(&id);
    let mut seq = 0u64;
    let next = move |mut v: Value| {
        v["sequence_number"] = json!(seq);
        seq += 1;
        v
    };
    let mut text = String::new();
    let opening = {
        let r = frame.response(&id, "in_progress", Vec::new());
        let open_item = json!({"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []});
        vec![
            json!({"type": "response.created", "response": r}),
            json!({"type": "response.in_progress", "response": r}),
            json!({"type": "response.output_item.added", "output_index": 0, "item": open_item}),
            json!({"type": "response.content_part.added", "item_id": item_id, "output_index": 0, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}),
        ]
    };
    let body = futures::stream::iter(opening)
        .chain(events.flat_map(move |e| {
            let out: Vec<Value> = match e {
                RunEvent::TextDelta(t) if !t.is_empty() => {
                    let t = state.redactor.redact(&t).into_owned();
                    text.push_str(&t);
                    vec![json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": 0, "content_index": 0, "delta": t, "logprobs": []})]
                }
                RunEvent::RunCompleted(r) if r.status == RunStatus::Failed => {
                    let e = failed(&state, &r);
                    let mut resp = frame.response(r.id.as_deref().unwrap_or(&id), "failed", Vec::new());
                    resp["error"] = json!({"code": "server_error", "message": e.message});
                    resp["parlance"] = extension(&state, &who, &agent, &r);
                    vec![json!({"type": "response.failed", "response": resp})]
                }
                RunEvent::RunCompleted(r) => {
                    let mut out = Vec::new();
                    let full = content(&state, &r);
                    // What the deltas did not say (a waiting run's note, an
                    // answer that was not streamed) is said now.
                    if let Some(rest) = full.strip_prefix(text.as_str()).filter(|s| !s.is_empty()) {
                        out.push(json!({"type": "response.output_text.delta", "item_id": item_id, "output_index": 0, "content_index": 0, "delta": rest, "logprobs": []}));
                    }
                    let part = json!({"type": "output_text", "text": full, "annotations": [], "logprobs": []});
                    out.push(json!({"type": "response.output_text.done", "item_id": item_id, "output_index": 0, "content_index": 0, "text": full, "logprobs": []}));
                    out.push(json!({"type": "response.content_part.done", "item_id": item_id, "output_index": 0, "content_index": 0, "part": part}));
                    let mut done_item = item(&r, &full, "completed");
                    done_item["id"] = json!(item_id);
                    out.push(json!({"type": "response.output_item.done", "output_index": 0, "item": done_item}));
                    let mut resp = frame.response(r.id.as_deref().unwrap_or(&id), "completed", vec![done_item]);
                    resp["usage"] = usage(&r);
                    resp["parlance"] = extension(&state, &who, &agent, &r);
                    out.push(json!({"type": "response.completed", "response": resp}));
                    out
                }
                _ => Vec::new(),
            };
            futures::stream::iter(out)
        }))
        .map(next)
        .filter(move |v| {
            let seen = starting_after.is_some_and(|after| v["sequence_number"].as_u64() <= Some(after));
            futures::future::ready(!seen)
        })
        .map(|v| {
            let name = v["type"].as_str().unwrap_or("message").to_string();
            Ok::<_, Infallible>(Event::default().event(name).data(v.to_string()))
        });
    Sse::new(body).into_response()
}

/// `GET /v1/responses/{id}` query.
#[derive(Debug, serde::Deserialize)]
pub struct Retrieve {
    #[serde(default)]
    stream: bool,
    starting_after: Option<u64>,
}

/// `GET /v1/responses/{id}`: a stored response (a run on a thread), as
/// the Responses API retrieves one; with `stream=true`, its events from
/// the start (`starting_after` skips those a client already has), then
/// live until it ends.
pub async fn retrieve(
    State(state): State<Arc<AppState>>,
    who: Principal,
    axum::extract::Path(id): axum::extract::Path<String>,
    axum::extract::Query(q): axum::extract::Query<Retrieve>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::not_found(&format!("response {id}"));
    let record = state.store.run(&id).await.map_err(|_| not_found())?;
    owned_thread(&state, &who, &record.thread_id)
        .await
        .map_err(|_| not_found())?;
    let name = record.settings["name"].as_str().unwrap_or("").to_string();
    let agent = state.agents.get(&name).cloned().ok_or_else(not_found)?;
    let created = (record.created_at / 1000).max(0) as u64;
    let frame = Frame {
        created,
        model: name,
        previous: None,
        thread: Some(record.thread_id.clone()),
    };
    if q.stream {
        let s = state.clone();
        let events = crate::streams::items(state.clone(), id.clone(), Default::default())
            .then(move |item| {
                let s = s.clone();
                async move {
                    match item {
                        crate::streams::RunItem::Live(_, e) => Some(e),
                        crate::streams::RunItem::Stored(m) => {
                            Some(RunEvent::MessageCompleted(m.message))
                        }
                        crate::streams::RunItem::Stopped(r) => {
                            crate::streams::stored_response(&s, &r)
                                .await
                                .ok()
                                .map(RunEvent::RunCompleted)
                        }
                        crate::streams::RunItem::Failed(_) => None,
                    }
                }
            })
            .filter_map(futures::future::ready)
            .boxed();
        return Ok(streamed(
            state,
            who,
            agent,
            frame,
            id,
            events,
            q.starting_after,
        ));
    }
    if record.status == "running" {
        let mut v = frame.response(&id, "in_progress", Vec::new());
        v["parlance"] = outbound(
            &state,
            &who,
            json!({"run_id": id, "thread_id": record.thread_id, "status": "running", "pending": []}),
        );
        return Ok(Json(v).into_response());
    }
    let r = crate::streams::stored_response(&state, &record)
        .await
        .map_err(ApiError::internal)?;
    let (status, output) = match r.status {
        RunStatus::Failed => ("failed", Vec::new()),
        _ => {
            let text = content(&state, &r);
            ("completed", vec![item(&r, &text, "completed")])
        }
    };
    let mut v = frame.response(&id, status, output);
    if r.status == RunStatus::Failed {
        v["error"] = json!({"code": "server_error", "message": failed(&state, &r).message});
    }
    v["usage"] = usage(&r);
    v["parlance"] = extension(&state, &who, &agent, &r);
    Ok(Json(v).into_response())
}
