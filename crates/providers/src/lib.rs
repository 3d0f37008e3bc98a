//! Parlance's model providers.
//!
//! A model from a string, its key from the environment:
//!
//! ```no_run
//! let model = parlance_providers::model("anthropic:claude-sonnet-4-5")?;
//! # Ok::<(), parlance_providers::BuildError>(())
//! ```
//!
//! or with everything set by hand:
//!
//! ```no_run
//! use parlance_providers::Provider;
//! let model = Provider::ANTHROPIC
//!     .model("claude-sonnet-4-5")
//!     .api_key("sk-ant-...")
//!     .build()?;
//! # Ok::<(), parlance_providers::BuildError>(())
//! ```
//!
//! Every provider is one [`HttpModel`]: a [`WireFormat`] (the API's pure
//! translations) sent through the shared [`transport`] (HTTP, SSE framing,
//! timeouts, retries). The [`registry`] names the providers (wire format,
//! base URL, key variable). Each API is a folder with the same parts:
//! `to_wire` (canonical request → the API's request body),
//! `decode_response` (response body → canonical message, finish reasons,
//! usage), `decode_request` (the API's request body → canonical, for
//! `parlance convert`), `errors` (error bodies → typed errors), `stream`
//! (the API's SSE events → canonical stream events), and `mod.rs` holding
//! its `FORMAT`. They are pure (JSON in, JSON out); what the two OpenAI
//! APIs share is in one module.
//!
//! Opaque data (signatures, redacted or encrypted reasoning, provider item
//! ids) is sent back only to the provider that produced it; sent to another,
//! it is dropped with a warning (see `docs/providers.md`).

#![warn(missing_docs)]

pub mod anthropic;
pub mod azure;
pub mod bedrock;
mod builder;
pub mod convert;
mod error;
pub mod format;
mod formats;
pub mod gemini;
mod http_model;
pub mod mistral;
pub mod ollama;
pub mod openai_chat;
mod openai_common;
pub mod openai_responses;
pub mod registry;
mod think_tags;
pub mod translate;
pub mod transport;
pub mod wire;

pub use builder::{DEFAULT_USER_AGENT, ModelBuilder, model};
pub use error::BuildError;
pub use format::{Auth, Endpoint, Framing, WireFormat, decode_stream};
pub use formats::{WIRE_FORMATS, wire_format};
pub use http_model::HttpModel;
pub use parlance_model::RequestDocument;
pub use registry::{Access, LOCAL, ModelSpec, PROVIDERS, Provider};
pub use translate::write_request;
pub use transport::{HttpConfig, RetryPolicy, Secret, Transport};
pub use wire::{DecodedRequest, Encoded};
