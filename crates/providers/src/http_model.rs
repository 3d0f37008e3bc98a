//! The one model type every HTTP provider is: a [`WireFormat`] (the pure
//! translations), a base URL and headers, and the shared [`Transport`].
//! Built by [`ModelBuilder`](crate::ModelBuilder).

use futures::future::BoxFuture;
use parlance_format::Message;
use parlance_model::{EventStream, Model, ModelError, ModelRequest};
use reqwest::header::HeaderMap;

use crate::format::WireFormat;
use crate::transport::{HttpRequest, Transport};

/// A model behind an HTTP API. Cheap to clone (the client is shared).
#[derive(Clone)]
pub struct HttpModel {
    pub(crate) format: &'static WireFormat,
    pub(crate) model: String,
    /// Where non-streamed and streamed requests go (the model id filled in).
    pub(crate) urls: [String; 2],
    /// The same, parsed (`None` where a URL does not parse: the request
    /// says why when it is sent).
    pub(crate) parsed: [Option<reqwest::Url>; 2],
    /// Every header of a request: the key (marked sensitive), the API's
    /// fixed headers, the user agent, the caller's own.
    pub(crate) headers: HeaderMap,
    pub(crate) transport: Transport,
    /// Signs each attempt of a request (AWS SigV4).
    pub(crate) signer: Option<std::sync::Arc<dyn crate::transport::Sign>>,
    /// The translation warnings already logged (see [`Warned`]).
    pub(crate) warned: Warned,
}

/// What a request left out (reasoning another provider cannot read, a
/// cache point it has no place for...) is logged as a warning, once per
/// model and distinct text: a conversation sends its history again on
/// every turn, and the same drop is not news the second time. At most
/// [`Warned::LIMIT`] texts are remembered (then the record starts over).
#[derive(Clone, Default)]
pub(crate) struct Warned(std::sync::Arc<std::sync::Mutex<std::collections::HashSet<u64>>>);

impl Warned {
    const LIMIT: usize = 4096;

    /// Whether `text` is new (and now remembered).
    fn first_time(&self, text: &str) -> bool {
        use std::hash::{BuildHasher, BuildHasherDefault};
        let h = BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
            .hash_one(text);
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() >= Self::LIMIT {
            seen.clear();
        }
        seen.insert(h)
    }
}

impl std::fmt::Debug for HttpModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // HeaderMap's Debug prints sensitive values as "Sensitive".
        f.debug_struct("HttpModel")
            .field("format", &self.format.name)
            .field("model", &self.model)
            .field("url", &self.urls[0])
            .field("headers", &self.headers)
            .finish()
    }
}

impl HttpModel {
    /// The wire format it speaks.
    pub fn format(&self) -> &'static WireFormat {
        self.format
    }

    /// The URL of a request (`stream`: of a streamed one).
    pub fn url(&self, stream: bool) -> &str {
        &self.urls[usize::from(stream)]
    }

    /// The transport (timeouts, retries, the HTTP client).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    fn http_request(&self, req: &ModelRequest, stream: bool) -> Result<HttpRequest, ModelError> {
        let mut encoded = (self.format.encode_request)(req, &self.model, stream)?;
        if let Some(finish) = self.format.endpoint.finish_body {
            finish(&mut encoded.body);
        }
        for w in &encoded.warnings {
            if self.warned.first_time(w) {
                tracing::warn!(provider = self.format.provider, model = %self.model, "{w}");
            } else {
                tracing::debug!(provider = self.format.provider, "{w}");
            }
        }
        let mut body = serde_json::to_vec(&encoded.body).map_err(|e| ModelError::Unsupported {
            message: format!("the request could not be written as JSON: {e}"),
        })?;
        // Kept until the answer is in (a retry sends it again), by every
        // run waiting for its model: without the growth's spare capacity
        // (a third of it on average).
        body.shrink_to_fit();
        let mut http = HttpRequest::new(self.url(stream).to_string(), body);
        http.parsed = self.parsed[usize::from(stream)].clone();
        http.headers = self.headers.clone();
        http.sign = self.signer.clone();
        Ok(http)
    }
}

impl Model for HttpModel {
    fn provider(&self) -> &str {
        self.format.provider
    }

    fn model_id(&self) -> &str {
        &self.model
    }

    fn endpoint(&self) -> Option<&str> {
        Some(&self.urls[0])
    }

    fn generate<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<Message, ModelError>> {
        Box::pin(async move {
            let http = self.http_request(request, false)?;
            let body = self
                .transport
                .post_json(&http, self.format.classify)
                .await?;
            let v: serde_json::Value =
                serde_json::from_slice(&body).map_err(|e| ModelError::MalformedResponse {
                    message: format!("response is not JSON: {e}"),
                })?;
            (self.format.decode_response)(&v)
        })
    }

    fn stream<'a>(
        &'a self,
        request: &'a ModelRequest,
    ) -> BoxFuture<'a, Result<EventStream<'a>, ModelError>> {
        Box::pin(async move {
            let http = self.http_request(request, true)?;
            Ok(self.transport.post_stream(
                http,
                self.format.classify,
                self.format.endpoint.framing,
                self.format.stream_decoder,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use parlance_model::ModelRequest;

    /// A request carries its URL parsed once at build (and the transport
    /// sends to it only while it reads as the request's `url`).
    #[test]
    fn a_request_carries_its_url_parsed_at_build() {
        let m = crate::Provider::OPENAI
            .model("gpt-4o-mini")
            .base_url("http://127.0.0.1:9/v1")
            .build()
            .unwrap();
        for stream in [false, true] {
            let req = m.http_request(&ModelRequest::default(), stream).unwrap();
            assert_eq!(req.url, "http://127.0.0.1:9/v1/chat/completions");
            assert_eq!(
                req.parsed.as_ref().map(|u| u.as_str()),
                Some(req.url.as_str())
            );
        }
    }
}
