//! The OpenAPI 3.1 document, generated from the handlers' request types and
//! the canonical format's types (schemars), with the paths declared here.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use crate::api::{DecisionsRequest, NewThread, RetryRequest, RunRequest};
use crate::error::ErrorBody;
use crate::sessions::EndSessions;
use parlance_format::Response;

/// The document.
pub fn openapi() -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| s.definitions_path = "/components/schemas".into())
        .into_generator();
    let mut refs = serde_json::Map::new();
    fn add<T: JsonSchema>(
        g: &mut schemars::SchemaGenerator,
        refs: &mut serde_json::Map<String, Value>,
        name: &str,
    ) {
        refs.insert(name.to_string(), g.subschema_for::<T>().to_value());
    }
    add::<RunRequest>(&mut generator, &mut refs, "RunRequest");
    add::<DecisionsRequest>(&mut generator, &mut refs, "DecisionsRequest");
    add::<NewThread>(&mut generator, &mut refs, "NewThread");
    add::<RetryRequest>(&mut generator, &mut refs, "RetryRequest");
    add::<EndSessions>(&mut generator, &mut refs, "EndSessions");
    add::<ErrorBody>(&mut generator, &mut refs, "ErrorBody");
    add::<Response>(&mut generator, &mut refs, "Response");
    let mut schemas: serde_json::Map<String, Value> =
        generator.take_definitions(true).into_iter().collect();
    for (name, r) in &refs {
        if !schemas.contains_key(name) {
            schemas.insert(name.clone(), r.clone());
        }
    }
    let schema = |name: &str| refs.get(name).cloned().unwrap_or(json!({}));
    let error = |desc: &str| json!({"description": desc, "content": {"application/json": {"schema": schema("ErrorBody")}}});
    let json_body = |name: &str| json!({"required": true, "content": {"application/json": {"schema": schema(name)}}});
    let response = json!({"description": "The run's response envelope.", "content": {
        "application/json": {"schema": schema("Response")},
        "text/event-stream": {"schema": {"type": "string", "description": "With stream: true: events run_started (runs on threads: {id, thread_id}; every event of a run on a thread has an id to reconnect with, see GET /v1/runs/{id}/events), text_delta, thinking_delta, message, tool_call_started, tool_call_finished, approval_required, context_compacted ({strategy, replaces, tokens_before, tokens_after}), run_completed (data: the response; a stateless paused one carries its signature)."}}
    }});
    let object = |desc: &str| json!({"description": desc, "content": {"application/json": {"schema": {"type": "object"}}}});
    let id = |name: &str| json!([{"name": name, "in": "path", "required": true, "schema": {"type": "string"}}]);
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Parlance API", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Runs, approvals and threads. Messages are Parlance's canonical format (docs/format.md)."},
        "security": [{"bearer": []}],
        "paths": {
            "/v1/runs": {"post": {"operationId": "createRun", "summary": "Run an agent (stateless with turns, or on a thread)",
                "requestBody": json_body("RunRequest"),
                "responses": {"200": response, "400": error("Invalid request (the message names the JSON path)"),
                              "401": error("Missing or unknown token"), "404": error("No such thread"),
                              "409": error("The thread is busy with another run"), "413": error("Body too large"),
                              "503": error("Busy: beyond max_runs and its queue; try again after Retry-After (seconds)")}}},
            "/v1/runs/{id}": {"get": {"operationId": "getRun", "summary": "A run on a thread as stored (also while it runs, and after its client left)",
                "parameters": id("id"),
                "responses": {"200": object("{id, thread_id, status (running, requires_approval, completed, failed), messages, output, usage, finish_reason, handoff (the agent the run handed the conversation to, if it did), pending, error, created_at, updated_at}"),
                              "401": error("Missing or unknown token"), "404": error("No such run")}}},
            "/v1/runs/{id}/events": {"get": {"operationId": "runEvents", "summary": "A run's events after the last one a client saw (a stream that survives reconnects, from this server or any other of the store), then live until the run ends or waits",
                "parameters": [id("id")[0].clone(),
                    {"name": "after", "in": "query", "required": false, "schema": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?$"}, "description": "The id of the last event seen (Last-Event-ID wins when both are given); none: from the run's first message"},
                    {"name": "Last-Event-ID", "in": "header", "required": false, "schema": {"type": "string"}, "description": "The id of the last event seen, as EventSource sends it on reconnecting"}],
                "responses": {"200": {"description": "The events, as the run's own stream names them; every event has an id: P for a message (its position in the run's log, the same on every server), P.k for the k-th event after it", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                              "400": error("after or Last-Event-ID is not an event id"), "401": error("Missing or unknown token"), "404": error("No such run")}}},
            "/v1/runs/{id}/decisions": {"post": {"operationId": "decide", "summary": "Decide pending calls; the run resumes",
                "parameters": id("id"), "requestBody": json_body("DecisionsRequest"),
                "responses": {"200": response, "400": error("Invalid request or refused decision"), "401": error("Missing or unknown token"),
                              "404": error("No such run"), "409": error("The run is not waiting for decisions"),
                              "503": error("Busy: beyond max_runs and its queue; try again after Retry-After (seconds)")}}},
            "/v1/threads": {
                "post": {"operationId": "createThread", "requestBody": {"required": false, "content": {"application/json": {"schema": schema("NewThread")}}},
                         "responses": {"201": object("The thread"), "401": error("Missing or unknown token")}},
                "get": {"operationId": "listThreads", "parameters": [
                            {"name": "after", "in": "query", "required": false, "schema": {"type": "string"}},
                            {"name": "limit", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1, "maximum": 1000}}],
                        "responses": {"200": object("{items, next}: the caller's threads"), "401": error("Missing or unknown token")}}},
            "/v1/threads/{id}": {
                "get": {"operationId": "getThread", "parameters": id("id"),
                        "responses": {"200": object("{thread, messages, runs, totals ({tokens, cost, model_calls, tool_calls} over its stored messages; cost null when a model call has no price), artifacts (operators only)}"), "404": error("No such thread")}},
                "delete": {"operationId": "deleteThread", "parameters": [id("id")[0].clone(),
                               {"name": "force", "in": "query", "required": false, "schema": {"type": "boolean"},
                                "description": "Operators: delete even while a run waits for decisions on the thread (a damaged run no one can decide)"}],
                           "responses": {"204": {"description": "Deleted with its messages, runs and artifacts"}, "403": error("force by a caller who is not an operator"),
                                         "404": error("No such thread"), "409": error("A run is active on the thread")}}},
            "/v1/threads/{id}/retry": {"post": {"operationId": "retryThread", "summary": "Retry the thread's failed last run: its failed calls run again (calls that succeeded keep their results), then the run goes on",
                "parameters": id("id"), "requestBody": {"required": false, "content": {"application/json": {"schema": schema("RetryRequest")}}},
                "responses": {"200": response, "400": error("Invalid request"), "401": error("Missing or unknown token"),
                              "404": error("No such thread"), "409": error("The last run did not fail, or the thread is busy"),
                              "503": error("Busy: beyond max_runs and its queue; try again after Retry-After (seconds)")}}},
            "/v1/chat/completions": {"post": {"operationId": "chatCompletions", "summary": "OpenAI's Chat Completions API: model = the name of a configured agent; its tools run on the server; x-parlance-thread puts the run on a stored thread; stream answers chat.completion.chunk events ending with [DONE]",
                "parameters": [{"name": "x-parlance-thread", "in": "header", "required": false, "schema": {"type": "string"}, "description": "Run on this stored thread (only the trailing user messages are new)"}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "description": "An OpenAI Chat Completions request (model, messages, stream, stream_options); tools are refused"}}}},
                "responses": {"200": object("A chat.completion (or, streamed, chat.completion.chunk events), with parlance: {run_id, thread_id, status, pending}"),
                              "400": error("Invalid request (tools given, the last message not the user's...)"), "401": error("Missing or unknown token"),
                              "404": error("No such agent (model) or thread"), "422": error("The run failed (its error in the message)"),
                              "503": error("Busy: beyond max_runs and its queue; try again after Retry-After (seconds)")}}},
            "/v1/responses": {"post": {"operationId": "responses", "summary": "OpenAI's Responses API: model = the name of a configured agent; its tools run on the server; a response's id is its run's, and previous_response_id goes on in that run's thread (store: false runs stateless); stream answers the API's event sequence",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "description": "An OpenAI Responses request (model, input, previous_response_id, store, instructions with store: false, stream); tools are refused"}}}},
                "responses": {"200": object("A response object (or, streamed, its events from response.created to response.completed), with parlance: {run_id, thread_id, status, pending}"),
                              "400": error("Invalid request"), "401": error("Missing or unknown token"),
                              "404": error("No such agent (model) or previous response"), "422": error("The run failed (its error in the message)"),
                              "503": error("Busy: beyond max_runs and its queue; try again after Retry-After (seconds)")}}},
            "/v1/agents/{agent}/chat": {"post": {"operationId": "aiSdkChat", "summary": "The Vercel AI SDK's UI message stream (what useChat reads): the chat's id is a thread of the caller; a user message starts a run, an assistant message with answered approval parts decides the waiting run",
                "parameters": id("agent"),
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "description": "The AI SDK's request: {id (a thread), messages (UIMessage[]; the last is read), trigger (submit-message)}"}}}},
                "responses": {"200": {"description": "The UI message stream (x-vercel-ai-ui-message-stream: v1): data: chunks, then data: [DONE]", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                              "400": error("Invalid request, or refused decisions (the message names messages[N].parts[M])"), "401": error("Missing or unknown token"),
                              "404": error("No such agent or thread"), "409": error("The thread is busy, or no run waits for decisions"),
                              "503": error("Busy: beyond max_runs and its queue; try again after Retry-After (seconds)")}}},
            "/v1/agents/{agent}/ag-ui": {"post": {"operationId": "agUiRun", "summary": "AG-UI: a run of the agent (threadId: a thread of the caller; the last message is the new one; resume answers interrupts), answered as AG-UI events",
                "parameters": id("agent"),
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "description": "AG-UI's RunAgentInput: {threadId, runId, messages, tools (must be empty), state, resume: [{interruptId, status, payload: {decision, arguments, reason, content}}]}"}}}},
                "responses": {"200": {"description": "AG-UI events as SSE data: lines, RUN_STARTED first, RUN_FINISHED (outcome success or interrupt) or RUN_ERROR last", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                              "400": error("Invalid request, or refused decisions (the message names resume[N])"), "401": error("Missing or unknown token"),
                              "404": error("No such agent or thread"), "409": error("The thread is busy, or no run waits for decisions"),
                              "503": error("Busy: beyond max_runs and its queue; try again after Retry-After (seconds)")}}},
            "/v1/agents/{agent}/ag-ui/connect": {"post": {"operationId": "agUiConnect", "summary": "AG-UI reconnect (the agent's connect): a MESSAGES_SNAPSHOT of the thread, then the rest of its last run",
                "parameters": id("agent"),
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "description": "AG-UI's RunAgentInput (threadId: a thread of the caller)"}}}},
                "responses": {"200": {"description": "AG-UI events", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                              "401": error("Missing or unknown token"), "404": error("No such agent or thread")}}},
            "/v1/agents/{agent}/chat/{id}/stream": {"get": {"operationId": "aiSdkResume", "summary": "The AI SDK's resumeStream: the thread's running run replayed from its start, then live",
                "parameters": [id("agent")[0].clone(), id("id")[0].clone()],
                "responses": {"200": {"description": "The UI message stream", "content": {"text/event-stream": {"schema": {"type": "string"}}}},
                              "204": {"description": "No run is running on the thread"}, "401": error("Missing or unknown token"), "404": error("No such thread")}}},
            "/v1/threads/{id}/ui-messages": {"get": {"operationId": "threadUiMessages", "summary": "A thread as the AI SDK's UIMessage[] (each run's steps folded into one assistant message)",
                "parameters": id("id"),
                "responses": {"200": {"description": "UIMessage[]", "content": {"application/json": {"schema": {"type": "array", "items": {"type": "object"}}}}},
                              "401": error("Missing or unknown token"), "404": error("No such thread")}}},
            "/a2a/{agent}": {"post": {"operationId": "a2a", "summary": "A2A 1.0 over JSON-RPC: SendMessage, SendStreamingMessage, GetTask, SubscribeToTask, CancelTask (refused); tasks are runs, contexts threads",
                "parameters": id("agent"),
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "description": "A JSON-RPC 2.0 request of A2A"}}}},
                "responses": {"200": {"description": "A JSON-RPC response (or, streamed, an SSE stream of them)"}, "401": error("Missing or unknown token"), "404": error("No such agent")}}},
            "/a2a/{agent}/.well-known/agent-card.json": {"get": {"operationId": "a2aCard", "summary": "The agent's A2A card",
                "parameters": id("agent"),
                "responses": {"200": object("The agent card"), "401": error("Missing or unknown token"), "404": error("No such agent")}}},
            "/mcp": {"post": {"operationId": "mcp", "summary": "MCP over streamable HTTP: each configured agent is a tool (input, thread_id); approvals are forms (elicitation)",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "description": "A JSON-RPC message of MCP"}}}},
                "responses": {"200": {"description": "MCP's answer (JSON or an SSE stream)"}, "401": error("Missing or unknown token (WWW-Authenticate: Bearer)")}}},
            "/v1/responses/{id}": {"get": {"operationId": "retrieveResponse", "summary": "A stored response (OpenAI's responses.retrieve); stream=true: its events from the start, starting_after=N leaves out those up to sequence number N",
                "parameters": [id("id")[0].clone(),
                    {"name": "stream", "in": "query", "required": false, "schema": {"type": "boolean"}},
                    {"name": "starting_after", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 0}}],
                "responses": {"200": object("A response object (or, streamed, its events)"), "401": error("Missing or unknown token"), "404": error("No such response")}}},
            "/v1/sessions/end": {"post": {"operationId": "endSessions", "summary": "Operators: end every inbox session of a subject issued up to now, on every server sharing the store (its API tokens keep working)",
                "requestBody": json_body("EndSessions"),
                "responses": {"200": object("{subject, ended_up_to}: sessions issued up to ended_up_to (microseconds since the epoch) are ended"),
                              "400": error("Invalid request, or no configured token has the subject"), "401": error("Missing or unknown token"),
                              "403": error("Not an operator token")}}},
            "/healthz": {"get": {"operationId": "health", "security": [], "responses": {"200": {"description": "ok"}}}}
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}
        }
    })
}
