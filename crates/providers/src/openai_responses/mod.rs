//! OpenAI Responses API (`POST /v1/responses`).
//!
//! Stateless by default: every request carries the whole history, with
//! `store: false` and `include: ["reasoning.encrypted_content"]` so that
//! reasoning survives between turns without server-side state (set
//! `extra.openai.store` to change it).
//!
//! - [`to_wire`]: canonical request → request body
//! - [`decode_response`](mod@decode_response): response body → canonical message (finish reason
//!   inferred from the output)
//! - [`decode_request`](mod@decode_request): request body → canonical (for `parlance convert`)
//! - [`errors`]: error objects → typed errors (HTTP error bodies have the
//!   Chat Completions shape: `openai_common`)
//! - [`stream`]: SSE events → canonical stream events

pub mod decode_request;
pub mod decode_response;
pub mod errors;
pub mod stream;
pub mod to_wire;

pub use crate::openai_common::classify;
pub use decode_request::decode_request;
pub use decode_response::decode_response;
pub use to_wire::encode_request;

use crate::format::{Auth, Endpoint, Framing, WireFormat};

/// The API's name (the wire format's, in the registry and in `extra`).
pub const NAME: &str = "openai-responses";

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "openai";

/// Makes a request stateless unless it says otherwise: nothing stored on
/// the server, encrypted reasoning returned so it can be sent back.
fn stateless(body: &mut serde_json::Value) {
    if let Some(b) = body.as_object_mut()
        && !b.contains_key("store")
    {
        b.insert("store".into(), serde_json::json!(false));
        b.entry("include")
            .or_insert_with(|| serde_json::json!(["reasoning.encrypted_content"]));
    }
}

/// The API's translations and endpoint.
pub static FORMAT: WireFormat = WireFormat {
    name: NAME,
    provider: PROVIDER,
    decode_request: decode_request::decode_request,
    encode_request: to_wire::encode_request,
    decode_response: decode_response::decode_response,
    stream_decoder: || Box::new(crate::wire::Checked(stream::ResponsesStream::new())),
    classify: crate::openai_common::classify,
    endpoint: Endpoint {
        path: "/responses",
        stream_path: "/responses",
        auth: Auth::Bearer,
        headers: &[],
        finish_body: Some(stateless),
        model_prefix: "",
        framing: Framing::Sse,
    },
};
