//! The Vercel AI SDK's UI message stream, served: what `useChat` (and its
//! `DefaultChatTransport`, or `AbstractChat` without React) reads.
//!
//! - `POST /v1/agents/{agent}/chat` with the SDK's body (`{id, messages,
//!   trigger}`): the chat's `id` is a thread of the caller (`POST
//!   /v1/threads`), which holds the history: of `messages`, the server
//!   reads the last one only. A user message is a new run on the thread;
//!   an assistant message whose tool parts were answered (approved or
//!   denied with `addToolApprovalResponse`, or given an output with
//!   `addToolOutput`) decides the thread's waiting run, which resumes.
//! - The answer is the SDK's stream (`x-vercel-ai-ui-message-stream: v1`,
//!   `data:` chunks ending with `[DONE]`): `start` (its `messageId` is the
//!   run's id), `start-step`/`finish-step` around each model call,
//!   `text-*`, `reasoning-*`, `tool-input-available`,
//!   `tool-output-available`/`-error`/`-denied`, `tool-approval-request`
//!   (its `approvalId` is the request's digest), then `finish` (with
//!   `messageMetadata.parlance = {run_id, thread_id, status, usage}`) or
//!   `error`.
//! - `GET /v1/agents/{agent}/chat/{id}/stream` (the SDK's `resumeStream`):
//!   the thread's running run replayed from its start, then live; `204`
//!   when none runs.
//! - `GET /v1/threads/{id}/ui-messages`: the stored thread as
//!   `UIMessage[]`, to start `useChat` with.
//!
//! Decisions beyond approve and deny, as extensions of a tool part: an
//! `approval` with `approved: true` and `editedInput` runs the call with
//! those arguments instead (edited); a part in state `output-available`
//! whose call was waiting is the person's answer (answered).
//!
//! The translation ([`UiStream`], [`ui_messages`], [`decisions`],
//! [`user_input`]) is pure; the handlers only read and start runs.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures::{Stream, StreamExt};
use parlance_agent::RunEvent;
use parlance_format::{
    ApprovalRequest, Block, Decision, DecisionKind, Message, Role, ToolResult, ToolStatus,
};
use parlance_store::StoredMessage;
use serde_json::{Value, json};

use crate::api::{outbound, owned_thread};
use crate::auth::Principal;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;
use crate::streams::{EventId, RunItem};

/// The header that tells the SDK this is its stream.
pub const STREAM_HEADER: &str = "x-vercel-ai-ui-message-stream";

/// Turns a run's events into the UI message stream's chunks.
#[derive(Debug, Default)]
pub struct UiStream {
    /// The text part open now, by id.
    text: Option<String>,
    /// The reasoning part open now, by id.
    reasoning: Option<String>,
    /// Whether a step is open.
    step: bool,
    /// Whether the message being written was streamed (its deltas sent).
    streamed: bool,
    /// Parts opened so far (their ids).
    parts: u32,
}

impl UiStream {
    /// A translator for one response stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// The first chunk: the assistant message this stream writes (the
    /// run's id, so that a resumed run goes on in the same message).
    pub fn start(run_id: &str) -> Value {
        json!({"type": "start", "messageId": run_id})
    }

    /// The chunks of one of the run's events.
    pub fn event(&mut self, e: &RunEvent) -> Vec<Value> {
        let mut out = Vec::new();
        match e {
            RunEvent::TextDelta(t) if !t.is_empty() => {
                self.open_step(&mut out);
                self.close_reasoning(&mut out);
                let id = match &self.text {
                    Some(id) => id.clone(),
                    None => {
                        let id = self.next_id("text");
                        out.push(json!({"type": "text-start", "id": id}));
                        self.text = Some(id.clone());
                        id
                    }
                };
                out.push(json!({"type": "text-delta", "id": id, "delta": t}));
                self.streamed = true;
            }
            RunEvent::ThinkingDelta(t) if !t.is_empty() => {
                self.open_step(&mut out);
                self.close_text(&mut out);
                let id = match &self.reasoning {
                    Some(id) => id.clone(),
                    None => {
                        let id = self.next_id("reasoning");
                        out.push(json!({"type": "reasoning-start", "id": id}));
                        self.reasoning = Some(id.clone());
                        id
                    }
                };
                out.push(json!({"type": "reasoning-delta", "id": id, "delta": t}));
                self.streamed = true;
            }
            RunEvent::MessageCompleted(m) => out = self.message(m),
            RunEvent::RunCompleted(r) => {
                let error = r
                    .error
                    .as_ref()
                    .map(|e| serde_json::to_value(e).expect("json"));
                let meta = json!({
                    "run_id": r.id, "thread_id": r.thread_id,
                    "status": r.status.as_str(), "usage": r.usage,
                });
                out = self.stopped(r.status.as_str(), error.as_ref(), meta);
            }
            _ => {}
        }
        out
    }

    /// The chunks of a committed message: after its deltas, what they
    /// did not say (its calls); else, all of it (a message replayed from
    /// the store).
    pub fn message(&mut self, m: &Message) -> Vec<Value> {
        let mut out = Vec::new();
        match m.role {
            Role::Assistant => {
                self.open_step(&mut out);
                if !std::mem::take(&mut self.streamed) {
                    for b in &m.content {
                        match b {
                            Block::Thinking(t) if !t.thinking.is_empty() => {
                                self.close_text(&mut out);
                                self.whole(&mut out, "reasoning", &t.thinking);
                            }
                            Block::Text(t) if !t.text.is_empty() => {
                                self.close_reasoning(&mut out);
                                self.whole(&mut out, "text", &t.text);
                            }
                            _ => {}
                        }
                    }
                }
                self.close_text(&mut out);
                self.close_reasoning(&mut out);
                let mut calls = false;
                for c in m.tool_calls() {
                    calls = true;
                    out.push(json!({"type": "tool-input-available", "toolCallId": c.id,
                        "toolName": c.name, "input": c.arguments}));
                }
                if !calls {
                    self.close_step(&mut out);
                }
            }
            Role::Tool => {
                for b in &m.content {
                    match b {
                        Block::ToolResult { tool_result } => out.push(output_chunk(tool_result)),
                        Block::ApprovalRequest { approval_request } => out.push(json!({
                            "type": "tool-approval-request",
                            "approvalId": approval_request.digest,
                            "toolCallId": approval_request.tool_call_id,
                        })),
                        _ => {}
                    }
                }
                self.close_step(&mut out);
            }
            // The input, and what the engine tells the model (an output
            // retry): not the assistant's.
            _ => {}
        }
        out
    }

    /// The last chunks: how the run stopped.
    pub fn stopped(&mut self, status: &str, error: Option<&Value>, meta: Value) -> Vec<Value> {
        let mut out = Vec::new();
        self.close_step(&mut out);
        let meta = json!({"parlance": meta});
        match status {
            "completed" => {
                out.push(json!({"type": "finish", "finishReason": "stop", "messageMetadata": meta}))
            }
            "requires_approval" => out.push(
                json!({"type": "finish", "finishReason": "tool-calls", "messageMetadata": meta}),
            ),
            _ => {
                let code = error.and_then(|e| e["code"].as_str()).unwrap_or("failed");
                let message = error
                    .and_then(|e| e["message"].as_str())
                    .unwrap_or("the run did not complete");
                out.push(json!({"type": "error", "errorText": format!("{code}: {message}")}));
            }
        }
        out
    }

    fn next_id(&mut self, kind: &str) -> String {
        self.parts += 1;
        format!("{kind}-{}", self.parts)
    }

    fn whole(&mut self, out: &mut Vec<Value>, kind: &str, text: &str) {
        let id = self.next_id(kind);
        out.push(json!({"type": format!("{kind}-start"), "id": id}));
        out.push(json!({"type": format!("{kind}-delta"), "id": id, "delta": text}));
        out.push(json!({"type": format!("{kind}-end"), "id": id}));
    }

    fn open_step(&mut self, out: &mut Vec<Value>) {
        if !self.step {
            out.push(json!({"type": "start-step"}));
            self.step = true;
        }
    }

    fn close_text(&mut self, out: &mut Vec<Value>) {
        if let Some(id) = self.text.take() {
            out.push(json!({"type": "text-end", "id": id}));
        }
    }

    fn close_reasoning(&mut self, out: &mut Vec<Value>) {
        if let Some(id) = self.reasoning.take() {
            out.push(json!({"type": "reasoning-end", "id": id}));
        }
    }

    fn close_step(&mut self, out: &mut Vec<Value>) {
        self.close_text(out);
        self.close_reasoning(out);
        if std::mem::take(&mut self.step) {
            out.push(json!({"type": "finish-step"}));
        }
    }
}

/// A tool result's chunk: its output, its error, or its denial.
fn output_chunk(r: &ToolResult) -> Value {
    match r.status {
        ToolStatus::Ok => {
            json!({"type": "tool-output-available", "toolCallId": r.tool_call_id, "output": output_of(r)})
        }
        ToolStatus::Rejected => json!({"type": "tool-output-denied", "toolCallId": r.tool_call_id}),
        _ => json!({"type": "tool-output-error", "toolCallId": r.tool_call_id,
            "errorText": format!("{}: {}", r.status.as_str(), text_of(&r.content))}),
    }
}

/// A result's content as the SDK's `output`: its JSON value, its text,
/// or its blocks.
fn output_of(r: &ToolResult) -> Value {
    match r.content.as_slice() {
        [Block::Json { json }] => json.clone(),
        blocks if blocks.iter().all(|b| matches!(b, Block::Text(_))) => {
            Value::String(text_of(blocks))
        }
        blocks => serde_json::to_value(blocks).expect("json"),
    }
}

fn text_of(blocks: &[Block]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

/// A stored thread as the SDK's `UIMessage[]`: each user message as one;
/// each run's assistant and tool messages folded into one assistant
/// message (a `step-start` part per model call; a tool part per call, in
/// the state its result left it), whose id is the run's.
pub fn ui_messages(stored: &[StoredMessage]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut assistant: Option<Value> = None;
    for m in stored {
        match m.message.role {
            Role::User if !is_engines(&m.message) => {
                out.extend(assistant.take());
                let parts: Vec<Value> = m
                    .message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        Block::Text(t) => Some(json!({"type": "text", "text": t.text})),
                        _ => None,
                    })
                    .collect();
                out.push(json!({"id": format!("msg-{}", m.seq), "role": "user", "parts": parts}));
            }
            Role::Assistant => {
                let id = m.run_id.clone().unwrap_or_else(|| format!("msg-{}", m.seq));
                if assistant.as_ref().is_some_and(|a| a["id"] != id.as_str()) {
                    out.extend(assistant.take());
                }
                let a = assistant
                    .get_or_insert_with(|| json!({"id": id, "role": "assistant", "parts": []}));
                let parts = a["parts"].as_array_mut().expect("parts");
                parts.push(json!({"type": "step-start"}));
                for b in &m.message.content {
                    match b {
                        Block::Thinking(t) if !t.thinking.is_empty() => parts.push(
                            json!({"type": "reasoning", "text": t.thinking, "state": "done"}),
                        ),
                        Block::Text(t) if !t.text.is_empty() => {
                            parts.push(json!({"type": "text", "text": t.text, "state": "done"}))
                        }
                        Block::ToolCall { tool_call } => parts.push(json!({
                            "type": format!("tool-{}", tool_call.name),
                            "toolCallId": tool_call.id,
                            "state": "input-available",
                            "input": tool_call.arguments,
                        })),
                        _ => {}
                    }
                }
            }
            Role::Tool => {
                let Some(a) = assistant.as_mut() else {
                    continue;
                };
                let parts = a["parts"].as_array_mut().expect("parts");
                for b in &m.message.content {
                    let (id, update) = match b {
                        Block::ToolResult { tool_result: r } => (&r.tool_call_id, settled(r)),
                        Block::ApprovalRequest {
                            approval_request: r,
                        } => (
                            &r.tool_call_id,
                            json!({"state": "approval-requested", "approval": {"id": r.digest}}),
                        ),
                        _ => continue,
                    };
                    if let Some(part) = parts
                        .iter_mut()
                        .rev()
                        .find(|p| p["toolCallId"] == id.as_str())
                        && let (Some(part), Some(update)) =
                            (part.as_object_mut(), update.as_object())
                    {
                        part.extend(update.clone());
                    }
                }
            }
            _ => {}
        }
    }
    out.extend(assistant);
    out
}

/// A tool part's fields once its call has a result; a decided call's
/// `approval` (its request's digest is gone with the request: the call's
/// id stands for it).
fn settled(r: &ToolResult) -> Value {
    let mut fields = match r.status {
        ToolStatus::Ok => json!({"state": "output-available", "output": output_of(r)}),
        ToolStatus::Rejected => json!({"state": "output-denied"}),
        _ => json!({"state": "output-error",
            "errorText": format!("{}: {}", r.status.as_str(), text_of(&r.content))}),
    };
    if let Some(a) = &r.approval
        && a.decision != DecisionKind::Answered
    {
        let approved = a.decision != DecisionKind::Rejected;
        fields["approval"] = json!({"id": r.tool_call_id, "approved": approved});
        if let Some(reason) = &a.reason {
            fields["approval"]["reason"] = json!(reason);
        }
    }
    fields
}

/// A user message the engine wrote (an output retry), not a person.
fn is_engines(m: &Message) -> bool {
    m.metadata
        .as_ref()
        .is_some_and(|d| d.contains_key("output_retry"))
}

/// The run's input from the SDK's last message (a user's): its text
/// parts. `at` is where it is in the request (`messages[N]`).
pub fn user_input(message: &Value, at: &str) -> Result<Vec<Message>, String> {
    let parts = message["parts"]
        .as_array()
        .ok_or_else(|| format!("{at}.parts: required (an array of parts)"))?;
    let mut blocks = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        match p["type"].as_str() {
            Some("text") => {
                let text = p["text"]
                    .as_str()
                    .ok_or_else(|| format!("{at}.parts[{i}].text: required (a string)"))?;
                blocks.push(Block::text(text));
            }
            // Parts the UI keeps for itself.
            Some("step-start") => {}
            Some(t) if t.starts_with("data-") => {}
            Some(other) => {
                return Err(format!(
                    "{at}.parts[{i}].type: {other:?} is not supported in a user message (text parts only)"
                ));
            }
            None => return Err(format!("{at}.parts[{i}].type: required")),
        }
    }
    if blocks.is_empty() {
        return Err(format!("{at}.parts: no text part (nothing to ask)"));
    }
    Ok(vec![Message::new(Role::User, blocks)])
}

/// The decisions an assistant message carries for `pending` (the calls
/// the run waits for), read from its tool parts; `at` is where it is in
/// the request.
pub fn decisions(
    message: &Value,
    pending: &[ApprovalRequest],
    at: &str,
) -> Result<Vec<Decision>, String> {
    let parts = message["parts"]
        .as_array()
        .ok_or_else(|| format!("{at}.parts: required (an array of parts)"))?;
    let mut out = Vec::new();
    for p in pending {
        let Some((i, part)) = parts
            .iter()
            .enumerate()
            .find(|(_, part)| part["toolCallId"] == p.tool_call_id.as_str())
        else {
            return Err(format!(
                "{at}.parts: no part for call {:?} ({}), which waits for a decision",
                p.tool_call_id, p.name
            ));
        };
        let here = format!("{at}.parts[{i}]");
        let decision = |kind| super::decision(p, kind);
        let d = match part["state"].as_str() {
            Some("approval-responded") => {
                let approval = &part["approval"];
                if approval["id"] != p.digest.as_str() {
                    return Err(format!(
                        "{here}.approval.id: not the id of the request it answers (the run's request changed, or the part belongs to another run)"
                    ));
                }
                match (approval["approved"].as_bool(), approval.get("editedInput")) {
                    (Some(true), None) => decision(DecisionKind::Approved),
                    (Some(true), Some(input)) => Decision {
                        arguments: Some(input.clone()),
                        ..decision(DecisionKind::Edited)
                    },
                    (Some(false), _) => Decision {
                        reason: Some(
                            approval["reason"]
                                .as_str()
                                .unwrap_or("the person denied it")
                                .to_string(),
                        ),
                        ..decision(DecisionKind::Rejected)
                    },
                    (None, _) => {
                        return Err(format!(
                            "{here}.approval.approved: required (true or false)"
                        ));
                    }
                }
            }
            Some("output-available") => {
                let content = match &part["output"] {
                    Value::String(s) => vec![Block::text(s.as_str())],
                    Value::Null => {
                        return Err(format!("{here}.output: required (the answer)"));
                    }
                    other => vec![Block::Json {
                        json: other.clone(),
                    }],
                };
                Decision {
                    content: Some(content),
                    ..decision(DecisionKind::Answered)
                }
            }
            Some(state) => {
                return Err(format!(
                    "{here}.state: {state:?}: call {:?} waits for a decision (approval-responded, or output-available with the answer)",
                    p.tool_call_id
                ));
            }
            None => return Err(format!("{here}.state: required")),
        };
        out.push(d);
    }
    Ok(out)
}

/// `POST /v1/agents/{agent}/chat`: a turn of `useChat`.
pub async fn chat(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(name): Path<String>,
    JsonBody(body): JsonBody<Value>,
) -> Result<HttpResponse, ApiError> {
    let agent = super::configured(&state, &name)?;
    let chat = body["id"].as_str().ok_or_else(|| {
        ApiError::invalid_request(
            "id: required (the chat's id: a thread of yours, from POST /v1/threads)",
        )
    })?;
    let messages = body["messages"]
        .as_array()
        .filter(|m| !m.is_empty())
        .ok_or_else(|| ApiError::invalid_request("messages: required (a non-empty array)"))?;
    match body.get("trigger").and_then(Value::as_str) {
        None | Some("submit-message") => {}
        Some(other) => {
            return Err(ApiError::invalid_request(format!(
                "trigger: {other:?} is not supported (submit-message only: a thread keeps every answer; to try a failed run again, POST /v1/threads/{{id}}/retry)"
            )));
        }
    }
    owned_thread(&state, &who, chat).await?;
    let at = format!("messages[{}]", messages.len() - 1);
    let last = messages.last().expect("not empty");
    let runner = state.runner(agent);
    let handle = match last["role"].as_str() {
        Some("user") => {
            let input = user_input(last, &at).map_err(ApiError::invalid_request)?;
            runner.start(chat, input, true).await?
        }
        Some("assistant") => {
            let run = super::waiting_run(
                &state,
                chat,
                &name,
                "the last message is the assistant's: it answers approvals",
            )
            .await?;
            let pending = super::waiting_calls(&state, &run).await?;
            let decided = decisions(last, &pending, &at).map_err(ApiError::invalid_decision)?;
            runner.start_resume(&run.id, decided, true).await?
        }
        _ => {
            return Err(ApiError::invalid_request(format!(
                "{at}.role: the last message must be the user's (a new turn) or the assistant's (decisions)"
            )));
        }
    };
    let run_id = handle.run_id.clone();
    let items: futures::stream::BoxStream<'static, RunItem> = match state.live.adopt(handle) {
        Ok(live) => {
            live.started().await.map_err(crate::runs::resume_error)?;
            live.follow(0).map(|(id, e)| RunItem::Live(id, e)).boxed()
        }
        Err(handle) => handle
            .events()
            .map(|e| RunItem::Live(EventId::default(), e))
            .boxed(),
    };
    Ok(ui_response(state, who, &run_id, items))
}

/// `GET /v1/agents/{agent}/chat/{id}/stream`: the thread's running run,
/// replayed from its start (the SDK replaces the message it was writing),
/// then live; `204` when none runs.
pub async fn reconnect(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path((_name, chat)): Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    owned_thread(&state, &who, &chat).await?;
    let Some(run) = state.store.runs(&chat).await?.pop() else {
        return Ok(StatusCode::NO_CONTENT.into_response());
    };
    if run.status != "running" {
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    let items = crate::streams::items(state.clone(), run.id.clone(), EventId::default()).boxed();
    Ok(ui_response(state, who, &run.id, items))
}

/// `GET /v1/threads/{id}/ui-messages`: a thread as `UIMessage[]`.
pub async fn thread_messages(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(thread): Path<String>,
) -> Result<HttpResponse, ApiError> {
    owned_thread(&state, &who, &thread).await?;
    let stored = state.store.all_messages(&thread).await?;
    let messages = Value::Array(ui_messages(&stored));
    Ok(axum::Json(outbound(&state, &who, messages)).into_response())
}

/// The SDK's stream of `items`: `start`, their chunks, `[DONE]`.
fn ui_response(
    state: Arc<AppState>,
    who: Principal,
    run_id: &str,
    items: impl Stream<Item = RunItem> + Send + 'static,
) -> HttpResponse {
    let mut ui = UiStream::new();
    let start = UiStream::start(run_id);
    let chunks = items.map(move |item| match item {
        RunItem::Live(_, e) => ui.event(&e),
        RunItem::Stored(m) => ui.message(&m.message),
        RunItem::Stopped(r) => {
            let meta = json!({"run_id": r.id, "thread_id": r.thread_id, "status": r.status, "usage": r.usage.unwrap_or_default()});
            ui.stopped(&r.status, r.error.as_ref(), meta)
        }
        RunItem::Failed(message) => vec![json!({"type": "error", "errorText": message})],
    });
    let events = futures::stream::iter([vec![start]])
        .chain(chunks)
        .flat_map(futures::stream::iter)
        .map(move |chunk| Event::default().data(outbound(&state, &who, chunk).to_string()))
        .chain(futures::stream::iter([Event::default().data("[DONE]")]));
    let mut response = Sse::new(events.map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::default())
        .into_response();
    response
        .headers_mut()
        .insert(STREAM_HEADER, HeaderValue::from_static("v1"));
    response
}

#[cfg(test)]
#[path = "ai_sdk_tests.rs"]
mod tests;
