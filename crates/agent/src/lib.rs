//! Parlance's tool engine and agent run loop.
//!
//! A [`Tool`] has a name, a description the model reads and an input JSON
//! Schema. Its arguments are validated before it runs ([`validate`]); its
//! `ToolError`s, unexpected errors, panics and timeouts become tool results
//! the model can act on ([`engine`]); the calls of one turn run concurrently
//! and their results come back in call order.

pub mod engine;
pub mod tool;
pub mod validate;

pub use engine::{
    BudgetExceeded, CallReport, CallSettings, Check, DEFAULT_TOOL_TIMEOUT, EventSink, FailureCause,
    InvalidArgumentsBudget, OnToolException, ToolBox, ToolBoxError, ToolEvent,
};
pub use tool::{IntoToolContent, Json, Tool, ToolContext, ToolError, ToolFailure, schema_for};
pub use validate::{ArgValidator, SchemaError};
