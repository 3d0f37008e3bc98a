//! Amazon Bedrock Converse API (`POST /model/{modelId}/converse`, and
//! `/converse-stream` in AWS event-stream framing).
//!
//! - [`to_wire`]: canonical request → Converse request body (reasoning
//!   echoed byte-exact and only to Bedrock, cache points, tool results
//!   with their status)
//! - [`decode_response`](mod@decode_response): response body → canonical
//!   message; stop reasons, usage (cache reads and writes added back to
//!   the input)
//! - [`decode_request`](mod@decode_request): request body → canonical (for
//!   `parlance convert`)
//! - [`errors`]: error bodies and exception events → typed errors
//! - [`stream`]: ConverseStream events → canonical stream events
//! - [`auth`]: AWS credentials (environment, shared profile files) and
//!   SigV4 signing

pub mod auth;
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
pub const NAME: &str = "bedrock-converse";

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "bedrock";

/// The SigV4 signing name of the Bedrock Runtime service.
pub const SIGNING_NAME: &str = "bedrock";

/// The API's translations and endpoint.
pub static FORMAT: WireFormat = WireFormat {
    name: NAME,
    provider: PROVIDER,
    decode_request: decode_request::decode_request,
    encode_request: to_wire::encode_request,
    decode_response: decode_response::decode_response,
    stream_decoder: || Box::new(crate::wire::Checked(stream::BedrockStream::new())),
    classify: errors::classify,
    endpoint: Endpoint {
        path: "/model/{model}/converse",
        stream_path: "/model/{model}/converse-stream",
        auth: Auth::Aws {
            service: SIGNING_NAME,
        },
        headers: &[],
        finish_body: None,
        model_prefix: "",
        framing: Framing::AwsEventStream,
    },
};
