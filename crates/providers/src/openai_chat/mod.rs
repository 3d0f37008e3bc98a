//! OpenAI Chat Completions (`POST /v1/chat/completions`), and the many
//! servers that speak it (set a base URL).
//!
//! - [`to_wire`]: canonical request → request body
//! - [`decode_response`](mod@decode_response): response body → canonical message (finish
//!   reasons, usage, tool calls)
//! - [`decode_request`](mod@decode_request): request body → canonical (for `parlance convert`)
//! - [`stream`]: SSE chunks → canonical stream events
//! - error bodies → typed errors: shared with Responses (`openai_common`)

pub mod decode_request;
pub mod decode_response;
pub mod stream;
pub mod to_wire;

pub use crate::openai_common::classify;
pub use decode_request::decode_request;
pub use decode_response::decode_response;
pub use to_wire::encode_request;

use crate::format::{Auth, Endpoint, Framing, WireFormat};

/// The API's name (the wire format's, in the registry and in `extra`).
pub const NAME: &str = "openai-chat";

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "openai";

/// The API's translations and endpoint.
pub static FORMAT: WireFormat = WireFormat {
    name: NAME,
    provider: PROVIDER,
    decode_request: decode_request::decode_request,
    encode_request: to_wire::encode_request,
    decode_response: decode_response::decode_response,
    stream_decoder: || Box::new(crate::wire::Checked(stream::ChatStream::new())),
    classify: crate::openai_common::classify,
    endpoint: Endpoint {
        path: "/chat/completions",
        stream_path: "/chat/completions",
        auth: Auth::Bearer,
        headers: &[],
        finish_body: None,
        model_prefix: "",
        framing: Framing::Sse,
    },
};
