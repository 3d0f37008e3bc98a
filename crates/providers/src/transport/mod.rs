//! The one HTTP layer every provider shares: reqwest over rustls, stream
//! framing (SSE, or NDJSON lines — [`Framing`]), timeouts (connect, first byte, idle), and retries with
//! exponential backoff and jitter that honour the provider's retry hints —
//! never after output has reached the caller.

pub mod aws_eventstream;
mod clients;
pub mod ndjson;
mod retry;
mod secret;

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Once};
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use parlance_model::{EventStream, ModelError, StreamEvent};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

pub use clients::{BuildHold, SharedClient, hold_builds};
pub use ndjson::parse_ndjson;
pub(crate) use retry::wait_from_secs;
pub use retry::{RetryPolicy, retry_after_from_headers, should_retry_from_headers};
pub use secret::Secret;

/// Turns a failed HTTP answer into a typed error: status, body, and the
/// wait the response's headers asked for.
pub type Classify = fn(status: u16, body: &[u8], retry_after: Option<Duration>) -> ModelError;

/// How a streamed answer is cut into events for a [`StreamDecoder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// Server-sent events: `event:`/`data:` frames (OpenAI, Anthropic,
    /// Gemini, Mistral).
    #[default]
    Sse,
    /// Newline-delimited JSON: each line one object, passed to the decoder
    /// as `event("", line)` (Ollama's native API).
    NdJson,
    /// AWS event-stream binary messages (Bedrock's ConverseStream), passed
    /// as `event(":event-type", payload)` (see [`aws_eventstream`]).
    AwsEventStream,
}

/// Turns a provider's stream events into canonical ones.
pub trait StreamDecoder: Send + 'static {
    /// One event: for SSE the `event:` name (possibly empty) and the
    /// `data:` text; for NDJSON an empty name and one line.
    fn event(&mut self, name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError>;
    /// The byte stream ended: the remaining events (ending with `Done`),
    /// or, when the stream stopped early, a malformed-response error
    /// saying it is truncated (the transport turns it into a network error:
    /// over HTTP an early end is a closed connection).
    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError>;
}

impl StreamDecoder for Box<dyn StreamDecoder> {
    fn event(&mut self, name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        (**self).event(name, data)
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        (**self).end()
    }
}

/// Timeouts and retries.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Time to open a connection.
    pub connect_timeout: Duration,
    /// Time from sending the request to the response headers.
    pub first_byte_timeout: Duration,
    /// Longest silence while reading a body or stream.
    pub idle_timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
        }
    }
}

/// Signs a request right before each attempt is sent: a signature is
/// valid for minutes (AWS SigV4: five), and a retry may come after that.
pub trait Sign: Send + Sync + std::fmt::Debug {
    /// Adds the signature's headers to `req` (its URL and body final).
    fn sign<'a>(
        &'a self,
        req: &'a mut HttpRequest,
    ) -> futures::future::BoxFuture<'a, Result<(), ModelError>>;
}

/// One request: where, which headers, what body. Header values marked
/// secret never appear in errors, logs or `Debug`.
#[derive(Clone)]
pub struct HttpRequest {
    /// The full URL.
    pub url: String,
    /// Headers besides `content-type: application/json`.
    pub headers: HeaderMap,
    /// The JSON body.
    pub body: Bytes,
    /// Signs each attempt (see [`Sign`]); none: sent as it is.
    pub sign: Option<Arc<dyn Sign>>,
    /// `url` parsed once for every request of a model (parsing it per
    /// request, its host through IDNA, was 3 % of a run's CPU); used
    /// while it still reads as `url`.
    pub(crate) parsed: Option<reqwest::Url>,
}

impl std::fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // HeaderMap's Debug prints sensitive values as "Sensitive".
        f.debug_struct("HttpRequest")
            .field("url", &self.url)
            .field("headers", &self.headers)
            .field("body_bytes", &self.body.len())
            .field("signed", &self.sign.is_some())
            .finish()
    }
}

impl HttpRequest {
    /// A JSON POST to `url`.
    pub fn new(url: String, body: Vec<u8>) -> Self {
        HttpRequest {
            url,
            headers: HeaderMap::new(),
            body: Bytes::from(body),
            sign: None,
            parsed: None,
        }
    }

    /// Adds a plain header.
    pub fn header(mut self, name: &'static str, value: &str) -> Self {
        if let Ok(v) = HeaderValue::from_str(value) {
            self.headers.insert(HeaderName::from_static(name), v);
        }
        self
    }

    /// Adds a header carrying a secret (marked sensitive).
    pub fn secret_header(mut self, name: &'static str, value: &Secret) -> Self {
        if let Ok(mut v) = HeaderValue::from_str(value.expose()) {
            v.set_sensitive(true);
            self.headers.insert(HeaderName::from_static(name), v);
        }
        self
    }
}

/// The shared HTTP client. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Transport {
    clients: clients::Clients,
    config: Arc<HttpConfig>,
}

/// Installs the process's TLS crypto provider (ring) unless one is set.
/// Call it before building any other reqwest client in a process that uses
/// Parlance (the transport calls it itself).
pub fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // One crypto provider for the whole process (ring); a provider set
        // by the application first wins.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

fn network_error(e: &reqwest::Error) -> ModelError {
    // reqwest's messages name the URL but never headers.
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    if e.is_timeout() {
        ModelError::Timeout { message }
    } else {
        ModelError::Network { message }
    }
}

impl Transport {
    /// A transport with these timeouts and retries. Its HTTP client (TLS
    /// set up, a connection pool) is shared with every other transport of
    /// the process that has the same connect and idle timeouts: building
    /// one costs milliseconds, so models made one after another reuse it,
    /// and the first builds it in the background (see [`SharedClient`]): a
    /// client that cannot be built (no usable root certificates) fails
    /// the first request, with the reason.
    pub fn new(config: HttpConfig) -> Result<Self, ModelError> {
        Ok(Transport {
            clients: clients::Clients::Shared(SharedClient::new(&config)),
            config: Arc::new(config),
        })
    }

    /// A transport over a client of your own (a proxy, extra root
    /// certificates...). The client's own timeouts apply as well as these.
    pub fn with_client(client: reqwest::Client, config: HttpConfig) -> Self {
        install_crypto();
        Transport {
            clients: clients::Clients::Own {
                list: Arc::new([client]),
                next: Default::default(),
            },
            config: Arc::new(config),
        }
    }

    /// A transport sending its requests through these clients in turn.
    /// Over HTTP/2 a client holds one connection per host, and a server
    /// takes a bounded number of requests at once on a connection (its
    /// `max_concurrent_streams`, often 100 to 250): past that, requests
    /// wait for one another. N clients are N connections. No client: the
    /// process's shared one.
    pub fn with_clients(
        clients: impl IntoIterator<Item = reqwest::Client>,
        config: HttpConfig,
    ) -> Result<Self, ModelError> {
        install_crypto();
        match clients::Clients::own(clients) {
            Some(clients) => Ok(Transport {
                clients,
                config: Arc::new(config),
            }),
            None => Transport::new(config),
        }
    }

    /// The timeouts and retries in force.
    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    async fn send(&self, req: &HttpRequest) -> Result<reqwest::Response, ModelError> {
        // Signed now, for this attempt (a retry's signature is its own).
        let signed;
        let req = match &req.sign {
            Some(signer) => {
                let mut copy = req.clone();
                signer.sign(&mut copy).await?;
                signed = copy;
                &signed
            }
            None => req,
        };
        let client = self.clients.next()?;
        let post = match &req.parsed {
            Some(url) if url.as_str() == req.url => client.post(url.clone()),
            _ => client.post(&req.url),
        };
        let fut = post
            .headers(req.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(req.body.clone())
            .send();
        match tokio::time::timeout(self.config.first_byte_timeout, fut).await {
            Ok(Ok(resp)) => Ok(resp),
            Ok(Err(e)) => Err(network_error(&e)),
            Err(_) => Err(ModelError::Timeout {
                message: format!(
                    "no response within {:?} (first-byte timeout)",
                    self.config.first_byte_timeout
                ),
            }),
        }
    }

    async fn read_body(&self, resp: reqwest::Response) -> Result<Bytes, ModelError> {
        match tokio::time::timeout(self.config.idle_timeout, resp.bytes()).await {
            Ok(Ok(b)) => Ok(b),
            Ok(Err(e)) => Err(network_error(&e)),
            Err(_) => Err(ModelError::Timeout {
                message: "the response body stalled (idle timeout)".into(),
            }),
        }
    }

    /// The error for a non-2xx answer, and whether to try again.
    async fn failure(
        &self,
        resp: reqwest::Response,
        classify: Classify,
    ) -> (ModelError, Option<bool>) {
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let retry_after = retry_after_from_headers(&headers);
        let should_retry = should_retry_from_headers(&headers);
        let body = self.read_body(resp).await.unwrap_or_default();
        (classify(status, &body, retry_after), should_retry)
    }

    /// POSTs JSON and returns the body of a 2xx answer, retrying what may
    /// succeed on a second try.
    pub async fn post_json(
        &self,
        req: &HttpRequest,
        classify: Classify,
    ) -> Result<Bytes, ModelError> {
        let policy = &self.config.retry;
        let mut attempt = 0;
        loop {
            let (err, hint) = match self.send(req).await {
                Ok(resp) if resp.status().is_success() => match self.read_body(resp).await {
                    Ok(body) => return Ok(body),
                    Err(e) => (e, None),
                },
                Ok(resp) => self.failure(resp, classify).await,
                Err(e) => (e, None),
            };
            tracing::debug!(attempt, error = %err, "model request failed");
            let wait = match policy.next(attempt, err, hint) {
                Ok(wait) => wait,
                Err(err) => return Err(err),
            };
            tracing::debug!(attempt, ?wait, "retrying model request");
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// POSTs JSON and streams the SSE answer through a fresh decoder per
    /// attempt (see [`Transport::post_stream`]).
    pub fn post_sse<D: StreamDecoder>(
        &self,
        req: HttpRequest,
        classify: Classify,
        decoder: impl Fn() -> D + Send + 'static,
    ) -> EventStream<'static> {
        self.post_stream(req, classify, Framing::Sse, decoder)
    }

    /// POSTs JSON and streams the answer, cut into events by `framing`,
    /// through a fresh decoder per attempt. A failure is retried only while
    /// no event has reached the caller; after that it ends the stream as an
    /// error.
    pub fn post_stream<D: StreamDecoder>(
        &self,
        req: HttpRequest,
        classify: Classify,
        framing: Framing,
        decoder: impl Fn() -> D + Send + 'static,
    ) -> EventStream<'static> {
        let (tx, rx) = futures::channel::mpsc::unbounded::<Result<StreamEvent, ModelError>>();
        let this = self.clone();
        let on_panic = tx.clone();
        let task = async move {
            let policy = this.config.retry.clone();
            let mut attempt = 0;
            loop {
                let mut emitted = false;
                let (err, hint) = match this.send(&req).await {
                    Ok(resp) if resp.status().is_success() && is_json(&resp) => {
                        // A 200 with a JSON body where a stream was asked for:
                        // the server does not stream; retrying won't change that.
                        let body = this.read_body(resp).await.unwrap_or_default();
                        let text: String =
                            String::from_utf8_lossy(&body).chars().take(200).collect();
                        let _ = tx.unbounded_send(Err(ModelError::MalformedResponse {
                            message: format!("expected an event stream, got a JSON body: {text}"),
                        }));
                        return;
                    }
                    Ok(resp) if resp.status().is_success() => {
                        let frames = frames(resp, framing);
                        match this.pump(frames, decoder(), &tx, &mut emitted).await {
                            Ok(()) => return,
                            Err(e) => (e, None),
                        }
                    }
                    Ok(resp) => this.failure(resp, classify).await,
                    Err(e) => (e, None),
                };
                tracing::debug!(attempt, error = %err, "model stream failed");
                let next = if emitted {
                    Err(err)
                } else {
                    policy.next(attempt, err, hint)
                };
                let wait = match next {
                    Ok(wait) => wait,
                    Err(err) => {
                        let _ = tx.unbounded_send(Err(err));
                        return;
                    }
                };
                tracing::debug!(attempt, ?wait, "retrying model stream");
                tokio::time::sleep(wait).await;
                attempt += 1;
            }
        };
        // A panic while reading an answer (a decoder's bug) ends this
        // stream with its message, not with a stream that just stops.
        tokio::spawn(async move {
            if let Err(payload) = AssertUnwindSafe(task).catch_unwind().await {
                let _ = on_panic.unbounded_send(Err(ModelError::MalformedResponse {
                    message: format!(
                        "reading the answer panicked: {}",
                        parlance_model::panic_message(&*payload)
                    ),
                }));
            }
        });
        rx.boxed()
    }

    async fn pump<D: StreamDecoder>(
        &self,
        mut events: Frames,
        mut decoder: D,
        tx: &futures::channel::mpsc::UnboundedSender<Result<StreamEvent, ModelError>>,
        emitted: &mut bool,
    ) -> Result<(), ModelError> {
        loop {
            let next = tokio::time::timeout(self.config.idle_timeout, events.next()).await;
            let finished = matches!(next, Ok(None));
            let out = match next {
                Err(_) => {
                    return Err(ModelError::Timeout {
                        message: format!(
                            "the stream was silent for {:?} (idle timeout)",
                            self.config.idle_timeout
                        ),
                    });
                }
                // The decoder calls a stream that ends early truncated (a
                // file cut short is malformed); over the network, an early
                // end is a connection that closed: a network error, retried
                // while nothing has reached the caller.
                Ok(None) => decoder.end().map_err(|e| match e {
                    ModelError::MalformedResponse { message } => ModelError::Network {
                        message: format!("the connection closed early: {message}"),
                    },
                    other => other,
                })?,
                Ok(Some(Err(e))) => return Err(e),
                Ok(Some(Ok((name, data)))) => decoder.event(&name, &data)?,
            };
            for e in out {
                let done = matches!(e, StreamEvent::Done(_));
                *emitted = true;
                if tx.unbounded_send(Ok(e)).is_err() {
                    return Ok(()); // the caller stopped listening
                }
                if done {
                    return Ok(());
                }
            }
            if finished {
                return Err(ModelError::MalformedResponse {
                    message: "the stream ended without a final message".into(),
                });
            }
        }
    }
}

/// A streamed answer cut into `(event, data)` pairs.
type Frames = BoxStream<'static, Result<(String, String), ModelError>>;

fn frames(resp: reqwest::Response, framing: Framing) -> Frames {
    match framing {
        Framing::Sse => resp
            .bytes_stream()
            .eventsource()
            .map(|r| match r {
                Ok(ev) => Ok((ev.event, ev.data)),
                Err(eventsource_stream::EventStreamError::Transport(t)) => Err(network_error(&t)),
                Err(other) => Err(ModelError::MalformedResponse {
                    message: format!("bad event stream: {other}"),
                }),
            })
            .boxed(),
        Framing::NdJson => {
            let bytes = resp
                .bytes_stream()
                .map(|r| r.map_err(|e| network_error(&e)));
            ndjson::lines(bytes, ndjson::MAX_LINE)
                .map(|r| r.map(|line| (String::new(), line)))
                .boxed()
        }
        Framing::AwsEventStream => {
            let bytes = resp
                .bytes_stream()
                .map(|r| r.map_err(|e| network_error(&e)));
            aws_eventstream::frames(bytes).boxed()
        }
    }
}

fn is_json(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"))
}

/// Splits a recorded stream into `(event, data)` pairs, framed as the
/// transport would frame it.
pub fn parse_stream(framing: Framing, text: &str) -> Vec<(String, String)> {
    match framing {
        Framing::Sse => parse_sse(text),
        Framing::NdJson => parse_ndjson(text),
        // Binary: a recording that is not whole messages gives no events.
        Framing::AwsEventStream => {
            aws_eventstream::parse_event_stream(text.as_bytes()).unwrap_or_default()
        }
    }
}

/// Splits raw SSE text (as recorded) into `(event, data)` pairs, with the
/// same parser the transport uses.
pub fn parse_sse(text: &str) -> Vec<(String, String)> {
    let chunk: Result<Bytes, std::io::Error> = Ok(Bytes::copy_from_slice(text.as_bytes()));
    let stream = futures::stream::iter([chunk]).eventsource();
    futures::executor::block_on(stream.collect::<Vec<_>>())
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| (e.event, e.data))
        .collect()
}
