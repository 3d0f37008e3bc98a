//! Google Gemini (`generateContent`, `streamGenerateContent?alt=sse`).
//!
//! - [`to_wire`]: canonical request → request body (thought signatures on
//!   the same part in the same place; the documented stand-in signature on
//!   calls Gemini did not make; tool schemas as `parametersJsonSchema`)
//! - [`from_wire`]: response body → canonical message (`STOP` with calls is
//!   `tool_calls`, safety reasons are `content_filter`); request body →
//!   canonical; errors with `RetryInfo` waits
//! - [`stream`]: SSE chunks → canonical stream events

pub mod from_wire;
pub mod stream;
pub mod to_wire;

use futures::future::BoxFuture;
use parlance_format::Message;
use parlance_model::{EventStream, Model, ModelError, ModelRequest};

use crate::transport::{HttpConfig, HttpRequest, Secret, Transport};

/// The provider name on messages and opaque data.
pub const PROVIDER: &str = "google";

/// A Gemini model.
#[derive(Debug, Clone)]
pub struct Gemini {
    model: String,
    base_url: String,
    api_key: Option<Secret>,
    transport: Transport,
}

impl Gemini {
    /// `model` at `base_url` (e.g. `https://generativelanguage.googleapis.com/v1beta`).
    pub fn new(
        model: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<Secret>,
        http: HttpConfig,
    ) -> Result<Self, ModelError> {
        Ok(Gemini {
            model: model.into().trim_start_matches("models/").to_string(),
            base_url: base_url.into().trim_end_matches('/').to_string(),
            api_key,
            transport: Transport::new(http)?,
        })
    }

    /// Configured from `GEMINI_API_KEY` (or `GOOGLE_API_KEY`) and
    /// `GEMINI_BASE_URL` (default `https://generativelanguage.googleapis.com/v1beta`).
    pub fn from_env(model: impl Into<String>) -> Result<Self, ModelError> {
        let key = std::env::var("GEMINI_API_KEY")
            .or_else(|_| std::env::var("GOOGLE_API_KEY"))
            .ok()
            .filter(|k| !k.is_empty())
            .map(Secret::new);
        let base = std::env::var("GEMINI_BASE_URL")
            .unwrap_or_else(|_| "https://generativelanguage.googleapis.com/v1beta".into());
        Gemini::new(model, base, key, HttpConfig::default())
    }

    fn http_request(&self, req: &ModelRequest, stream: bool) -> Result<HttpRequest, ModelError> {
        let encoded = to_wire::encode_request(req, &self.model, stream)?;
        for w in &encoded.warnings {
            tracing::debug!(provider = PROVIDER, "{w}");
        }
        let body = serde_json::to_vec(&encoded.body).expect("json");
        let url = if stream {
            format!(
                "{}/models/{}:streamGenerateContent?alt=sse",
                self.base_url, self.model
            )
        } else {
            format!("{}/models/{}:generateContent", self.base_url, self.model)
        };
        let mut http = HttpRequest::new(url, body);
        if let Some(key) = &self.api_key {
            http = http.secret_header("x-goog-api-key", key);
        }
        Ok(http)
    }
}

impl Model for Gemini {
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
                .generate(&http, crate::formats::builtin("gemini"))
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
                .stream(http, crate::formats::builtin("gemini")))
        })
    }
}
