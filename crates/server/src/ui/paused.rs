//! A run as a reviewer sees it: the turn it paused in, each call of that
//! turn with its state (waiting, or decided and how), the tool's
//! description and schema from the agent that made the run.

use parlance_agent::Agent;
use parlance_format::{Block, Message, Role, ToolCall, ToolResult};
use parlance_store::RunRecord;
use serde_json::Value;

use super::page::UiError;
use crate::api::outbound;
use crate::auth::Principal;
use crate::state::AppState;

/// Where a call of the paused turn stands.
#[derive(Debug, Clone)]
pub enum CallState {
    /// Waiting for a decision; a decision repeats this digest.
    Pending {
        /// The request's digest.
        digest: String,
    },
    /// Waits for a sub-agent's run (an agent used as a tool), whose own
    /// calls are decided on its page; the caller goes on once it ends.
    WaitsOn {
        /// The sub-agent's run.
        run: String,
    },
    /// Decided (here or elsewhere) or run without needing a decision.
    Done(Box<ToolResult>),
    /// Neither (a turn still being written).
    Unknown,
}

impl CallState {
    /// How a decided call was decided, in words.
    pub fn how(&self) -> String {
        match self {
            CallState::Done(r) => match &r.approval {
                Some(a) => a.decision.as_str().to_string(),
                None => format!("ran without a decision ({})", r.status.as_str()),
            },
            CallState::Pending { .. } => "waiting".into(),
            CallState::WaitsOn { run } => format!("waiting for the sub-agent's run {run}"),
            CallState::Unknown => "unknown".into(),
        }
    }
}

/// One call of the paused turn.
#[derive(Debug, Clone)]
pub struct Call {
    /// The model's call.
    pub call: ToolCall,
    /// Where it stands.
    pub state: CallState,
    /// What the model reads about the tool, when the agent is known here.
    pub description: Option<String>,
    /// The tool's argument schema, when the agent is known here.
    pub schema: Option<Value>,
}

impl Call {
    /// Whether it still waits.
    pub fn pending(&self) -> Option<&str> {
        match &self.state {
            CallState::Pending { digest } => Some(digest),
            _ => None,
        }
    }
}

/// A run and its last turn, as the viewer may read them.
pub struct Paused {
    /// The run as stored.
    pub run: RunRecord,
    /// Who owns its thread.
    pub owner: Option<String>,
    /// The configured agent that made it (`None`: an inline agent, or one
    /// no longer configured: it cannot be resumed from here).
    pub agent: Option<Agent>,
    /// The agent's name as recorded.
    pub agent_name: Option<String>,
    /// What the run was asked (its first user text).
    pub asked: Option<String>,
    /// What the model said along with its calls.
    pub said: Option<String>,
    /// The calls of the last turn, in order.
    pub calls: Vec<Call>,
}

impl Paused {
    /// Whether the run waits for decisions.
    pub fn waiting(&self) -> bool {
        self.run.status == "requires_approval"
    }
}

/// The run `id` if the viewer may see it (others get the same 404 as a
/// run that does not exist).
pub async fn load(state: &AppState, who: &Principal, id: &str) -> Result<Paused, UiError> {
    let run = match state.store.run(id).await {
        Ok(r) => r,
        Err(parlance_store::StoreError::NotFound(_)) => {
            return Err(UiError::not_found(&format!("Run {id}")));
        }
        Err(e) => return Err(e.into()),
    };
    let thread = state.store.thread(&run.thread_id).await?;
    if !who.operator && thread.owner != who.subject {
        return Err(UiError::not_found(&format!("Run {id}")));
    }
    let turn = state.store.run_turn(&run).await?;
    let messages = visible(state, who, turn.into_iter().map(|m| m.message).collect());
    Ok(build(state, run, thread.owner, &messages))
}

/// Messages as `who` may read them: artifacts for operators only, secrets
/// for nobody (the API's rule for every answer).
pub fn visible(state: &AppState, who: &Principal, messages: Vec<Message>) -> Vec<Message> {
    messages
        .into_iter()
        .map(|mut m| {
            if !who.operator {
                for b in &mut m.content {
                    if let Block::ToolResult { tool_result } = b {
                        tool_result.artifact = None;
                    }
                }
            }
            let value = serde_json::to_value(&m).expect("a message is JSON");
            Message::from_value(&outbound(state, who, value)).unwrap_or(m)
        })
        .collect()
}

/// The paused turn of `run`, from its messages.
pub fn build(state: &AppState, run: RunRecord, owner: Option<String>, turn: &[Message]) -> Paused {
    let agent_name = run.settings["name"].as_str().map(str::to_string);
    let agent = agent_name
        .as_deref()
        .and_then(|n| state.agents.get(n))
        .cloned();
    let asked = turn
        .iter()
        .find(|m| m.role == Role::User)
        .map(Message::text)
        .filter(|t| !t.trim().is_empty());
    let assistant = turn
        .iter()
        .rev()
        .find(|m| m.role == Role::Assistant && m.tool_calls().next().is_some());
    let said = assistant
        .map(Message::text)
        .filter(|t| !t.trim().is_empty());
    let answers: Vec<&Block> = turn
        .last()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.iter().collect())
        .unwrap_or_default();
    let calls = assistant
        .into_iter()
        .flat_map(Message::tool_calls)
        .map(|call| {
            let state = answers
                .iter()
                .find_map(|b| match b {
                    Block::ApprovalRequest { approval_request }
                        if approval_request.tool_call_id == call.id =>
                    {
                        Some(match &approval_request.run_id {
                            Some(run) => CallState::WaitsOn { run: run.clone() },
                            None => CallState::Pending {
                                digest: approval_request.digest.clone(),
                            },
                        })
                    }
                    Block::ToolResult { tool_result } if tool_result.tool_call_id == call.id => {
                        Some(CallState::Done(Box::new(tool_result.clone())))
                    }
                    _ => None,
                })
                .unwrap_or(CallState::Unknown);
            let tool = agent.as_ref().and_then(|a| a.tools().get(&call.name));
            Call {
                call: call.clone(),
                state,
                description: tool.and_then(|t| t.spec().description.clone()),
                schema: tool.map(|t| t.spec().input_schema.clone()),
            }
        })
        .collect();
    Paused {
        run,
        owner,
        agent,
        agent_name,
        asked,
        said,
        calls,
    }
}
