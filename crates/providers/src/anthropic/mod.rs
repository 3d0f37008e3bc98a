//! Anthropic Messages API (`POST /v1/messages`).
//!
//! - [`to_wire`]: canonical request → request body (thinking echoed
//!   byte-exact and in place, tool results first in the next user turn)
//! - [`decode_response`](mod@decode_response): response body → canonical message; stop reasons,
//!   usage (cache reads and writes added back to the input)
//! - [`decode_request`](mod@decode_request): request body → canonical (for `parlance convert`)
//! - [`errors`]: error bodies → typed errors
//! - [`stream`]: SSE events → canonical stream events

pub mod decode_request;
pub mod decode_response;
pub mod errors;
pub mod stream;
pub mod to_wire;

pub use decode_request::decode_request;
pub use decode_response::decode_response;
pub use errors::classify;
pub use to_wire::encode_request;

use crate::format::{Auth, Endpoint, Framing, WireFormat};

/// The API's name (the wire format's, in the registry and in `extra`).
pub const NAME: &str = "anthropic";

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "anthropic";

/// The API version header sent with every request.
pub const API_VERSION: &str = "2023-06-01";

/// The API's translations and endpoint.
pub static FORMAT: WireFormat = WireFormat {
    name: NAME,
    provider: PROVIDER,
    decode_request: decode_request::decode_request,
    encode_request: to_wire::encode_request,
    decode_response: decode_response::decode_response,
    stream_decoder: || Box::new(crate::wire::Checked(stream::AnthropicStream::new())),
    classify: errors::classify,
    endpoint: Endpoint {
        path: "/v1/messages",
        stream_path: "/v1/messages",
        auth: Auth::Header("x-api-key"),
        headers: &[("anthropic-version", API_VERSION)],
        finish_body: None,
        model_prefix: "",
        framing: Framing::Sse,
    },
};
