//! OpenAI Chat Completions (`POST /v1/chat/completions`), and the many
//! servers that speak it (set a base URL).
//!
//! - [`to_wire`]: canonical request → request body
//! - [`from_wire`]: response body → canonical message; request body →
//!   canonical (for `parlance convert`); finish reasons, usage, errors
//! - [`stream`]: SSE chunks → canonical stream events

pub mod from_wire;
pub mod stream;
pub mod to_wire;

use futures::future::BoxFuture;
use parlance_format::Message;
use parlance_model::{EventStream, Model, ModelError, ModelRequest};

use crate::transport::{HttpConfig, HttpRequest, Secret, Transport};

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "openai";

/// A Chat Completions model.
#[derive(Debug, Clone)]
pub struct OpenAiChat {
    model: String,
    base_url: String,
    api_key: Option<Secret>,
    transport: Transport,
}

impl OpenAiChat {
    /// `model` at `base_url` (e.g. `https://api.openai.com/v1`).
    pub fn new(
        model: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<Secret>,
        http: HttpConfig,
    ) -> Result<Self, ModelError> {
        Ok(OpenAiChat {
            model: model.into(),
            base_url: base_url.into().trim_end_matches('/').to_string(),
            api_key,
            transport: Transport::new(http)?,
        })
    }

    /// Configured from `OPENAI_API_KEY` and `OPENAI_BASE_URL` (default
    /// `https://api.openai.com/v1`).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let key = std::env::var("OPENAI_API_KEY")
            .ok()
            .filter(|k| !k.is_empty())
            .map(Secret::new);
        let base =
            std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| "https://api.openai.com/v1".into());
        OpenAiChat::new(model, base, key, HttpConfig::default())
    }

    fn http_request(&self, req: &ModelRequest, stream: bool) -> Result<HttpRequest, ModelError> {
        let encoded = to_wire::encode_request(req, &self.model, stream)?;
        for w in &encoded.warnings {
            tracing::debug!(provider = PROVIDER, "{w}");
        }
        let body = serde_json::to_vec(&encoded.body).expect("json");
        let mut http = HttpRequest::new(format!("{}/chat/completions", self.base_url), body);
        if let Some(key) = &self.api_key {
            http = http.secret_header(
                "authorization",
                &Secret::new(format!("Bearer {}", key.expose())),
            );
        }
        Ok(http)
    }
}

impl Model for OpenAiChat {
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
                .generate(&http, crate::formats::builtin("openai-chat"))
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
                .stream(http, crate::formats::builtin("openai-chat")))
        })
    }
}
