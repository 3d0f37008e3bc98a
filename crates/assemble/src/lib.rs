//! A Parlance configuration made into agents: what `parlance serve`,
//! `parlance run` and `parlance chat` build from the same TOML.
//!
//! - [`agent`] and [`agent_with`]: an agent of the configuration — its
//!   model (a provider's, a fallback list, or the embedded local model),
//!   its tools ([`http_tool`]s, external tools, `[[mcp]]` toolsets), its
//!   guardrails, context policy, budget and limits — each setting at fault
//!   named in a [`BuildError`].
//! - [`http_tool`]: `kind = "http"` tools, the validated arguments POSTed,
//!   with an `Idempotency-Key`, retried when the process itself runs short
//!   of descriptors.
//! - [`secrets`]: every secret the configuration knows and the one place
//!   that scrubs them from what is stored, answered and logged.
//!
//! Apart from the HTTP server so that running an agent from the command
//! line does not go through it: `parlance-server` serves what this crate
//! builds.

mod agents;
pub mod http_tool;
pub mod secrets;

pub use agents::*;
