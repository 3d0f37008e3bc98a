//! The protocols other clients already speak, each served by a module of
//! its own over the same agents, store, approvals and tokens as
//! Parlance's own API.
//!
//! | module | path | clients |
//! |---|---|---|
//! | [`openai_chat`] | `POST /v1/chat/completions` | the OpenAI SDKs, and whatever speaks OpenAI's Chat Completions |
//! | [`openai_responses`] | `POST /v1/responses` | the OpenAI SDKs' Responses API (`previous_response_id` goes on in a thread) |
//! | [`ai_sdk`] | `POST /v1/agents/{agent}/chat` | the Vercel AI SDK's `useChat` (its UI message stream; approvals answered back) |
//! | [`ag_ui`] | `POST /v1/agents/{agent}/ag-ui` | AG-UI's `HttpAgent`, CopilotKit (approvals as interrupts) |
//! | [`a2a`] | `POST /a2a/{agent}`, its card at `/a2a/{agent}/.well-known/agent-card.json` | A2A 1.0 agents and clients (tasks are runs, `input-required` a waiting run) |
//! | [`mcp`] | `/mcp` (streamable HTTP), `parlance mcp serve` (stdio) | MCP hosts: each agent a tool, approvals as forms (elicitation) |
//!
//! Each reads a run's events through `crate::streams` (live here, or from
//! the store), so a reconnect loses nothing in any of them; what they all
//! need of a run waiting for decisions is here.

pub mod a2a;
pub mod ag_ui;
pub mod ai_sdk;
pub mod mcp;
pub mod openai_chat;
pub mod openai_responses;

use parlance_agent::Agent;
use parlance_format::{ApprovalRequest, Decision, DecisionKind};
use parlance_store::{RunRecord, StoreError};

use crate::error::ApiError;
use crate::state::AppState;
pub(crate) use crate::streams::approval_requests;

/// The configured agent `name`, else `404` naming it.
pub(crate) fn configured(state: &AppState, name: &str) -> Result<Agent, ApiError> {
    state
        .agents
        .get(name)
        .cloned()
        .ok_or_else(|| ApiError::not_found(&format!("agent {name}")))
}

/// The calls `run` waits for: the requests in its last message (read
/// from the run's own messages, not its whole thread).
pub(crate) async fn waiting_calls(
    state: &AppState,
    run: &RunRecord,
) -> Result<Vec<ApprovalRequest>, StoreError> {
    let turn = state.store.run_turn(run).await?;
    Ok(turn
        .last()
        .map(|m| approval_requests(&m.message.content))
        .unwrap_or_default())
}

/// The run of `thread` that waits for decisions, made by agent `name`;
/// `409` when none waits (`answers`: what the request was answering).
pub(crate) async fn waiting_run(
    state: &AppState,
    thread: &str,
    name: &str,
    answers: &str,
) -> Result<RunRecord, ApiError> {
    let run = match state.store.runs(thread).await?.pop() {
        Some(r) if r.status == "requires_approval" => r,
        _ => {
            return Err(ApiError::conflict(format!(
                "thread {thread}: no run waits for decisions ({answers})"
            )));
        }
    };
    if run.settings["name"].as_str() != Some(name) {
        return Err(ApiError::invalid_request(format!(
            "the run waiting on thread {thread} is not agent {name:?}'s: decide it with its own agent"
        )));
    }
    Ok(run)
}

/// A decision of `kind` on `request` (what the kind needs beside it —
/// arguments, reason, content — is the caller's to set).
pub(crate) fn decision(request: &ApprovalRequest, kind: DecisionKind) -> Decision {
    Decision {
        tool_call_id: request.tool_call_id.clone(),
        digest: request.digest.clone(),
        decision: kind,
        arguments: None,
        reason: None,
        content: None,
    }
}
