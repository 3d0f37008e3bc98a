//! Building an agent: its model, instructions, tools, limits and options.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use parlance_format::ToolSpec;
use parlance_model::{Model, ModelOptions, OutputSchema};
use parlance_prices::PriceTable;
use serde_json::Value;

use super::guard::Guards;
use super::{Agent, Inner};
use crate::budget::Budget;
use crate::context::ContextPolicy;
use crate::engine::{DEFAULT_MAX_TOOL_OUTPUT, OnToolException, ToolBox};
use crate::guardrail::{Guardrail, OutputHold};
use crate::validate::ArgValidator;
use crate::{DEFAULT_TOOL_TIMEOUT, Tool, ToolBoxError, Toolset};

/// Limits and policies of an agent's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Model calls allowed in one run.
    pub max_model_calls: u32,
    /// Calls with invalid arguments tolerated in one run (tools may set their own).
    pub max_invalid_arguments: u32,
    /// Time a tool call may take, unless the tool sets its own.
    pub tool_timeout: Duration,
    /// Tool calls of one turn run at once (`None`: all).
    pub tool_concurrency: Option<usize>,
    /// What an unexpected tool failure becomes.
    pub on_tool_exception: OnToolException,
    /// The most a tool's result may hold, in bytes of JSON (default 1 MiB;
    /// tools may set their own). Beyond it the result is replaced by a
    /// short error the model reads; nothing huge is kept.
    pub max_tool_output: usize,
    /// Final answers that do not fit (not JSON, not matching the output
    /// schema, refused by the output validator) sent back to the model
    /// with the problems, per run, before it ends `invalid_output`
    /// (default 1).
    pub output_retries: u32,
    /// How a streamed answer's text waits for the output guardrails
    /// (without any, text is sent as it comes).
    pub output_hold: OutputHold,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_model_calls: 10,
            max_invalid_arguments: 3,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            tool_concurrency: None,
            on_tool_exception: OnToolException::ReturnToModel,
            max_tool_output: DEFAULT_MAX_TOOL_OUTPUT,
            output_retries: 1,
            output_hold: OutputHold::Answer,
        }
    }
}

/// Builds an [`Agent`] (see [`Agent::builder`]).
pub struct AgentBuilder {
    name: Option<String>,
    model: Arc<dyn Model>,
    instructions: Option<String>,
    tools: Vec<Tool>,
    toolsets: Vec<Arc<dyn Toolset>>,
    limits: Limits,
    options: ModelOptions,
    approval_key: Option<Arc<[u8]>>,
    previous_approval_keys: Vec<Arc<[u8]>>,
    prices: Option<Arc<PriceTable>>,
    output_validator: Option<OutputValidator>,
    guards: Guards,
    context: Option<ContextPolicy>,
    budget: Option<Budget>,
    description: Option<String>,
    handoffs: Vec<Agent>,
}

/// Checks a structured final answer beyond its schema (see
/// [`AgentBuilder::output_validator`]): `Err` holds the problems, one
/// sentence each, that the model reads.
pub type OutputValidator =
    Arc<dyn Fn(Value) -> BoxFuture<'static, Result<(), Vec<String>>> + Send + Sync>;

impl AgentBuilder {
    pub(super) fn new(model: Arc<dyn Model>) -> Self {
        AgentBuilder {
            name: None,
            model,
            instructions: None,
            tools: Vec::new(),
            toolsets: Vec::new(),
            limits: Limits::default(),
            options: ModelOptions::default(),
            approval_key: None,
            previous_approval_keys: Vec::new(),
            prices: None,
            output_validator: None,
            guards: Guards::default(),
            context: None,
            budget: None,
            description: None,
            handoffs: Vec::new(),
        }
    }

    /// What this agent does, for the agents that hand conversations to it
    /// (their `transfer_to_NAME` tool's description).
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Lets this agent hand the conversation to `agent` (which needs a
    /// name): its model is offered a tool `transfer_to_NAME`; calling it
    /// makes the rest of the run, and the next turns, `agent`'s (see
    /// `handoff.rs`).
    pub fn handoff(mut self, agent: Agent) -> Self {
        self.handoffs.push(agent);
        self
    }

    /// Signs the digests of calls waiting for approval with this key
    /// (HMAC, bound to the run's id): decisions can then be made only for
    /// calls this agent paused on, in that run. A server passes its secret.
    pub fn approval_key(mut self, key: impl Into<Arc<[u8]>>) -> Self {
        self.approval_key = Some(key.into());
        self
    }

    /// Also accepts digests signed with this earlier key (a server whose
    /// secret rotated): a run that paused before the rotation stays
    /// decidable. New digests are signed with [`Self::approval_key`].
    pub fn previous_approval_key(mut self, key: impl Into<Arc<[u8]>>) -> Self {
        self.previous_approval_keys.push(key.into());
        self
    }

    /// A name, recorded with each run (so a server can resume it).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The system instructions.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Offers a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Offers a toolset's tools (an MCP server's: `parlance_mcp::McpServer`)
    /// next to the agent's own, under the same engine. It is asked before
    /// each model call (started by the first), so its tools may change
    /// between calls. A name two sources offer is prefixed in each toolset
    /// (see [`Toolset::prefix`]).
    pub fn toolset(mut self, toolset: impl Toolset) -> Self {
        self.toolsets.push(Arc::new(toolset));
        self
    }

    /// Prices each assistant message's usage with this table (its
    /// `cost`, and the response's sum) in place of the built-in one
    /// ([`PriceTable::builtin`]). Put the built-in table behind yours with
    /// [`PriceTable::then`] to extend it rather than replace it.
    pub fn prices(mut self, table: impl Into<Arc<PriceTable>>) -> Self {
        self.prices = Some(table.into());
        self
    }

    /// Limits and policies.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Model options (sampling, reasoning, tool choice...).
    pub fn options(mut self, options: ModelOptions) -> Self {
        self.options = options;
        self
    }

    /// The final answer must be JSON satisfying `schema`; it becomes the
    /// response's `output`.
    pub fn output_schema(mut self, name: impl Into<String>, schema: Value) -> Self {
        self.options.output_schema = Some(OutputSchema::new(name, schema));
        self
    }

    /// Checks the structured final answer once it matches the output
    /// schema (a rule the schema cannot say: a date in the future, an id
    /// that exists). Its problems go back to the model like the schema's,
    /// within [`Limits::output_retries`], before the run ends
    /// `invalid_output`. Without an output schema it is never called.
    ///
    /// ```
    /// # use parlance_agent::Agent;
    /// # use parlance_model::scripted::ScriptedModel;
    /// # use serde_json::json;
    /// let agent = Agent::builder(ScriptedModel::new([]))
    ///     .output_schema("refund", json!({"type": "object", "properties": {"amount": {"type": "number"}}}))
    ///     .output_validator(|v| Box::pin(async move {
    ///         match v["amount"].as_f64() {
    ///             Some(a) if a > 100.0 => Err(vec![format!("/amount: {a} is over the 100 EUR limit")]),
    ///             _ => Ok(()),
    ///         }
    ///     }))
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn output_validator(
        mut self,
        check: impl Fn(Value) -> BoxFuture<'static, Result<(), Vec<String>>> + Send + Sync + 'static,
    ) -> Self {
        self.output_validator = Some(Arc::new(check));
        self
    }

    /// Adds a guardrail (see [`crate::guardrail`]); guardrails of one
    /// point run in the order they were added, each seeing the last one's
    /// replacement.
    pub fn guardrail(mut self, guardrail: Guardrail) -> Self {
        self.guards.add(guardrail);
        self
    }

    /// Keeps each run's context inside the model's window: fail early,
    /// drop the oldest turns, or compact them into a summary (see
    /// [`crate::context`]). Without a policy, what the thread holds is
    /// sent as it is.
    pub fn context(mut self, policy: ContextPolicy) -> Self {
        self.context = Some(policy);
        self
    }

    /// Limits what each run, each thread and each owner may spend (see
    /// [`crate::budget`]): tokens, cost, model calls, tool calls.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// Compiles every schema; fails on a bad schema, a duplicate tool
    /// name, a context policy out of range or a budget that cannot be used.
    pub fn build(self) -> Result<Agent, ToolBoxError> {
        if let Some(c) = &self.context {
            c.check()?;
        }
        if let Some(b) = &self.budget {
            b.check()?;
        }
        let mut tools = ToolBox::new();
        for t in self.tools {
            tools.add(t)?;
        }
        for (i, a) in self.handoffs.iter().enumerate() {
            if a.name().is_none_or(str::is_empty) {
                return Err(ToolBoxError::Handoff(format!(
                    "handoffs[{i}]: the agent has no name (give it one: .name(\"billing\"))"
                )));
            }
            tools.add(super::handoff::transfer_tool(a))?;
        }
        let output = match &self.options.output_schema {
            Some(s) => Some(ArgValidator::as_written(&s.name, &s.schema)?),
            None => None,
        };
        let specs: Arc<[ToolSpec]> = tools.specs().into();
        Ok(Agent {
            deps: None,
            inner: Arc::new(Inner {
                name: self.name,
                model: self.model,
                instructions: self.instructions,
                tools: Arc::new(tools),
                specs,
                toolsets: self.toolsets,
                offer: Default::default(),
                limits: self.limits,
                options: self.options,
                output,
                approval_key: self.approval_key,
                previous_approval_keys: self.previous_approval_keys,
                prices: self.prices,
                output_validator: self.output_validator,
                guards: self.guards,
                context: self.context,
                budget: self.budget,
                description: self.description,
                handoffs: self.handoffs,
            }),
        })
    }
}
