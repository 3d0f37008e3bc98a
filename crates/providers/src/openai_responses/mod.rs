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

use futures::future::BoxFuture;
use parlance_format::Message;
use parlance_model::{EventStream, Model, ModelError, ModelRequest};

use crate::transport::{HttpConfig, HttpRequest, Secret, Transport};

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

/// A Responses API model.
#[derive(Debug, Clone)]
pub struct OpenAiResponses {
    model: String,
    base_url: String,
    api_key: Option<Secret>,
    transport: Transport,
}

impl OpenAiResponses {
    /// `model` at `base_url` (e.g. `https://api.openai.com/v1`).
    pub fn new(
        model: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<Secret>,
        http: HttpConfig,
    ) -> Result<Self, ModelError> {
        Ok(OpenAiResponses {
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
        OpenAiResponses::new(model, base, key, HttpConfig::default())
    }

    fn http_request(&self, req: &ModelRequest, stream: bool) -> Result<HttpRequest, ModelError> {
        let mut encoded = to_wire::encode_request(req, &self.model, stream)?;
        stateless(&mut encoded.body);
        for w in &encoded.warnings {
            tracing::debug!(provider = PROVIDER, "{w}");
        }
        let body = serde_json::to_vec(&encoded.body).expect("json");
        let mut http = HttpRequest::new(format!("{}/responses", self.base_url), body);
        if let Some(key) = &self.api_key {
            http = http.secret_header(
                "authorization",
                &Secret::new(format!("Bearer {}", key.expose())),
            );
        }
        Ok(http)
    }
}

impl Model for OpenAiResponses {
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
                .generate(&http, crate::formats::builtin("openai-responses"))
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
                .stream(http, crate::formats::builtin("openai-responses")))
        })
    }
}
