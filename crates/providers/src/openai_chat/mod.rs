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
pub mod dialect;
pub mod stream;
pub mod to_wire;

pub use crate::openai_common::classify;
pub use decode_request::{decode_request, decode_request_in};
pub use decode_response::{decode_response, decode_response_in};
pub use to_wire::{encode_request, encode_request_in};

use crate::format::{Auth, Endpoint, Framing, WireFormat};

/// The API's name (the wire format's, in the registry and in `extra`).
pub const NAME: &str = "openai-chat";

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "openai";

/// Where Chat Completions requests go (the same on every host).
const ENDPOINT: Endpoint = Endpoint {
    path: "/chat/completions",
    stream_path: "/chat/completions",
    auth: Auth::Bearer,
    headers: &[],
    finish_body: None,
    model_prefix: "",
    framing: Framing::Sse,
};

/// The wire format of Chat Completions as the host of `$dialect` speaks
/// it: the same API (name, decoder of requests, errors, endpoint), the
/// host's provider name and reasoning fields.
macro_rules! dialect_format {
    ($dialect:path) => {
        WireFormat {
            name: NAME,
            provider: $dialect.provider,
            decode_request: |b| decode_request::decode_request_in(&$dialect, b),
            encode_request: |r, m, s| to_wire::encode_request_in(&$dialect, r, m, s),
            decode_response: |b| decode_response::decode_response_in(&$dialect, b),
            stream_decoder: || {
                Box::new(crate::wire::Checked(stream::ChatStream::in_dialect(
                    &$dialect,
                )))
            },
            classify: crate::openai_common::classify,
            endpoint: ENDPOINT,
        }
    };
}

/// The API's translations and endpoint (OpenAI's own service, and any
/// server given as a base URL).
pub static FORMAT: WireFormat = dialect_format!(dialect::OPENAI);
/// Chat Completions as DeepSeek speaks it.
pub static DEEPSEEK: WireFormat = dialect_format!(dialect::DEEPSEEK);
/// ... OpenRouter.
pub static OPENROUTER: WireFormat = dialect_format!(dialect::OPENROUTER);
/// ... Groq.
pub static GROQ: WireFormat = dialect_format!(dialect::GROQ);
/// ... Together AI.
pub static TOGETHER: WireFormat = dialect_format!(dialect::TOGETHER);
/// ... Fireworks AI.
pub static FIREWORKS: WireFormat = dialect_format!(dialect::FIREWORKS);
/// ... xAI.
pub static XAI: WireFormat = dialect_format!(dialect::XAI);
/// ... Cerebras.
pub static CEREBRAS: WireFormat = dialect_format!(dialect::CEREBRAS);
/// ... vLLM.
pub static VLLM: WireFormat = dialect_format!(dialect::VLLM);
/// ... LM Studio.
pub static LMSTUDIO: WireFormat = dialect_format!(dialect::LMSTUDIO);
/// ... Ollama's OpenAI-compatible endpoint.
pub static OLLAMA: WireFormat = dialect_format!(dialect::OLLAMA);
