//! The agents a worker runs, found by the Update validator.
//!
//! A validator is a plain function of the workflow's state; it cannot be
//! handed the worker's agents. They are kept here by task queue (one
//! process may run workers of several queues, as the tests do), set when
//! the worker starts.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use parlance_agent::Agent;
use parlance_runtime::AgentsByName;

fn agents() -> &'static Mutex<HashMap<String, AgentsByName>> {
    static AGENTS: OnceLock<Mutex<HashMap<String, AgentsByName>>> = OnceLock::new();
    AGENTS.get_or_init(Default::default)
}

/// The worker of `queue` in this process runs these agents.
pub(crate) fn register(queue: &str, by_name: AgentsByName) {
    agents()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(queue.to_string(), by_name);
}

/// The agent `name` of the worker of `queue`.
pub(crate) fn agent(queue: &str, name: &str) -> Option<Agent> {
    let by_name = agents()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(queue)
        .cloned()?;
    by_name(name)
}
