//! Parlance: an agent runtime. One conversation format, tools whose
//! arguments are validated before they run, every major model provider,
//! threads stored in SQLite or PostgreSQL, an HTTP API.
//!
//! This crate is the one to depend on (published as `parlance-ai`,
//! imported as `parlance`). It re-exports the public API of the workspace's
//! crates; its features choose what is built:
//!
//! | feature | what | default |
//! |---|---|---|
//! | `providers` | OpenAI (Chat, Responses), Anthropic, Gemini; [`model`] from a string | yes |
//! | `store` | threads in SQLite or PostgreSQL (`parlance::store`) | no |
//! | `server` | the HTTP API (`parlance::server`) | no |
//! | `local` | the embedded model (llama.cpp, built by cmake): `model("local")` | no |
//!
//! A provider, a tool, one run:
//!
//! ```no_run
//! use parlance::{Agent, JsonSchema, Tool};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct City {
//!     /// The city's name, e.g. "Paris".
//!     name: String,
//! }
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let weather = Tool::new("weather", "Today's weather in a city.", |city: City| async move {
//!     Ok(format!("Sunny and 21 °C in {}", city.name))
//! });
//! let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?).tool(weather).build()?;
//! let answer = agent.run("What's the weather in Paris?").await.into_result()?;
//! println!("{}", answer.text());
//! # Ok(()) }
//! ```
//!
//! More, one per capability, in the crate's `examples/`.
//!
//! # Deriving a tool's schema
//!
//! A tool's argument type derives `Deserialize` and `JsonSchema`. The
//! derives name their crates, so add `serde` and `schemars` to your
//! `Cargo.toml`, or point them at the re-exports:
//! `#[serde(crate = "parlance::serde")]`,
//! `#[schemars(crate = "parlance::schemars")]`.

#![warn(missing_docs)]

use std::sync::Arc;

pub use parlance_agent::{
    Agent, AgentBuilder, ArgumentProblem, Budget, Caps, Checkpoint, Compaction, ContextPolicy,
    ContextStrategy, DecisionError, Deps, GuardPoint, Guarded, Guardrail, IntoToolContent, Json,
    Limits, OnToolException, OutputHold, PathStep, Resume, RunEvent, RunInput, Step, Tool,
    ToolContext, ToolError, ToolFailure, Verdict,
};
pub use parlance_format::{
    ApprovalRequest, Block, Decision, DecisionKind, FinishReason, Message, Response, Role,
    RunError, RunStatus, Spend, ToolCall, ToolResult, ToolSpec, ToolStatus, Turn, Usage,
};
/// [`Fallback`]: a model that is an ordered list of models, and the kinds
/// of error it moves on by.
pub use parlance_model::fallback;
pub use parlance_model::{
    Fallback, FallbackError, FallbackOn, IntoModel, Model, ModelError, ModelOptions, ModelRequest,
    OutputSchema, Reasoning, SharedCooldowns, StreamEvent, ToolChoice, panic_message,
};
pub use schemars::{self, JsonSchema};
pub use serde;
pub use serde_json::{self, json};

/// The crates behind this one, whole.
pub use parlance_agent as agent;
pub use parlance_format as format;
/// Every canonical document by kind: one reader for `parlance validate` and
/// the packages' `format` modules.
pub use parlance_model::documents;
/// The scripted model: a [`Model`] that answers from a script, for tests.
pub use parlance_model::scripted;
/// Models for your own tests: [`TestModel`](testing::TestModel) (calls
/// every tool with arguments made from its schema),
/// [`FunctionModel`](testing::FunctionModel), [`ScriptedModel`](testing::ScriptedModel),
/// and [`Recorder`](testing::Recorder) / [`Replay`](testing::Replay) (a
/// real model's exchanges written to a cassette, then served offline).
pub use parlance_model::testing;
/// Model prices and the cost of a usage (the built-in genai-prices table).
pub use parlance_prices as prices;
pub use parlance_prices::PriceTable;

/// Model providers: the registry, the builder, the wire formats.
#[cfg(feature = "providers")]
pub use parlance_providers as providers;
#[cfg(feature = "providers")]
pub use parlance_providers::{BuildError, HttpModel, ModelBuilder, Provider};

/// Threads: conversations, runs, artifacts and pending approvals
/// (`parlance-store`), and [`ThreadRunner`](store::ThreadRunner), which runs
/// an agent on them (`parlance-runtime`).
#[cfg(feature = "store")]
pub mod store {
    pub use parlance_runtime::{
        DEFAULT_MAX_ATTEMPTS, NotResumed, ResumeError, Resumed, Resumer, RunHandle, StoreCooldowns,
        TakenOver, ThreadRunner,
    };
    pub use parlance_store::*;
}

/// OpenTelemetry export of the runs' GenAI spans (`invoke_agent`, `chat`,
/// `execute_tool`) with OTLP over HTTP: [`otel::init`] for a program with
/// no `tracing` subscriber, [`otel::layer`] to add to yours. With the
/// `otel` feature.
#[cfg(feature = "otel")]
pub use parlance_otel as otel;

/// MCP servers' tools as an agent's toolset ([`mcp::McpServer`], given
/// with [`AgentBuilder::toolset`]), with the `mcp` feature.
#[cfg(feature = "mcp")]
pub use parlance_mcp as mcp;
/// The HTTP API.
#[cfg(feature = "server")]
pub use parlance_server as server;

/// The embedded local model.
#[cfg(feature = "local")]
pub use parlance_local as local;

/// A model from a string: `"anthropic:claude-sonnet-4-5"`,
/// `"openai:gpt-4o-mini"`, `"openai-responses:gpt-5"`,
/// `"gemini:gemini-2.5-flash"`, and with the `local` feature `"local"`
/// (the default embedded model) or `"local:PATH"`. The key comes from the
/// provider's variable (`ANTHROPIC_API_KEY`...): a missing one is an error
/// here, before any request. For a key, base URL or headers of your own,
/// use [`Provider`]'s builder.
#[cfg(feature = "providers")]
pub fn model(spec: &str) -> Result<Arc<dyn Model>, BuildError> {
    match parlance_providers::ModelSpec::parse(spec)? {
        parlance_providers::ModelSpec::Local { path } => local_model(spec, path),
        parlance_providers::ModelSpec::Remote { .. } => {
            Ok(Arc::new(parlance_providers::model(spec)?))
        }
    }
}

#[cfg(all(feature = "providers", feature = "local"))]
fn local_model(spec: &str, path: Option<&str>) -> Result<Arc<dyn Model>, BuildError> {
    // `local:NAME`: a GGUF path, or a model found in Parlance's cache,
    // Ollama's store or LM Studio's folder.
    parlance_local::LocalModel::from_spec(spec)
        .map(|m| Arc::new(m) as Arc<dyn Model>)
        .map_err(|e| BuildError::LocalModel {
            path: path.map_or_else(
                || parlance_local::default_model_path().display().to_string(),
                str::to_string,
            ),
            message: e.to_string(),
        })
}

#[cfg(all(feature = "providers", not(feature = "local")))]
fn local_model(spec: &str, _path: Option<&str>) -> Result<Arc<dyn Model>, BuildError> {
    Err(BuildError::Local {
        spec: spec.to_string(),
    })
}
