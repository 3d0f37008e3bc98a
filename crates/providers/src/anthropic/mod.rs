//! Anthropic Messages API (`POST /v1/messages`).
//!
//! - [`to_wire`]: canonical request → request body (thinking echoed
//!   byte-exact and in place, tool results first in the next user turn)
//! - [`from_wire`]: response body → canonical message; request body →
//!   canonical; stop reasons, usage (cache reads and writes added back to
//!   the input), errors
//! - [`stream`]: SSE events → canonical stream events

pub mod from_wire;
pub mod stream;
pub mod to_wire;

use futures::future::BoxFuture;
use parlance_format::Message;
use parlance_model::{EventStream, Model, ModelError, ModelRequest};

use crate::transport::{HttpConfig, HttpRequest, Secret, Transport};

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "anthropic";

/// The API version header sent with every request.
pub const API_VERSION: &str = "2023-06-01";

/// A Messages API model.
#[derive(Debug, Clone)]
pub struct Anthropic {
    model: String,
    base_url: String,
    api_key: Option<Secret>,
    transport: Transport,
}

impl Anthropic {
    /// `model` at `base_url` (e.g. `https://api.anthropic.com`).
    pub fn new(
        model: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<Secret>,
        http: HttpConfig,
    ) -> Result<Self, ModelError> {
        Ok(Anthropic {
            model: model.into(),
            base_url: base_url.into().trim_end_matches('/').to_string(),
            api_key,
            transport: Transport::new(http)?,
        })
    }

    /// Configured from `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`
    /// (default `https://api.anthropic.com`).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let key = std::env::var("ANTHROPIC_API_KEY")
            .ok()
            .filter(|k| !k.is_empty())
            .map(Secret::new);
        let base = std::env::var("ANTHROPIC_BASE_URL")
            .unwrap_or_else(|_| "https://api.anthropic.com".into());
        Anthropic::new(model, base, key, HttpConfig::default())
    }

    fn http_request(&self, req: &ModelRequest, stream: bool) -> Result<HttpRequest, ModelError> {
        let encoded = to_wire::encode_request(req, &self.model, stream)?;
        for w in &encoded.warnings {
            tracing::debug!(provider = PROVIDER, "{w}");
        }
        let body = serde_json::to_vec(&encoded.body).expect("json");
        let mut http = HttpRequest::new(format!("{}/v1/messages", self.base_url), body)
            .header("anthropic-version", API_VERSION);
        if let Some(key) = &self.api_key {
            http = http.secret_header("x-api-key", key);
        }
        Ok(http)
    }
}

impl Model for Anthropic {
    fn provider(&self) -> &str {
        PROVIDER
    }

    fn model_id(&self) -> &str {
        &self.model
    }

    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(async move {
            let http = self.http_request(request, false)?;
            self.transport
                .generate(&http, crate::formats::builtin("anthropic"))
                .await
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        Box::pin(async move {
            let http = self.http_request(request, true)?;
            Ok(self
                .transport
                .stream(http, crate::formats::builtin("anthropic")))
        })
    }
}
