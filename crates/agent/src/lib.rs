//! Parlance's tool engine and agent run loop.
//!
//! A [`Tool`] has a name, a description the model reads and an input JSON
//! Schema. Its arguments are validated before it runs ([`validate`]); its
//! `ToolError`s, unexpected errors, panics and timeouts become tool results
//! the model can act on ([`engine`]); the calls of one turn run concurrently
//! and their results come back in call order. An [`Agent`] runs the loop
//! (model → tools → model …), pauses for human approval, and resumes from
//! plain JSON ([`agent`]).

#![warn(missing_docs)]

pub mod agent;
pub mod budget;
pub mod context;
mod current;
mod digest;
pub mod engine;
pub mod guardrail;
pub mod run;
pub mod telemetry;
pub mod tool;
pub mod toolset;
pub mod validate;

pub use agent::{
    Agent, AgentBuilder, Checkpoint, CheckpointError, ChildOutcome, ChildRun, DecisionError,
    Limits, Resume, RunEvent, RunInput, Screened, Step,
};
pub use budget::{Budget, BudgetError, Caps, OnExhausted};
pub use context::{Compaction, ContextError, ContextPolicy, Strategy as ContextStrategy};
pub use current::current_deps;
pub use engine::{
    BudgetExceeded, CallReport, CallSettings, Check, DEFAULT_MAX_TOOL_OUTPUT, DEFAULT_TOOL_TIMEOUT,
    EventSink, FailureCause, InvalidArgumentsBudget, OnToolException, ToolBox, ToolBoxError,
    ToolEvent,
};
pub use guardrail::{GuardPoint, Guarded, Guardrail, OutputHold, Verdict};
pub use parlance_format::ThreadSpend;
pub use run::{ResumeBuilder, RunBuilder, RunStream};
pub use tool::{
    Deps, IntoToolContent, Json, SERVER_RESOURCES, SharedError, Tool, ToolContext, ToolError,
    ToolFailure, ToolFn, idempotency_key, schema_for,
};
pub use toolset::{Toolset, ToolsetError};
pub use validate::{ArgValidator, ArgumentProblem, PathStep, SchemaError};
