//! Mistral chat completions (`POST https://api.mistral.ai/v1/chat/completions`).
//!
//! OpenAI-Chat-shaped, so the pieces that are the same are OpenAI Chat's
//! (tools and options, usage, the stream assembler, the error kinds);
//! what differs is here:
//!
//! - [`ids`]: tool call ids are exactly 9 alphanumerics (others mapped)
//! - [`to_wire`]: canonical request → request body (`thinking` chunks
//!   sent back, `prefix`, `max_tokens`, `random_seed`)
//! - [`decode_response`](mod@decode_response): content chunks (`thinking`
//!   of Magistral models), object arguments, `model_length`/`error`
//! - [`decode_request`](mod@decode_request): request body → canonical
//! - [`stream`]: SSE chunks → canonical stream events
//! - [`errors`]: Mistral's error bodies → typed errors

pub mod decode_request;
pub mod decode_response;
pub mod errors;
pub mod ids;
pub mod stream;
pub mod to_wire;

pub use decode_request::decode_request;
pub use decode_response::decode_response;
pub use errors::classify;
pub use to_wire::encode_request;

use crate::format::{Auth, Endpoint, Framing, WireFormat};

/// The API's name (the wire format's, in the registry and in `extra`).
pub const NAME: &str = "mistral";

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "mistral";

/// The API's translations and endpoint.
pub static FORMAT: WireFormat = WireFormat {
    name: NAME,
    provider: PROVIDER,
    decode_request: decode_request::decode_request,
    encode_request: to_wire::encode_request,
    decode_response: decode_response::decode_response,
    stream_decoder: || Box::new(crate::wire::Checked(stream::MistralStream::new())),
    classify: errors::classify,
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
