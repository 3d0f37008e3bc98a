//! MCP, served: each configured agent is an MCP tool, over streamable HTTP
//! at `/mcp` (the API's bearer tokens) and over stdio (`parlance mcp
//! serve`, for local hosts).
//!
//! - The tool's arguments: `input` (what to ask) and, optionally,
//!   `thread_id` (go on in that thread of the caller). Without one, each
//!   call starts a thread of the caller, so that what a run waits for is
//!   stored and can be decided anywhere. The result is the run's answer as
//!   text, with `structuredContent: {output, status, run_id, thread_id}`;
//!   a failed run is a tool error (`isError`) reading `code: message`.
//! - **A run that waits for people** is an elicitation where the client
//!   can answer one (one form per waiting call: `decision` —
//!   `approved`, `rejected`, `edited`, `answered` — with `reason`,
//!   `arguments` as JSON, `answer`): on protocol `2026-07-28` an
//!   `InputRequiredResult` whose answers come back with the retried call
//!   (its `requestState` is the run's id), on earlier versions an
//!   `elicitation/create` request during the call. A declined form rejects
//!   the call; a cancelled one leaves the run waiting. A client that cannot
//!   answer forms gets a result that says where to decide (the inbox,
//!   `POST /v1/runs/{id}/decisions`) and which thread to go on in.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response as HttpResponse;
use futures::StreamExt;
use parlance_agent::Agent;
use parlance_format::{
    ApprovalRequest, Block, Decision, DecisionKind, Message, Response, RunStatus,
};
use parlance_runtime::ResumeError;
use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, InputRequest, InputRequests, InputRequiredResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ServerCapabilities, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::{
    EventStore, EventStoreError, EventStream, ServerSseMessage,
};
use serde_json::{Value, json};

use crate::auth::Principal;
use crate::state::AppState;

/// The configured agents as MCP tools, for one caller.
#[derive(Clone)]
pub struct AgentTools {
    state: Arc<AppState>,
    /// Over stdio: the local user (no token to read).
    local: Option<Principal>,
}

impl AgentTools {
    /// Served over HTTP: the caller is the request's token's.
    pub fn http(state: Arc<AppState>) -> Self {
        AgentTools { state, local: None }
    }

    /// Served over stdio to the user who started it.
    pub fn stdio(state: Arc<AppState>) -> Self {
        AgentTools {
            state,
            local: Some(Principal::ANONYMOUS),
        }
    }

    fn principal(&self, ctx: &RequestContext<RoleServer>) -> Result<Principal, McpError> {
        if let Some(p) = &self.local {
            return Ok(p.clone());
        }
        ctx.extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Principal>())
            .cloned()
            .ok_or_else(|| McpError::internal_error("the request carries no caller", None))
    }

    /// Every agent, as a tool.
    pub fn tools(&self) -> Vec<Tool> {
        let mut names: Vec<&String> = self.state.agents.keys().collect();
        names.sort();
        names.into_iter().map(|n| self.tool(n)).collect()
    }

    fn tool(&self, name: &str) -> Tool {
        let config = &self.state.config.agents[name];
        let about = config
            .instructions
            .as_deref()
            .and_then(|i| i.lines().next())
            .unwrap_or("an agent of this server");
        let schema = json!({
            "type": "object",
            "properties": {
                "input": {"type": "string", "description": "What to ask the agent."},
                "thread_id": {"type": "string", "description": "Go on in this thread (from an earlier result's structuredContent.thread_id)."},
            },
            "required": ["input"],
        });
        let Value::Object(schema) = schema else {
            unreachable!("an object")
        };
        Tool::new(
            name.to_string(),
            format!(
                "Ask the {name} agent ({about}). Its tools run on the server; calls that need a person's approval are asked as forms."
            ),
            Arc::new(schema),
        )
    }

    async fn call(
        &self,
        params: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let who = self.principal(&ctx)?;
        let name = params.name.to_string();
        let agent = self.state.agents.get(&name).cloned().ok_or_else(|| {
            McpError::invalid_params(format!("no tool {name:?} (an agent of this server)"), None)
        })?;
        if let Some(run) = params.request_state.as_deref() {
            // A call retried with the answers to the forms it was given.
            let answers = params.input_responses.clone().unwrap_or_default();
            let answers: Vec<(String, Value)> = answers.into_iter().collect();
            return Ok(self.decide(&who, &agent, run, &answers, &ctx).await);
        }
        let args = params.arguments.clone().unwrap_or_default();
        let Some(input) = args.get("input").and_then(Value::as_str) else {
            return Ok(failure("input: required (a string: what to ask the agent)").into());
        };
        let thread = match args.get("thread_id") {
            None | Some(Value::Null) => {
                match self
                    .state
                    .store
                    .create_thread(who.subject.as_deref(), json!({"source": "mcp"}))
                    .await
                {
                    Ok(t) => t.id,
                    Err(e) => return Ok(failure(&e.to_string()).into()),
                }
            }
            Some(Value::String(id)) => {
                if crate::api::owned_thread(&self.state, &who, id)
                    .await
                    .is_err()
                {
                    return Ok(failure(&format!("thread_id: no thread {id:?} of yours")).into());
                }
                id.clone()
            }
            Some(_) => return Ok(failure("thread_id: a string").into()),
        };
        let runner = self.state.runner(agent.clone());
        // A client that asked for progress reads the answer as it is
        // written: each piece of text a progress notification.
        let progress = ctx.meta.get_progress_token();
        let outcome = match runner
            .start(&thread, vec![Message::user(input)], progress.is_some())
            .await
        {
            Ok(handle) => match progress {
                None => handle.outcome().await,
                Some(token) => {
                    let (events, outcome) = handle.split();
                    let mut events = std::pin::pin!(events);
                    let mut n = 0.0;
                    while let Some(e) = events.next().await {
                        if let parlance_agent::RunEvent::TextDelta(t) = e
                            && !t.is_empty()
                        {
                            n += 1.0;
                            let note = ProgressNotificationParam::new(token.clone(), n)
                                .with_message(self.state.redactor.redact(&t).into_owned());
                            // A client gone meanwhile: the run goes on.
                            let _ = ctx.peer.notify_progress(note).await;
                        }
                    }
                    outcome.await
                }
            },
            Err(e) => return Ok(failure(&e.to_string()).into()),
        };
        self.answer(&agent, outcome, &ctx).await
    }

    /// The run's outcome as the tool's: its answer, its failure, or the
    /// forms of the calls it waits for.
    async fn answer(
        &self,
        agent: &Agent,
        mut outcome: Result<Response, ResumeError>,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        loop {
            let r = match outcome {
                Ok(r) => r,
                Err(e) => return Ok(failure(&e.to_string()).into()),
            };
            if r.status != RunStatus::RequiresApproval {
                return Ok(done(&r).into());
            }
            let run = r.id.clone().unwrap_or_default();
            if !can_elicit(ctx) {
                return Ok(waiting(&r).into());
            }
            if !legacy(ctx) {
                let requests: InputRequests = r
                    .pending
                    .iter()
                    .map(|p| (p.digest.clone(), form(p)))
                    .collect();
                return Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                    Some(requests),
                    Some(run),
                )));
            }
            // Before 2026-07-28: ask during the call, one form per call.
            let mut answers = Vec::new();
            for p in &r.pending {
                let InputRequest::Elicitation(request) = form(p) else {
                    unreachable!("a form")
                };
                match ctx.peer.create_elicitation(request.params).await {
                    Ok(result) => answers.push((
                        p.digest.clone(),
                        serde_json::to_value(result).unwrap_or(Value::Null),
                    )),
                    Err(e) => {
                        tracing::warn!(run = %run, error = %e, "the MCP client did not answer a form");
                        return Ok(waiting(&r).into());
                    }
                }
            }
            match decisions(&r.pending, &answers) {
                Ok(Some(decided)) => {
                    let runner = self.state.runner(agent.clone());
                    outcome = runner.resume(&run, decided).await;
                }
                Ok(None) => return Ok(waiting(&r).into()),
                Err(e) => return Ok(failure(&e).into()),
            }
        }
    }

    /// A retried call's answers decide the run `run`; then it goes on.
    async fn decide(
        &self,
        who: &Principal,
        agent: &Agent,
        run: &str,
        answers: &[(String, Value)],
        ctx: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let paused = match self.paused(who, agent, run).await {
            Ok(p) => p,
            Err(e) => return failure(&e).into(),
        };
        match decisions(&paused.pending, answers) {
            Ok(Some(decided)) => {
                let runner = self.state.runner(agent.clone());
                let outcome = runner.resume(run, decided).await;
                self.answer(agent, outcome, ctx)
                    .await
                    .unwrap_or_else(|e| failure(&e.message).into())
            }
            Ok(None) => waiting(&paused).into(),
            Err(e) => failure(&e).into(),
        }
    }

    /// The run `run` of `who`, waiting for decisions, as a paused response.
    async fn paused(&self, who: &Principal, agent: &Agent, run: &str) -> Result<Response, String> {
        let record = self
            .state
            .store
            .run(run)
            .await
            .map_err(|_| format!("no run {run:?} waits for these answers"))?;
        crate::api::owned_thread(&self.state, who, &record.thread_id)
            .await
            .map_err(|_| format!("no run {run:?} waits for these answers"))?;
        if record.status != RunStatus::RequiresApproval.as_str() {
            return Err(format!(
                "run {run} is {}, not waiting for decisions",
                record.status
            ));
        }
        if record.settings["name"].as_str() != agent.name() {
            return Err(format!("run {run} is not this agent's"));
        }
        let pending = super::waiting_calls(&self.state, &record)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Response {
            id: Some(record.id),
            thread_id: Some(record.thread_id),
            status: RunStatus::RequiresApproval,
            messages: Vec::new(),
            output: Value::Null,
            usage: record.usage.unwrap_or_default(),
            cost: None,
            finish_reason: None,
            pending,
            error: None,
        })
    }
}

/// The decisions that the answers to the forms (keyed by request digest)
/// make on `pending`; `None` when a form was cancelled.
pub fn decisions(
    pending: &[ApprovalRequest],
    answers: &[(String, Value)],
) -> Result<Option<Vec<Decision>>, String> {
    let mut out = Vec::new();
    for p in pending {
        let Some((_, answer)) = answers.iter().find(|(k, _)| *k == p.digest) else {
            return Err(format!(
                "no answer for the call of {} ({}) that waits for a decision",
                p.name, p.tool_call_id
            ));
        };
        let base = |kind| super::decision(p, kind);
        let content = &answer["content"];
        let d = match answer["action"].as_str() {
            Some("cancel") => return Ok(None),
            Some("decline") => Decision {
                reason: Some("the person declined it".into()),
                ..base(DecisionKind::Rejected)
            },
            Some("accept") => match content["decision"].as_str() {
                Some("approved") => base(DecisionKind::Approved),
                Some("rejected") => Decision {
                    reason: Some(
                        content["reason"]
                            .as_str()
                            .filter(|r| !r.is_empty())
                            .unwrap_or("the person rejected it")
                            .into(),
                    ),
                    ..base(DecisionKind::Rejected)
                },
                Some("edited") => {
                    let text = content["arguments"].as_str().unwrap_or("");
                    let arguments: Value = serde_json::from_str(text).map_err(|e| {
                        format!(
                            "{}: arguments: not JSON ({e}); the call still waits",
                            p.name
                        )
                    })?;
                    Decision {
                        arguments: Some(arguments),
                        ..base(DecisionKind::Edited)
                    }
                }
                Some("answered") => Decision {
                    content: Some(vec![Block::text(content["answer"].as_str().unwrap_or(""))]),
                    ..base(DecisionKind::Answered)
                },
                other => {
                    return Err(format!(
                        "{}: decision: {other:?} is not approved, rejected, edited or answered",
                        p.name
                    ));
                }
            },
            other => {
                return Err(format!(
                    "{}: action: {other:?} is not accept, decline or cancel",
                    p.name
                ));
            }
        };
        out.push(d);
    }
    Ok(Some(out))
}

/// The form that asks for a decision on `p`.
pub fn form(p: &ApprovalRequest) -> InputRequest {
    let schema = json!({
        "type": "object",
        "properties": {
            "decision": {"type": "string", "title": "Decision",
                "enum": ["approved", "rejected", "edited", "answered"],
                "description": "approved: run it; rejected: do not (give a reason); edited: run it with arguments; answered: do not run it, your answer is its result"},
            "reason": {"type": "string", "title": "Reason", "description": "Why it is rejected (the agent reads it)."},
            "arguments": {"type": "string", "title": "Arguments (JSON)", "description": "The arguments to run it with, when edited."},
            "answer": {"type": "string", "title": "Answer", "description": "The result that stands in for the tool's, when answered."},
        },
        "required": ["decision"],
    });
    let params = json!({
        "mode": "form",
        "message": format!("{}({}) waits for your decision.", p.name, p.arguments),
        "requestedSchema": schema,
    });
    let request = json!({"method": "elicitation/create", "params": params});
    serde_json::from_value(request).expect("a well-formed elicitation request")
}

/// Whether the client answers forms.
fn can_elicit(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Whether the call runs on a protocol before `2026-07-28` (forms are
/// asked during the call, not returned as input required).
fn legacy(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.protocol_version()
        .is_none_or(|v| v.as_str() < ProtocolVersion::V_2026_07_28.as_str())
}

fn structured(r: &Response) -> Value {
    json!({
        "output": r.output,
        "status": r.status.as_str(),
        "run_id": r.id,
        "thread_id": r.thread_id,
    })
}

/// A run that stopped: its answer, or its failure as a tool error.
fn done(r: &Response) -> CallToolResult {
    let mut result = match r.status {
        RunStatus::Completed => CallToolResult::success(vec![ContentBlock::text(r.text())]),
        _ => {
            let e = r.error.as_ref();
            let text = format!(
                "{}: {}",
                e.map_or("failed", |e| e.code.as_str()),
                e.map_or("the run did not complete", |e| e.message.as_str())
            );
            CallToolResult::error(vec![ContentBlock::text(text)])
        }
    };
    result.structured_content = Some(structured(r));
    result
}

/// A run that waits, for a client that cannot answer forms: where to decide.
fn waiting(r: &Response) -> CallToolResult {
    let run = r.id.as_deref().unwrap_or("");
    let calls: Vec<String> = r
        .pending
        .iter()
        .map(|p| format!("{}({})", p.name, p.arguments))
        .collect();
    let text = format!(
        "The run waits for a person's decision on {}: decide in the inbox at /ui/runs/{run}, or with POST /v1/runs/{run}/decisions; then ask again with thread_id {}.",
        calls.join(", "),
        r.thread_id.as_deref().unwrap_or("")
    );
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    let mut s = structured(r);
    s["pending"] = serde_json::to_value(&r.pending).unwrap_or(Value::Null);
    result.structured_content = Some(s);
    result
}

/// A tool error that reads `message`.
fn failure(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

impl ServerHandler for AgentTools {
    fn get_info(&self) -> InitializeResult {
        let capabilities = ServerCapabilities::builder().enable_tools().build();
        InitializeResult::new(capabilities)
            .with_server_info(Implementation::new("parlance", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Each tool is an agent of this Parlance server: give it input, and thread_id to go on in a conversation.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.state
            .agents
            .contains_key(name)
            .then(|| self.tool(name))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, ctx).await
    }
}

/// `/mcp`: the caller (from the bearer token, as for the API) rides into
/// the MCP service with the request.
pub async fn with_caller(
    State(_state): State<Arc<AppState>>,
    who: Principal,
    mut request: Request,
    next: Next,
) -> HttpResponse {
    request.extensions_mut().insert(who);
    next.run(request).await
}

/// How long the events of an MCP stream are kept for a client that
/// reconnects (`Last-Event-ID`).
pub const KEEP_EVENTS: std::time::Duration = std::time::Duration::from_secs(600);

/// The events of `/mcp`'s streams, in memory, so that a client whose
/// connection dropped mid-call reconnects with `Last-Event-ID` and gets
/// the rest (the call's result included): the call goes on without it.
/// Kept [`KEEP_EVENTS`]; on this server only (a client reconnects to the
/// server it called).
#[derive(Default)]
pub struct McpEvents(std::sync::Mutex<McpEventsInner>);

/// What [`McpEvents`] holds.
#[derive(Default)]
pub struct McpEventsInner {
    next: u64,
    /// Each stream's events, by stream id, with when the stream began.
    streams: std::collections::HashMap<String, (std::time::Instant, Vec<(u64, ServerSseMessage)>)>,
    /// Which stream an event id belongs to.
    owner: std::collections::HashMap<u64, String>,
}

#[async_trait::async_trait]
impl EventStore for McpEvents {
    async fn store_event(
        &self,
        stream_id: &str,
        event: &ServerSseMessage,
    ) -> Result<String, EventStoreError> {
        let mut inner = self.0.lock().expect("not poisoned");
        // Streams past their time go, with their events' ids.
        let now = std::time::Instant::now();
        let old: Vec<String> = inner
            .streams
            .iter()
            .filter(|(_, (began, _))| now.duration_since(*began) > KEEP_EVENTS)
            .map(|(id, _)| id.clone())
            .collect();
        for id in old {
            if let Some((_, events)) = inner.streams.remove(&id) {
                for (n, _) in events {
                    inner.owner.remove(&n);
                }
            }
        }
        inner.next += 1;
        let n = inner.next;
        let mut kept = event.clone();
        kept.event_id = Some(n.to_string());
        inner
            .streams
            .entry(stream_id.to_string())
            .or_insert_with(|| (now, Vec::new()))
            .1
            .push((n, kept));
        inner.owner.insert(n, stream_id.to_string());
        Ok(n.to_string())
    }

    async fn replay_events_after(
        &self,
        last_event_id: &str,
    ) -> Result<EventStream, EventStoreError> {
        let inner = self.0.lock().expect("not poisoned");
        let n: u64 = last_event_id
            .parse()
            .map_err(|_| format!("{last_event_id:?} is not an event id of this server"))?;
        let stream = inner
            .owner
            .get(&n)
            .ok_or_else(|| format!("event {n} is not known here (too old, or another server's)"))?;
        let events: Vec<ServerSseMessage> = inner.streams[stream]
            .1
            .iter()
            .filter(|(id, _)| *id > n)
            .map(|(_, e)| e.clone())
            .collect();
        Ok(Box::pin(futures::stream::iter(events)))
    }
}

/// The MCP service over streamable HTTP (Host and Origin are the
/// router's guard's to check).
pub fn http_service(
    state: Arc<AppState>,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    AgentTools,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    let config = rmcp::transport::streamable_http_server::StreamableHttpServerConfig::default()
        .with_allowed_hosts(Vec::<String>::new());
    let sessions =
        rmcp::transport::streamable_http_server::session::local::LocalSessionManager::default()
            .with_event_store(Arc::new(McpEvents::default()));
    rmcp::transport::streamable_http_server::StreamableHttpService::new(
        move || Ok(AgentTools::http(state.clone())),
        Arc::new(sessions),
        config,
    )
}

/// Serves the agents over stdin and stdout until the client leaves.
pub async fn serve_stdio(state: Arc<AppState>) -> Result<(), String> {
    use rmcp::ServiceExt;
    let running = AgentTools::stdio(state)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("MCP over stdio: {e}"))?;
    running
        .waiting()
        .await
        .map(drop)
        .map_err(|e| format!("MCP over stdio: {e}"))
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
