//! Google Gemini (`generateContent`, `streamGenerateContent?alt=sse`).
//!
//! - [`to_wire`]: canonical request → request body (thought signatures on
//!   the same part in the same place; the documented stand-in signature on
//!   calls Gemini did not make; tool schemas as `parametersJsonSchema`)
//! - [`decode_response`](mod@decode_response): response body → canonical message (`STOP` with
//!   calls is `tool_calls`, safety reasons are `content_filter`)
//! - [`decode_request`](mod@decode_request): request body → canonical (for `parlance convert`)
//! - [`errors`]: `google.rpc.Status` → typed errors with `RetryInfo` waits
//! - [`stream`]: SSE chunks → canonical stream events

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
pub const NAME: &str = "gemini";

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "google";

/// The API's translations and endpoint.
pub static FORMAT: WireFormat = WireFormat {
    name: NAME,
    provider: PROVIDER,
    decode_request: decode_request::decode_request,
    encode_request: to_wire::encode_request,
    decode_response: decode_response::decode_response,
    stream_decoder: || Box::new(crate::wire::Checked(stream::GeminiStream::new())),
    classify: errors::classify,
    endpoint: Endpoint {
        path: "/models/{model}:generateContent",
        stream_path: "/models/{model}:streamGenerateContent?alt=sse",
        auth: Auth::Header("x-goog-api-key"),
        headers: &[],
        finish_body: None,
        model_prefix: "models/",
        framing: Framing::Sse,
    },
};
