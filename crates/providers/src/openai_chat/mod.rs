//! OpenAI Chat Completions (`POST /v1/chat/completions`), and the many
//! servers that speak it (set a base URL).
//!
//! - [`to_wire`]: canonical request → request body
//! - [`from_wire`]: response body → canonical message; request body →
//!   canonical (for `parlance convert`); finish reasons, usage, errors
//! - [`stream`]: SSE chunks → canonical stream events

pub mod from_wire;
pub mod stream;
pub mod to_wire;

use crate::format::{Auth, Endpoint, WireFormat};

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "openai";

/// The API's translations and endpoint.
pub static FORMAT: WireFormat = WireFormat {
    name: "openai-chat",
    provider: PROVIDER,
    decode_request: from_wire::decode_request,
    encode_request: to_wire::encode_request,
    decode_response: from_wire::decode_response,
    stream_decoder: || Box::new(stream::ChatStream::new()),
    classify: from_wire::classify,
    endpoint: Endpoint {
        path: "/chat/completions",
        stream_path: "/chat/completions",
        auth: Auth::Bearer,
        headers: &[],
        finish_body: None,
        model_prefix: "",
    },
};
