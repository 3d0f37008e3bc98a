//! OpenAI Responses API (`POST /v1/responses`).
//!
//! Stateless by default: every request carries the whole history, with
//! `store: false` and `include: ["reasoning.encrypted_content"]` so that
//! reasoning survives between turns without server-side state (set
//! `extra.openai.store` to change it).
//!
//! - [`to_wire`]: canonical request → request body
//! - [`from_wire`]: response body → canonical message (finish reason
//!   inferred from the output); request body → canonical; errors
//! - [`stream`]: SSE events → canonical stream events

pub mod from_wire;
pub mod stream;
pub mod to_wire;

use crate::format::{Auth, Endpoint, WireFormat};

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
    name: "openai-responses",
    provider: PROVIDER,
    decode_request: from_wire::decode_request,
    encode_request: to_wire::encode_request,
    decode_response: from_wire::decode_response,
    stream_decoder: || Box::new(stream::ResponsesStream::new()),
    classify: from_wire::classify,
    endpoint: Endpoint {
        path: "/responses",
        stream_path: "/responses",
        auth: Auth::Bearer,
        headers: &[],
        finish_body: Some(stateless),
        model_prefix: "",
    },
};
