//! What travels between the server, the workflow and its activities:
//! small, serializable, and read the same by each.

use parlance_format::{Decision, Message};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the workflow of a run starts with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Begin {
    /// The agent's name in the worker's configuration.
    pub agent: String,
    /// The thread (the workflow's id).
    pub thread_id: String,
    /// The run's id, chosen before it starts.
    pub run_id: String,
    /// A new run, or a retry of the thread's failed run.
    pub work: Work,
    /// The worker's task queue (where the validator finds the agent).
    pub queue: String,
    /// An activity that does not heartbeat for this long is retried
    /// (its worker died): milliseconds.
    pub heartbeat_ms: u64,
}

/// How a run starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Work {
    /// A new run with this input.
    Run(Vec<Message>),
    /// A retry of the thread's failed run.
    Retry,
}

/// One activity's task: carry the run to its next rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advance {
    /// The agent's name.
    pub agent: String,
    /// The thread.
    pub thread_id: String,
    /// The run.
    pub run_id: String,
    /// How it starts, if it has not yet.
    pub work: Work,
    /// Decisions to apply, and the message of requests they decide (a
    /// retried activity that finds the run paused again, on other
    /// requests, knows they were applied).
    pub decisions: Option<(Value, Message)>,
}

/// Where a run rests: its end, or a pause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rest {
    /// The run.
    pub run_id: String,
    /// `completed`, `failed` or `requires_approval`.
    pub status: String,
    /// For a pause: the run's last two messages (the answer with the
    /// calls, the tool message with the requests), which the Update
    /// validator checks decisions against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<Message>,
}

impl Rest {
    /// Whether the run waits for decisions.
    pub fn paused(&self) -> bool {
        self.status == "requires_approval"
    }
}

/// Decisions from their JSON, each read by the format's reader (an error
/// names the decision and the field).
pub(crate) fn parse_decisions(
    decisions: &Value,
) -> Result<Vec<Decision>, Box<dyn std::error::Error + Send + Sync>> {
    let list = decisions
        .as_array()
        .ok_or("decisions: expected an array of decisions")?;
    list.iter()
        .enumerate()
        .map(|(i, d)| Decision::from_value(d).map_err(|e| format!("decisions[{i}]: {e}").into()))
        .collect()
}
