//! The agent: a model, instructions, tools and limits, and the run loop
//! that drives them — call the model, run its tool calls, feed the
//! results back, until the model stops, a limit is hit, or a call waits
//! for a human's decision.
//!
//! - [`builder`]: building an agent ([`AgentBuilder`], [`Limits`]);
//! - `start`: the one way every run begins, handed to the loop, a resume
//!   or a retry;
//! - [`machine`]: the run loop's state machine — from a run's committed
//!   messages, what comes next (model, tools, decide, end); pure;
//! - `run_loop`: the built-in runner of that machine, step by step;
//! - `turn`: how a turn of tool calls ends (settle, keep, fail or pause),
//!   the same for the loop, a resume and a retry;
//! - `resume`: decisions on calls waiting for approval, checked into a
//!   plan, then applied;
//! - `retry`: a failed run's failed calls run again;
//! - `subagent`: an agent as a tool of another ([`Agent::as_tool`]);
//! - [`handoff`]: an agent hands the conversation to another;
//! - [`events`]: what a run reports as it goes ([`RunEvent`]) and hands
//!   over to be stored ([`Checkpoint`]).
//!
//! The ways in (`agent.run(…)`, `agent.resume(…)`, `agent.retry(…)`) are
//! in [`crate::run`].

pub mod builder;
pub mod events;
mod guard;
pub mod handoff;
mod input;
pub mod machine;
mod resume;
mod retry;
mod run_loop;
mod spend;
mod start;
mod state;
mod stop;
mod subagent;
mod turn;
mod window;

use std::sync::Arc;

use parlance_format::{ToolCall, ToolSpec};
use parlance_model::{IntoModel, Model, ModelOptions};
use serde_json::{Value, json};

pub use builder::{AgentBuilder, Limits, OutputValidator};
pub use events::{Checkpoint, CheckpointError, ChildOutcome, ChildRun, RunEvent, Step};
pub use guard::Screened;
pub use input::{Resume, RunInput};
pub use resume::DecisionError;
pub(crate) use retry::RetryOf;
pub(crate) use start::Start;

use crate::engine::ToolBox;
use crate::tool::Deps;
use crate::toolset::{OfferCache, Toolset};
use crate::validate::ArgValidator;

/// What every handle of one agent shares.
struct Inner {
    name: Option<String>,
    model: Arc<dyn Model>,
    instructions: Option<String>,
    tools: Arc<ToolBox>,
    specs: Arc<[ToolSpec]>,
    /// Tools from outside (MCP servers), asked before each model call.
    toolsets: Vec<Arc<dyn Toolset>>,
    /// The agent's tools merged with its toolsets', as last offered.
    offer: OfferCache,
    limits: Limits,
    options: ModelOptions,
    output: Option<ArgValidator>,
    approval_key: Option<Arc<[u8]>>,
    /// Keys whose digests are still accepted (a rotated secret's).
    previous_approval_keys: Vec<Arc<[u8]>>,
    /// The price table for messages' costs; `None`: the built-in one.
    prices: Option<Arc<parlance_prices::PriceTable>>,
    /// The application's check of a structured final answer.
    output_validator: Option<builder::OutputValidator>,
    /// The application's guardrails, by point.
    guards: guard::Guards,
    /// How runs keep their context inside the model's window.
    context: Option<crate::context::ContextPolicy>,
    /// What runs, threads and owners may spend.
    budget: Option<crate::budget::Budget>,
    /// What it does, for the agents that hand over to it.
    description: Option<String>,
    /// The agents it may hand the conversation to.
    handoffs: Vec<Agent>,
}

/// A model, instructions, tools and limits. Cheap to clone.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
    deps: Option<Deps>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.inner.model.model_id())
            .field("tools", &self.inner.tools)
            .field("limits", &self.inner.limits)
            .finish()
    }
}

impl Agent {
    /// Starts building an agent around a model (an `HttpModel`, an
    /// `Arc<dyn Model>`...).
    pub fn builder(model: impl IntoModel) -> AgentBuilder {
        AgentBuilder::new(model.into_model())
    }

    /// The digest a decision must repeat for `call` (see `digest.rs`).
    fn digest(&self, run_id: &str, call: &ToolCall) -> String {
        crate::digest::call_digest(self.inner.approval_key.as_deref(), run_id, call)
    }

    /// Whether `digest` is `call`'s in run `run_id`, with the approval key
    /// or one of the previous ones (made before a rotation).
    fn digest_matches(&self, run_id: &str, call: &ToolCall, digest: &str) -> bool {
        digest == self.digest(run_id, call)
            || self
                .inner
                .previous_approval_keys
                .iter()
                .any(|k| digest == crate::digest::call_digest(Some(k), run_id, call))
    }

    /// The same agent (tools, validators and model shared, nothing
    /// rebuilt) whose tools find `deps` in their context
    /// ([`ToolContext::deps`](crate::ToolContext::deps)): a database pool,
    /// the caller's identity, or what a language binding needs to reach
    /// its caller (its event loop). Runs and resumes of the returned agent,
    /// streamed or stored on a thread, all carry them.
    pub fn with_deps<T: std::any::Any + Send + Sync>(&self, deps: T) -> Agent {
        Agent {
            inner: Arc::clone(&self.inner),
            deps: Some(Arc::new(deps)),
        }
    }

    /// The agent's tools.
    pub fn tools(&self) -> &ToolBox {
        &self.inner.tools
    }

    /// The agent's toolsets (MCP servers...).
    pub fn toolsets(&self) -> &[Arc<dyn Toolset>] {
        &self.inner.toolsets
    }

    /// Stops every toolset (ends MCP server processes, closes their
    /// sessions). A later run starts them again. Dropping the last handle
    /// of the agent and of its toolsets stops them too.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.inner.toolsets.iter().map(|t| t.shutdown())).await;
    }

    /// The agent's limits.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The price table of its messages' costs (and of models' windows).
    fn prices(&self) -> &parlance_prices::PriceTable {
        match &self.inner.prices {
            Some(t) => t,
            None => parlance_prices::PriceTable::builtin(),
        }
    }

    /// The agent's context policy, if it has one.
    pub fn context(&self) -> Option<&crate::context::ContextPolicy> {
        self.inner.context.as_ref()
    }

    /// The agent's budget, if it has one.
    pub fn budget(&self) -> Option<&crate::budget::Budget> {
        self.inner.budget.as_ref()
    }

    /// The agent's name, when it was given one.
    pub fn name(&self) -> Option<&str> {
        self.inner.name.as_deref()
    }

    /// The agent's settings as JSON, to record with each run.
    pub fn settings(&self) -> Value {
        let l = &self.inner.limits;
        json!({
            "name": self.inner.name,
            "provider": self.inner.model.provider(),
            "model": self.inner.model.model_id(),
            "instructions": self.inner.instructions,
            "tools": self.inner.specs.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            "toolsets": self.inner.toolsets.iter().map(|t| t.name()).collect::<Vec<_>>(),
            "limits": {
                "max_model_calls": l.max_model_calls,
                "max_invalid_arguments": l.max_invalid_arguments,
                "tool_timeout_ms": l.tool_timeout.as_millis() as u64,
                "tool_concurrency": l.tool_concurrency,
                "on_tool_exception": l.on_tool_exception,
                "max_tool_output": l.max_tool_output,
                "output_retries": l.output_retries,
                "output_hold": l.output_hold,
            },
            "guardrails": self.inner.guards.names(),
            "context": self.inner.context.as_ref().map(|c| c.settings()),
            "budget": self.inner.budget.as_ref().map(|b| b.settings()),
            "options": self.inner.options,
        })
    }
}
