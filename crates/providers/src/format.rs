//! A wire format: one provider API's pure translations (canonical ⇄ the
//! API's JSON), and the [`Endpoint`] that says how its requests travel over
//! HTTP. Each provider folder defines one as `FORMAT`; nothing here knows
//! any provider.

use parlance_format::Message;
use parlance_model::{ModelError, ModelRequest, StreamEvent};
use serde_json::Value;

pub use crate::transport::Framing;
use crate::transport::{Classify, StreamDecoder};
use crate::wire::{DecodedRequest, Encoded};

/// One provider API's translations, and where its requests go.
pub struct WireFormat {
    /// The name used on the command line and in configuration (`openai-chat`, ...).
    pub name: &'static str,
    /// The provider name on messages (`openai`, `anthropic`, `google`).
    pub provider: &'static str,
    /// Request body → canonical.
    pub decode_request: fn(&Value) -> Result<DecodedRequest, ModelError>,
    /// Canonical → request body (model, stream).
    pub encode_request: fn(&ModelRequest, &str, bool) -> Result<Encoded, ModelError>,
    /// Response body → canonical assistant message.
    pub decode_response: fn(&Value) -> Result<Message, ModelError>,
    /// A fresh stream decoder.
    pub stream_decoder: fn() -> Box<dyn StreamDecoder>,
    /// An HTTP error answer → a typed error.
    pub classify: Classify,
    /// How requests in this format are sent.
    pub endpoint: Endpoint,
}

impl std::fmt::Debug for WireFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireFormat")
            .field("name", &self.name)
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// Where an API's requests go relative to a base URL, and how they carry
/// the key. The same for every server that speaks the API (only the base
/// URL and the key differ), so it belongs to the format.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    /// The path after the base URL; `{model}` stands for the model id.
    pub path: &'static str,
    /// The same for a streamed request.
    pub stream_path: &'static str,
    /// The header that carries the API key.
    pub auth: Auth,
    /// Headers sent with every request (`anthropic-version`).
    pub headers: &'static [(&'static str, &'static str)],
    /// A last change to every request body (the Responses API's stateless
    /// default), after the translation.
    pub finish_body: Option<fn(&mut Value)>,
    /// A prefix the API does not want on model ids (`models/` for Gemini).
    pub model_prefix: &'static str,
    /// How a streamed answer is framed (SSE or NDJSON).
    pub framing: Framing,
}

/// How the API key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// `authorization: Bearer KEY`.
    Bearer,
    /// The key as the value of this header (`x-api-key`).
    Header(&'static str),
    /// AWS: a bearer API key when one is set (Bedrock API keys), else
    /// SigV4 signing of each request with AWS credentials (environment or
    /// shared profile files) for this signing name and the region. The
    /// model id is a URI label, percent-encoded in the path.
    Aws {
        /// The service's SigV4 signing name (`bedrock`).
        service: &'static str,
    },
}

/// Decodes a whole recorded stream: `(event, data)` pairs → the final
/// message (and every event before it).
pub fn decode_stream(
    format: &WireFormat,
    events: &[(String, String)],
) -> Result<(Vec<StreamEvent>, Message), ModelError> {
    let mut d = (format.stream_decoder)();
    let mut out = Vec::new();
    for (name, data) in events {
        if data.trim().is_empty() {
            continue;
        }
        for e in d.event(name, data)? {
            if let StreamEvent::Done(m) = e {
                return Ok((out, m));
            }
            out.push(e);
        }
    }
    for e in d.end()? {
        if let StreamEvent::Done(m) = e {
            return Ok((out, m));
        }
        out.push(e);
    }
    Err(ModelError::MalformedResponse {
        message: "the stream has no final message".into(),
    })
}
