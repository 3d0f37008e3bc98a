//! Parlance's model providers.
//!
//! Each provider is a folder with the same parts: `to_wire` (canonical
//! request → the API's request body), `from_wire` (response body →
//! canonical message, finish reasons, usage, error bodies → typed errors;
//! and the API's request body → canonical, for `parlance convert`),
//! `stream` (the API's SSE events → canonical stream events). They are pure
//! (JSON in, JSON out); the HTTP, SSE framing, timeouts and retries are in
//! [`transport`], shared by all.
//!
//! Opaque data (signatures, redacted or encrypted reasoning, provider item
//! ids) is sent back only to the provider that produced it; sent to another,
//! it is dropped with a warning (see `docs/providers.md`).

pub mod anthropic;
pub mod formats;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;
pub mod transport;
pub mod wire;

pub use anthropic::Anthropic;
pub use formats::{WIRE_FORMATS, WireFormat, decode_stream, wire_format};
pub use gemini::Gemini;
pub use openai_chat::OpenAiChat;
pub use openai_responses::OpenAiResponses;
pub use transport::{HttpConfig, RetryPolicy, Secret, Transport};
pub use wire::{DecodedRequest, Encoded};
