//! Every provider wire format by name, with its pure translation
//! functions: what `parlance convert` and the server dispatch on.

use parlance_format::Message;
use parlance_model::{ModelError, ModelRequest, StreamEvent};
use serde_json::Value;

use crate::transport::StreamDecoder;
use crate::wire::{DecodedRequest, Encoded};
use crate::{anthropic, gemini, openai_chat, openai_responses};

/// One provider API's translations.
pub struct WireFormat {
    /// The name used on the command line (`openai-chat`, ...).
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
    pub classify: crate::transport::Classify,
}

/// The formats, in documentation order.
pub const WIRE_FORMATS: [WireFormat; 4] = [
    WireFormat {
        name: "openai-chat",
        provider: openai_chat::PROVIDER,
        decode_request: openai_chat::from_wire::decode_request,
        encode_request: openai_chat::to_wire::encode_request,
        decode_response: openai_chat::from_wire::decode_response,
        classify: openai_chat::from_wire::classify,
        stream_decoder: || Box::new(openai_chat::stream::ChatStream::new()),
    },
    WireFormat {
        name: "openai-responses",
        provider: openai_responses::PROVIDER,
        decode_request: openai_responses::from_wire::decode_request,
        encode_request: openai_responses::to_wire::encode_request,
        decode_response: openai_responses::from_wire::decode_response,
        classify: openai_responses::from_wire::classify,
        stream_decoder: || Box::new(openai_responses::stream::ResponsesStream::new()),
    },
    WireFormat {
        name: "anthropic",
        provider: anthropic::PROVIDER,
        decode_request: anthropic::from_wire::decode_request,
        encode_request: anthropic::to_wire::encode_request,
        decode_response: anthropic::from_wire::decode_response,
        classify: anthropic::from_wire::classify,
        stream_decoder: || Box::new(anthropic::stream::AnthropicStream::new()),
    },
    WireFormat {
        name: "gemini",
        provider: gemini::PROVIDER,
        decode_request: gemini::from_wire::decode_request,
        encode_request: gemini::to_wire::encode_request,
        decode_response: gemini::from_wire::decode_response,
        classify: gemini::from_wire::classify,
        stream_decoder: || Box::new(gemini::stream::GeminiStream::new()),
    },
];

/// The format named `name` (panics on an unknown one: for built-in names).
pub(crate) fn builtin(name: &str) -> &'static WireFormat {
    wire_format(name).expect("a built-in format")
}

/// The format named `name`.
pub fn wire_format(name: &str) -> Option<&'static WireFormat> {
    WIRE_FORMATS.iter().find(|f| f.name == name)
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
