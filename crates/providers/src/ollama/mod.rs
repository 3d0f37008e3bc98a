//! Ollama's native chat API (`POST /api/chat`, NDJSON streams) — the usual
//! way people run local models beyond the embedded one, and Ollama's cloud
//! (`https://ollama.com`, a bearer key). Not to be confused with Ollama's
//! OpenAI-compatible `/v1` (the `ollama-openai` preset) or with reading
//! GGUF files from Ollama's store (`parlance-local`).
//!
//! - [`to_wire`]: canonical request → request body (`options`, `think`,
//!   `format`, images as base64, arguments as objects, `tool_name`)
//! - [`decode_response`](mod@decode_response): the answer object →
//!   canonical message (`thinking`, tool calls, `done_reason`, counts)
//! - [`decode_request`](mod@decode_request): request body → canonical
//! - [`stream`]: NDJSON lines → canonical stream events
//! - [`errors`]: `{"error": "…"}` → typed errors

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
pub const NAME: &str = "ollama";

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "ollama";

/// Call ids Parlance makes up for Ollama calls that came without one: they
/// start with this, and are not sent back (Ollama pairs a result with its
/// call by `tool_name` then).
pub const MADE_UP_ID: &str = "ollama_call_";

/// The API's translations and endpoint.
pub static FORMAT: WireFormat = WireFormat {
    name: NAME,
    provider: PROVIDER,
    decode_request: decode_request::decode_request,
    encode_request: to_wire::encode_request,
    decode_response: decode_response::decode_response,
    stream_decoder: || Box::new(crate::wire::Checked(stream::OllamaStream::new())),
    classify: errors::classify,
    endpoint: Endpoint {
        path: "/api/chat",
        stream_path: "/api/chat",
        auth: Auth::Bearer,
        headers: &[],
        finish_body: None,
        model_prefix: "",
        framing: Framing::NdJson,
    },
};

/// The base URL `OLLAMA_HOST` names: a URL as it is; `host` or
/// `host:port` (how Ollama's own client takes it) over `http`, port
/// `11434` when none is given.
pub fn host_url(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    if host.contains("://") {
        return host.to_string();
    }
    let has_port = host.rsplit_once(':').is_some_and(|(h, p)| {
        !p.is_empty()
            && p.chars().all(|c| c.is_ascii_digit())
            && (!h.contains(':') || h.ends_with(']'))
    });
    if has_port {
        format!("http://{host}")
    } else {
        format!("http://{host}:11434")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn ollama_host_is_read_like_ollama_reads_it() {
        for (host, url) in [
            ("127.0.0.1", "http://127.0.0.1:11434"),
            ("0.0.0.0:8080", "http://0.0.0.0:8080"),
            ("http://gpu-box:11434/", "http://gpu-box:11434"),
            ("https://ollama.com", "https://ollama.com"),
            ("[::1]", "http://[::1]:11434"),
            ("[::1]:9", "http://[::1]:9"),
        ] {
            assert_eq!(super::host_url(host), url, "{host}");
        }
    }
}
