//! What the Python and npm packages share, so that a capability of the
//! Rust core reaches both through one place: each binding keeps only what
//! is its language's own (the event-loop bridge, its objects, its type
//! hints), and calls this for the rest.
//!
//! - [`input`]: a run's input, earlier turns, a paused response,
//!   decisions — read from JSON values with the format's strict readers.
//! - [`settings`]: an agent's settings, in each language's spelling
//!   ([`Dialect`]), and the builder they make.
//! - [`models`]: a provider's model with the user's settings (base URL,
//!   key, headers, timeouts, retries, Azure's and Bedrock's own).
//! - [`local`]: the embedded local model's file (with the `local` feature).
//! - [`mcp`]: an MCP server's settings, in each language's spelling, as
//!   a toolset (the server's TOML `[[mcp]]` is checked by the same code).
//! - [`output`]: a structured output's problems from the package's own
//!   validator, in the engine's wording.
//! - [`run`]: one entry for every way to run ([`Work`]: a run, a resume,
//!   a retry, the same on a stored thread), awaited or streamed.
//! - [`checkpoint`]: the application's checkpoint function, handed each
//!   step of a run as it completes.
//! - [`events`]: a run event as JSON, in the language's spelling.
//! - [`guardrail`]: a guardrail the package's user writes, its check and
//!   verdict as JSON in the language's spelling.
//! - [`store`]: a thread store opened with its settings, and every
//!   operation on it as one JSON query.
//! - [`toolset`]: a toolset the package's user writes: a function asked
//!   for its tools before each model call.
//! - [`traces`]: the GenAI spans exported with OTLP, when the package's
//!   user asks, the runtime's logs still reaching the language's logger.
//! - [`tools`]: what a tool of the package returns, as content blocks.
//! - [`error`]: every error of the core as one classified [`BindError`],
//!   which each binding raises as its own exception class.
//!
//! ```
//! use parlance_bindings::{Dialect, Work, input, run, settings::AgentSettings};
//! use parlance::{Message, scripted::ScriptedModel};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), parlance_bindings::BindError> {
//! let s = AgentSettings::read(&json!({"instructions": "Be brief.", "maxModelCalls": 4}), Dialect::Node)?;
//! let agent = s.builder(ScriptedModel::new([Message::assistant("Hi!")])).build()
//!     .map_err(parlance_bindings::BindError::config)?;
//! let work = Work::Run(input::run_input(&json!("Hello"))?);
//! let response = run::complete(&agent, work).await?;
//! assert_eq!(response.text(), "Hi!");
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod checkpoint;
pub mod error;
pub mod events;
pub mod guardrail;
pub mod input;
pub mod local;
pub mod mcp;
pub mod models;
pub mod output;
pub mod prices;
pub mod run;
pub mod settings;
pub mod store;
pub mod tools;
pub mod toolset;
pub mod traces;

pub use error::{BindError, ErrorKind};
pub use run::{Events, ThreadJob, Work};
pub use settings::Dialect;
