//! AG-UI, served: `POST /v1/agents/{agent}/ag-ui` takes the protocol's
//! `RunAgentInput` and answers its events as SSE, what `@ag-ui/client`'s
//! `HttpAgent` (and CopilotKit on top of it) reads.
//!
//! - `threadId` is a thread of the caller (`POST /v1/threads`), which holds
//!   the history: of `messages`, the server reads the last one, the user's
//!   new message (its text). `runId` is the client's: the events echo it,
//!   and Parlance's own run id rides in `RUN_STARTED.metadata.parlance`.
//!   Client-side `tools` are refused: the agent's tools run on the server.
//!   The client's `state` is not written; `STATE_SNAPSHOT` sends the
//!   thread's metadata (the application's data on it).
//! - Events: `RUN_STARTED`, `STATE_SNAPSHOT`, per model call
//!   `STEP_STARTED`/`STEP_FINISHED` (`model_call_N`), `REASONING_*`,
//!   `TEXT_MESSAGE_START/CONTENT/END`, `TOOL_CALL_START/ARGS/END` for each
//!   call, `TOOL_CALL_RESULT` after it ran, then `RUN_FINISHED` (`result`:
//!   the run's output; `usage`) or `RUN_ERROR` (`code`, `message`).
//! - **Approvals are interrupts.** A run that waits for people finishes
//!   with `outcome: {type: "interrupt", interrupts: [...]}`, one per call:
//!   `id` the request's digest, `toolCallId`, `reason: "tool_approval"`, a
//!   `message`, and a `responseSchema` for the decision form — `decision`
//!   (`approved`, `edited`, `rejected`, `answered`), `arguments` (the
//!   tool's own input schema, for an edit), `reason`, `content` (the
//!   answer). The client's next run answers them with `resume: [{interruptId,
//!   status, payload}]`: `resolved` with that payload (no payload:
//!   approved), `cancelled` rejects the call.
//!
//! The translation ([`AgUiStream`], [`decisions`], [`user_input`],
//! [`response_schema`]) is pure.

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use futures::StreamExt;
use parlance_agent::RunEvent;
use parlance_format::{ApprovalRequest, Block, Decision, DecisionKind, Message, Role, ToolStatus};
use serde_json::{Value, json};

use crate::api::{outbound, owned_thread};
use crate::auth::Principal;
use crate::body::JsonBody;
use crate::error::ApiError;
use crate::state::AppState;

/// Turns a run's events into AG-UI events.
#[derive(Debug)]
pub struct AgUiStream {
    thread_id: String,
    /// The client's run id, echoed.
    run_id: String,
    /// The text message open now.
    text: Option<String>,
    /// The reasoning message open now.
    reasoning: Option<String>,
    /// Model calls so far; whether one's step is open.
    steps: u32,
    step_open: bool,
    /// Whether the message being written was streamed.
    streamed: bool,
    /// Messages and parts opened so far (their ids).
    opened: u32,
    /// The last assistant message's id (its calls' parent).
    parent: Option<String>,
}

impl AgUiStream {
    /// A translator for one AG-UI run of `thread_id`, the client's `run_id`.
    pub fn new(thread_id: &str, run_id: &str) -> Self {
        AgUiStream {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            text: None,
            reasoning: None,
            steps: 0,
            step_open: false,
            streamed: false,
            opened: 0,
            parent: None,
        }
    }

    /// The first events: the run started (Parlance's run id in its
    /// metadata), and the thread's data as the state.
    pub fn start(&self, parlance_run: &str, state: &Value) -> Vec<Value> {
        vec![
            json!({"type": "RUN_STARTED", "threadId": self.thread_id, "runId": self.run_id,
                "metadata": {"parlance": {"run_id": parlance_run}}}),
            json!({"type": "STATE_SNAPSHOT", "snapshot": state}),
        ]
    }

    /// The events of one of the run's events; `schema` gives a tool's
    /// input schema (for the decision forms of interrupts).
    pub fn event(&mut self, e: &RunEvent, schema: &dyn Fn(&str) -> Option<Value>) -> Vec<Value> {
        let mut out = Vec::new();
        match e {
            RunEvent::TextDelta(t) if !t.is_empty() => {
                self.open_step(&mut out);
                self.close_reasoning(&mut out);
                let id = self.open_text(&mut out);
                out.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": t}));
                self.streamed = true;
            }
            RunEvent::ThinkingDelta(t) if !t.is_empty() => {
                self.open_step(&mut out);
                self.close_text(&mut out);
                let id = self.open_reasoning(&mut out);
                out.push(json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": id, "delta": t}));
                self.streamed = true;
            }
            RunEvent::MessageCompleted(m) => out = self.message(m),
            RunEvent::RunCompleted(r) => {
                let error = r
                    .error
                    .as_ref()
                    .map(|e| serde_json::to_value(e).expect("json"));
                out = self.stopped(
                    r.status.as_str(),
                    error.as_ref(),
                    &r.output,
                    &r.usage,
                    &r.pending,
                    schema,
                );
            }
            _ => {}
        }
        out
    }

    /// The events of a committed message.
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
                                let id = self.open_reasoning(&mut out);
                                out.push(json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": id, "delta": t.thinking}));
                            }
                            Block::Text(t) if !t.text.is_empty() => {
                                self.close_reasoning(&mut out);
                                let id = self.open_text(&mut out);
                                out.push(json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": id, "delta": t.text}));
                            }
                            _ => {}
                        }
                    }
                }
                self.close_reasoning(&mut out);
                let parent = self.text.clone().or_else(|| self.parent.clone());
                self.close_text(&mut out);
                let parent = parent.unwrap_or_else(|| self.next_id("msg"));
                let mut calls = false;
                for c in m.tool_calls() {
                    calls = true;
                    out.push(json!({"type": "TOOL_CALL_START", "toolCallId": c.id,
                        "toolCallName": c.name, "parentMessageId": parent}));
                    out.push(json!({"type": "TOOL_CALL_ARGS", "toolCallId": c.id,
                        "delta": c.arguments.to_string()}));
                    out.push(json!({"type": "TOOL_CALL_END", "toolCallId": c.id}));
                }
                self.parent = Some(parent);
                if !calls {
                    self.close_step(&mut out);
                }
            }
            Role::Tool => {
                for b in &m.content {
                    if let Block::ToolResult { tool_result: r } = b {
                        let id = self.next_id("result");
                        let text = text_of(&r.content);
                        let mut e = json!({"type": "TOOL_CALL_RESULT", "messageId": id,
                            "toolCallId": r.tool_call_id, "role": "tool", "content": text});
                        if r.status != ToolStatus::Ok {
                            e["content"] = json!(format!("{}: {text}", r.status.as_str()));
                        }
                        out.push(e);
                    }
                }
                self.close_step(&mut out);
            }
            _ => {}
        }
        out
    }

    /// The last event: finished (with its outcome: success, or the
    /// interrupts it waits for) or an error.
    pub fn stopped(
        &mut self,
        status: &str,
        error: Option<&Value>,
        output: &Value,
        usage: &parlance_format::Usage,
        pending: &[ApprovalRequest],
        schema: &dyn Fn(&str) -> Option<Value>,
    ) -> Vec<Value> {
        let mut out = Vec::new();
        self.close_step(&mut out);
        let usage = json!([{
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "totalTokens": usage.input_tokens + usage.output_tokens,
            "cachedInputTokens": usage.cached_tokens,
        }]);
        let finished = |outcome: Value| {
            let mut e = json!({"type": "RUN_FINISHED", "threadId": self.thread_id,
                "runId": self.run_id, "outcome": outcome, "usage": usage});
            if !output.is_null() {
                e["result"] = output.clone();
            }
            e
        };
        match status {
            "completed" => out.push(finished(json!({"type": "success"}))),
            "requires_approval" if !pending.is_empty() => {
                let interrupts: Vec<Value> = pending
                    .iter()
                    .map(|p| {
                        json!({
                            "id": p.digest,
                            "reason": "tool_approval",
                            "message": format!("{} waits for a person's decision", p.name),
                            "toolCallId": p.tool_call_id,
                            "responseSchema": response_schema(schema(&p.name)),
                            "metadata": {"parlance": {"tool": p.name, "arguments": p.arguments}},
                        })
                    })
                    .collect();
                out.push(finished(
                    json!({"type": "interrupt", "interrupts": interrupts}),
                ));
            }
            _ => {
                let code = error.and_then(|e| e["code"].as_str()).unwrap_or("failed");
                let message = error
                    .and_then(|e| e["message"].as_str())
                    .unwrap_or("the run did not complete");
                out.push(json!({"type": "RUN_ERROR", "code": code, "message": message}));
            }
        }
        out
    }

    fn next_id(&mut self, kind: &str) -> String {
        self.opened += 1;
        format!("{kind}-{}-{}", self.run_id, self.opened)
    }

    fn open_step(&mut self, out: &mut Vec<Value>) {
        if !self.step_open {
            self.steps += 1;
            self.step_open = true;
            out.push(
                json!({"type": "STEP_STARTED", "stepName": format!("model_call_{}", self.steps)}),
            );
        }
    }

    fn close_step(&mut self, out: &mut Vec<Value>) {
        self.close_text(out);
        self.close_reasoning(out);
        if std::mem::take(&mut self.step_open) {
            out.push(
                json!({"type": "STEP_FINISHED", "stepName": format!("model_call_{}", self.steps)}),
            );
        }
    }

    fn open_text(&mut self, out: &mut Vec<Value>) -> String {
        if let Some(id) = &self.text {
            return id.clone();
        }
        let id = self.next_id("msg");
        out.push(json!({"type": "TEXT_MESSAGE_START", "messageId": id, "role": "assistant"}));
        self.text = Some(id.clone());
        id
    }

    fn close_text(&mut self, out: &mut Vec<Value>) {
        if let Some(id) = self.text.take() {
            out.push(json!({"type": "TEXT_MESSAGE_END", "messageId": id}));
        }
    }

    fn open_reasoning(&mut self, out: &mut Vec<Value>) -> String {
        if let Some(id) = &self.reasoning {
            return id.clone();
        }
        let id = self.next_id("reasoning");
        out.push(json!({"type": "REASONING_START", "messageId": id}));
        out.push(json!({"type": "REASONING_MESSAGE_START", "messageId": id, "role": "reasoning"}));
        self.reasoning = Some(id.clone());
        id
    }

    fn close_reasoning(&mut self, out: &mut Vec<Value>) {
        if let Some(id) = self.reasoning.take() {
            out.push(json!({"type": "REASONING_MESSAGE_END", "messageId": id}));
            out.push(json!({"type": "REASONING_END", "messageId": id}));
        }
    }
}

fn text_of(blocks: &[Block]) -> String {
    blocks
        .iter()
        .map(|b| match b {
            Block::Text(t) => t.text.clone(),
            Block::Json { json } => json.to_string(),
            _ => String::new(),
        })
        .collect()
}

/// The form of a decision on a call of a tool whose input schema is
/// `arguments` (any object when unknown).
pub fn response_schema(arguments: Option<Value>) -> Value {
    json!({
        "type": "object",
        "properties": {
            "decision": {"enum": ["approved", "edited", "rejected", "answered"],
                "description": "approved: run the call; edited: run it with arguments; rejected: do not run it, the model reads reason; answered: content is the result"},
            "arguments": arguments.unwrap_or_else(|| json!({"type": "object"})),
            "reason": {"type": "string"},
            "content": {"type": "string"},
        },
        "required": ["decision"],
    })
}

/// The run's input from the last of `messages` (the user's new one).
pub fn user_input(messages: &[Value]) -> Result<Vec<Message>, String> {
    let n = messages.len();
    let last = messages
        .last()
        .ok_or("messages: the user's new message is required (the thread holds the rest)")?;
    let at = format!("messages[{}]", n - 1);
    if last["role"] != "user" {
        return Err(format!(
            "{at}.role: the last message must be the user's (to answer interrupts, send resume)"
        ));
    }
    let text = match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            let mut text = String::new();
            for (i, p) in parts.iter().enumerate() {
                match (p["type"].as_str(), p["text"].as_str()) {
                    (Some("text"), Some(t)) => text.push_str(t),
                    (Some("text"), None) => {
                        return Err(format!("{at}.content[{i}].text: required (a string)"));
                    }
                    (other, _) => {
                        return Err(format!(
                            "{at}.content[{i}].type: {} is not supported (text parts only)",
                            other.map_or("missing".to_string(), |t| format!("{t:?}"))
                        ));
                    }
                }
            }
            text
        }
        _ => return Err(format!("{at}.content: required (a string or text parts)")),
    };
    if text.is_empty() {
        return Err(format!("{at}.content: empty (nothing to ask)"));
    }
    Ok(vec![Message::user(text)])
}

/// The decisions `resume` makes on `pending` (the calls the run waits for).
pub fn decisions(resume: &[Value], pending: &[ApprovalRequest]) -> Result<Vec<Decision>, String> {
    let mut out = Vec::new();
    for (i, r) in resume.iter().enumerate() {
        let at = format!("resume[{i}]");
        let id = r["interruptId"]
            .as_str()
            .ok_or_else(|| format!("{at}.interruptId: required"))?;
        let p = pending.iter().find(|p| p.digest == id).ok_or_else(|| {
            format!("{at}.interruptId: {id:?} is not an interrupt the run waits for")
        })?;
        let base = |kind| super::decision(p, kind);
        let d = match r["status"].as_str() {
            Some("cancelled") => Decision {
                reason: Some("the person cancelled it".into()),
                ..base(DecisionKind::Rejected)
            },
            Some("resolved") => {
                let payload = &r["payload"];
                match payload["decision"].as_str() {
                    None if payload.is_null() => base(DecisionKind::Approved),
                    Some("approved") => base(DecisionKind::Approved),
                    Some("edited") => Decision {
                        arguments: Some(payload.get("arguments").cloned().ok_or_else(|| {
                            format!("{at}.payload.arguments: required with edited")
                        })?),
                        ..base(DecisionKind::Edited)
                    },
                    Some("rejected") => Decision {
                        reason: Some(
                            payload["reason"]
                                .as_str()
                                .unwrap_or("the person rejected it")
                                .into(),
                        ),
                        ..base(DecisionKind::Rejected)
                    },
                    Some("answered") => {
                        let content = match &payload["content"] {
                            Value::String(s) => vec![Block::text(s.as_str())],
                            Value::Null => {
                                return Err(format!(
                                    "{at}.payload.content: required with answered"
                                ));
                            }
                            other => vec![Block::Json {
                                json: other.clone(),
                            }],
                        };
                        Decision {
                            content: Some(content),
                            ..base(DecisionKind::Answered)
                        }
                    }
                    _ => {
                        return Err(format!(
                            "{at}.payload.decision: approved, edited, rejected or answered"
                        ));
                    }
                }
            }
            _ => return Err(format!("{at}.status: resolved or cancelled")),
        };
        out.push(d);
    }
    Ok(out)
}

/// `POST /v1/agents/{agent}/ag-ui`: an AG-UI run.
pub async fn run(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(name): Path<String>,
    JsonBody(input): JsonBody<Value>,
) -> Result<HttpResponse, ApiError> {
    let agent = super::configured(&state, &name)?;
    let thread_id = input["threadId"].as_str().ok_or_else(|| {
        ApiError::invalid_request("threadId: required (a thread of yours, from POST /v1/threads)")
    })?;
    let run_id = input["runId"]
        .as_str()
        .ok_or_else(|| ApiError::invalid_request("runId: required"))?
        .to_string();
    let messages = input["messages"]
        .as_array()
        .ok_or_else(|| ApiError::invalid_request("messages: required (an array)"))?;
    if input["tools"].as_array().is_some_and(|t| !t.is_empty()) {
        return Err(ApiError::invalid_request(
            "tools: not accepted (the agent's own tools run on the server; a client's would never be called)",
        ));
    }
    let thread = owned_thread(&state, &who, thread_id).await?;
    let runner = state.runner(agent.clone());
    let resume = input["resume"].as_array().filter(|r| !r.is_empty());
    let handle = match resume {
        None => {
            let input = user_input(messages).map_err(ApiError::invalid_request)?;
            runner.start(thread_id, input, true).await?
        }
        Some(resume) => {
            let run =
                super::waiting_run(&state, thread_id, &name, "resume answers interrupts").await?;
            let pending = super::waiting_calls(&state, &run).await?;
            let decided = decisions(resume, &pending).map_err(ApiError::invalid_decision)?;
            runner.start_resume(&run.id, decided, true).await?
        }
    };
    let parlance_run = handle.run_id.clone();
    let events: futures::stream::BoxStream<'static, RunEvent> = match state.live.adopt(handle) {
        Ok(live) => {
            live.started().await.map_err(crate::runs::resume_error)?;
            live.follow(0).map(|(_, e)| e).boxed()
        }
        Err(handle) => handle.events().boxed(),
    };
    let mut ag = AgUiStream::new(thread_id, &run_id);
    let start = ag.start(&parlance_run, &thread.metadata);
    let schema = move |tool: &str| {
        agent
            .tools()
            .get(tool)
            .map(|t| t.spec().input_schema.clone())
    };
    let body = futures::stream::iter([start])
        .chain(events.map(move |e| ag.event(&e, &schema)))
        .flat_map(futures::stream::iter)
        .map(move |e| {
            Ok::<_, Infallible>(Event::default().data(outbound(&state, &who, e).to_string()))
        });
    Ok(Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// A thread's stored messages as AG-UI messages, for `MESSAGES_SNAPSHOT`
/// (ids from their places in the thread; calls waiting for a decision
/// are left out: the run's interrupts carry them).
pub fn snapshot(stored: &[parlance_store::StoredMessage]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in stored {
        let id = format!("msg-{}", m.seq);
        match m.message.role {
            Role::User if !is_engines(&m.message) => {
                out.push(json!({"id": id, "role": "user", "content": m.message.text()}));
            }
            Role::Assistant => {
                let mut a = json!({"id": id, "role": "assistant"});
                let text = m.message.text();
                if !text.is_empty() {
                    a["content"] = json!(text);
                }
                let calls: Vec<Value> = m
                    .message
                    .tool_calls()
                    .map(|c| {
                        json!({"id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments.to_string()}})
                    })
                    .collect();
                if !calls.is_empty() {
                    a["toolCalls"] = Value::Array(calls);
                }
                out.push(a);
            }
            Role::Tool => {
                for (i, b) in m.message.content.iter().enumerate() {
                    if let Block::ToolResult { tool_result: r } = b {
                        let mut content = text_of(&r.content);
                        if r.status != ToolStatus::Ok {
                            content = format!("{}: {content}", r.status.as_str());
                        }
                        out.push(json!({"id": format!("tool-{}-{i}", m.seq), "role": "tool",
                            "toolCallId": r.tool_call_id, "content": content}));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn is_engines(m: &Message) -> bool {
    m.metadata
        .as_ref()
        .is_some_and(|d| d.contains_key("output_retry"))
}

/// `POST /v1/agents/{agent}/ag-ui/connect`: what an AG-UI client that lost
/// its stream connects to (its agent's `connect`): the thread's messages
/// as a `MESSAGES_SNAPSHOT` (which replaces what the client held, so
/// nothing is doubled), then the rest of the thread's last run, live
/// until it ends (`RUN_FINISHED` with its outcome).
pub async fn connect(
    State(state): State<Arc<AppState>>,
    who: Principal,
    Path(name): Path<String>,
    JsonBody(input): JsonBody<Value>,
) -> Result<HttpResponse, ApiError> {
    let agent = super::configured(&state, &name)?;
    let thread_id = input["threadId"].as_str().ok_or_else(|| {
        ApiError::invalid_request("threadId: required (a thread of yours, from POST /v1/threads)")
    })?;
    let run_id = input["runId"].as_str().unwrap_or("connect").to_string();
    let thread = owned_thread(&state, &who, thread_id).await?;
    let last = state.store.runs(thread_id).await?.pop();
    // The run's messages and where its log stands, read together, then
    // the thread's earlier messages: the snapshot and the position the
    // rest follows from agree.
    let (logged, position) = match &last {
        Some(r) => {
            let logged = state.store.log_after(thread_id, &r.id, 0).await?;
            let position = logged.last().map_or(0, |m| m.position);
            (logged, position)
        }
        None => (Vec::new(), 0),
    };
    let first_of_run = logged.first().map(|m| m.seq).unwrap_or(i64::MAX);
    let mut stored: Vec<parlance_store::StoredMessage> = state
        .store
        .all_messages(thread_id)
        .await?
        .into_iter()
        .filter(|m| m.seq < first_of_run)
        .collect();
    stored.extend(logged.iter().map(|m| parlance_store::StoredMessage {
        seq: m.seq,
        run_id: last.as_ref().map(|r| r.id.clone()),
        message: m.message.clone(),
    }));
    let pending = stored
        .last()
        .map(|m| super::approval_requests(&m.message.content))
        .unwrap_or_default();
    let mut ag = AgUiStream::new(thread_id, &run_id);
    let parlance_run = last.as_ref().map(|r| r.id.clone()).unwrap_or_default();
    let mut first = ag.start(&parlance_run, &thread.metadata);
    first.push(json!({"type": "MESSAGES_SNAPSHOT", "messages": snapshot(&stored)}));
    let schema = move |tool: &str| {
        agent
            .tools()
            .get(tool)
            .map(|t| t.spec().input_schema.clone())
    };
    let items: futures::stream::BoxStream<'static, crate::streams::RunItem> = match &last {
        Some(r) => crate::streams::items(
            state.clone(),
            r.id.clone(),
            crate::streams::EventId { position, after: 0 },
        )
        .boxed(),
        None => futures::stream::empty().boxed(),
    };
    let finished = last.is_none();
    let events = items.map(move |item| match item {
        crate::streams::RunItem::Live(_, e) => ag.event(&e, &schema),
        crate::streams::RunItem::Stored(m) => ag.message(&m.message),
        crate::streams::RunItem::Stopped(r) => {
            let usage = r.usage.unwrap_or_default();
            ag.stopped(
                &r.status,
                r.error.as_ref(),
                &r.output,
                &usage,
                &pending,
                &schema,
            )
        }
        crate::streams::RunItem::Failed(message) => {
            vec![json!({"type": "RUN_ERROR", "code": "store", "message": message})]
        }
    });
    // A thread with no run yet: the snapshot, and the end.
    let nothing_ran = finished.then(|| {
        json!({"type": "RUN_FINISHED", "threadId": thread.id, "runId": run_id, "outcome": {"type": "success"}})
    });
    let closing = futures::stream::iter(nothing_ran.map(|e| vec![e]));
    let body = futures::stream::iter([first])
        .chain(events)
        .chain(closing)
        .flat_map(futures::stream::iter)
        .map(move |e| {
            Ok::<_, Infallible>(Event::default().data(outbound(&state, &who, e).to_string()))
        });
    Ok(Sse::new(body)
        .keep_alive(KeepAlive::default())
        .into_response())
}

#[cfg(test)]
#[path = "ag_ui_tests.rs"]
mod tests;
