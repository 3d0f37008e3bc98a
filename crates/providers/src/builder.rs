//! Building an [`HttpModel`]: the provider's defaults (base URL, key
//! variables) from the registry, and what the caller sets (key, base URL,
//! headers, user agent, timeouts, retries, an HTTP client of their own).
//! Everything is checked here, before any request: a missing key, a bad
//! base URL or header is a [`BuildError`] naming it.

use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue, USER_AGENT};

use crate::bedrock::auth::{self as aws, AwsCredentialSource, AwsCredentials, SigV4};
use crate::error::BuildError;
use crate::format::{Auth, WireFormat};
use crate::http_model::HttpModel;
use crate::registry::{Access, ModelSpec, Provider, provider_names};
use crate::transport::{HttpConfig, RetryPolicy, Secret, Transport};

/// The user agent sent unless one is set.
pub const DEFAULT_USER_AGENT: &str = concat!("parlance/", env!("CARGO_PKG_VERSION"));

/// Builds an [`HttpModel`]. Start from a provider
/// (`Provider::ANTHROPIC.model("claude-sonnet-4-5")`), a model string
/// ([`ModelBuilder::from_spec`]) or a wire format of your own
/// ([`ModelBuilder::new`]).
///
/// The key is the one given, else the first of the provider's variables
/// that is set (`ANTHROPIC_API_KEY`...). It is required when the model talks
/// to the provider's own service; with another base URL (a proxy, a local
/// server, a mock) a missing key means no key is sent.
///
/// ```
/// use std::time::Duration;
/// use parlance_providers::Provider;
///
/// let model = Provider::OPENAI
///     .model("llama3.2")
///     .base_url("http://127.0.0.1:11434/v1") // a local server: no key needed
///     .header("x-team", "support")
///     .first_byte_timeout(Duration::from_secs(60))
///     .build()
///     .unwrap();
/// assert_eq!(model.url(false), "http://127.0.0.1:11434/v1/chat/completions");
/// ```
#[derive(Debug, Clone)]
pub struct ModelBuilder {
    format: &'static WireFormat,
    provider: Option<Provider>,
    model: String,
    base_url: Option<String>,
    api_key: Option<Secret>,
    api_key_env: Option<String>,
    ad_token: Option<Secret>,
    api_version: Option<String>,
    headers: Vec<(String, String)>,
    user_agent: Option<String>,
    http: HttpConfig,
    client: Option<Vec<reqwest::Client>>,
    region: Option<String>,
    aws_credentials: Option<AwsCredentials>,
}

impl ModelBuilder {
    /// `model` over `format` (see [`WIRE_FORMATS`](crate::WIRE_FORMATS)) at a
    /// base URL you give; no environment variable is read unless you name
    /// one with [`api_key_env`](Self::api_key_env).
    pub fn new(format: &'static WireFormat, model: impl Into<String>) -> Self {
        ModelBuilder {
            format,
            provider: None,
            model: model.into(),
            base_url: None,
            api_key: None,
            api_key_env: None,
            ad_token: None,
            api_version: None,
            headers: Vec::new(),
            user_agent: None,
            http: HttpConfig::default(),
            client: None,
            region: None,
            aws_credentials: None,
        }
    }

    pub(crate) fn for_provider(provider: Provider, model: impl Into<String>) -> Self {
        ModelBuilder {
            provider: Some(provider),
            ..ModelBuilder::new(provider.format, model)
        }
    }

    /// A builder from a model string (`"anthropic:claude-sonnet-4-5"`,
    /// `"openai:gpt-4o-mini"`, `"openai-responses:gpt-5"`,
    /// `"gemini:gemini-2.5-flash"`). `local` is refused with
    /// [`BuildError::Local`].
    pub fn from_spec(spec: &str) -> Result<Self, BuildError> {
        match ModelSpec::parse(spec)? {
            ModelSpec::Local { .. } => Err(BuildError::Local {
                spec: spec.to_string(),
            }),
            ModelSpec::Remote { provider, model } => match Provider::named(provider) {
                Some(p) => Ok(p.model(model)),
                None => Err(BuildError::UnknownProvider {
                    name: provider.to_string(),
                    known: provider_names(),
                }),
            },
        }
    }

    /// The API's base URL (`https://api.openai.com/v1`, a proxy, a local
    /// server); the endpoint's path is added to it.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The API key (instead of the provider's environment variable).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(Secret::new(key));
        self
    }

    /// The environment variable holding the key (instead of the provider's).
    pub fn api_key_env(mut self, var: impl Into<String>) -> Self {
        self.api_key_env = Some(var.into());
        self
    }

    /// Azure OpenAI: an Entra ID (Azure AD) access token, sent as
    /// `Authorization: Bearer` when no key is given (instead of
    /// `AZURE_OPENAI_AD_TOKEN`). Other providers refuse it when built.
    pub fn azure_ad_token(mut self, token: impl Into<String>) -> Self {
        self.ad_token = Some(Secret::new(token));
        self
    }

    /// Azure OpenAI: the `api-version` of the deployment URLs (instead of
    /// `OPENAI_API_VERSION` / `AZURE_OPENAI_API_VERSION`); without one the
    /// v1 API is used. Other providers refuse it when built.
    pub fn api_version(mut self, version: impl Into<String>) -> Self {
        self.api_version = Some(version.into());
        self
    }

    /// A header sent with every request (`anthropic-beta`,
    /// `OpenAI-Organization`...); it replaces one Parlance would send.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The `user-agent` header (default `parlance/VERSION`).
    pub fn user_agent(mut self, value: impl Into<String>) -> Self {
        self.user_agent = Some(value.into());
        self
    }

    /// Time to open a connection (default 10 s).
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.http.connect_timeout = d;
        self
    }

    /// Time from sending a request to the response headers (default
    /// 300 s: long reasoning).
    pub fn first_byte_timeout(mut self, d: Duration) -> Self {
        self.http.first_byte_timeout = d;
        self
    }

    /// Longest silence while reading a body or stream (default 120 s).
    pub fn idle_timeout(mut self, d: Duration) -> Self {
        self.http.idle_timeout = d;
        self
    }

    /// Retries (default: 2, exponential backoff with jitter).
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.http.retry = policy;
        self
    }

    /// All timeouts and retries at once.
    pub fn http_config(mut self, config: HttpConfig) -> Self {
        self.http = config;
        self
    }

    /// An HTTP client of your own (a proxy, extra root certificates). By
    /// default models share one client per process, whatever their
    /// provider. Call [`crate::transport::install_crypto`] before building
    /// it: reqwest needs rustls' crypto provider chosen first.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(vec![client]);
        self
    }

    /// Several HTTP clients of your own, taken in turn: over HTTP/2, each
    /// is a connection of its own, so many requests at once are not held
    /// to one connection's stream limit (see [`Transport::with_clients`]).
    pub fn http_clients(mut self, clients: impl IntoIterator<Item = reqwest::Client>) -> Self {
        self.client = Some(clients.into_iter().collect());
        self
    }

    /// The AWS region (Bedrock), instead of `AWS_REGION`,
    /// `AWS_DEFAULT_REGION` or the profile's.
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.region = Some(region.into());
        self
    }

    /// AWS credentials to sign requests with (Bedrock), instead of the
    /// environment's or the shared profile files'.
    pub fn aws_credentials(mut self, credentials: AwsCredentials) -> Self {
        self.aws_credentials = Some(credentials);
        self
    }

    /// Checks everything and builds the model. Reads the environment for
    /// what was not given.
    pub fn build(self) -> Result<HttpModel, BuildError> {
        self.build_with_env(|var| std::env::var(var).ok())
    }

    /// [`build`](Self::build) with `env` in place of the process
    /// environment (empty values count as unset).
    pub fn build_with_env(
        self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<HttpModel, BuildError> {
        let env = |var: &str| env(var).filter(|v| !v.is_empty());
        let endpoint = &self.format.endpoint;
        let access = self.provider.map_or(Access::Standard, |p| p.access);
        if access != Access::Azure && (self.ad_token.is_some() || self.api_version.is_some()) {
            return Err(BuildError::BadSetting {
                setting: "azure_ad_token / api_version".into(),
                value: self.format.name.into(),
                why: "only Azure OpenAI providers take them".into(),
            });
        }
        // AWS: credentials and region from the environment and the
        // shared profile files (read only for AWS APIs).
        let aws_env = match endpoint.auth {
            Auth::Aws { .. } => Some(aws::from_env(&env)),
            _ => None,
        };
        let region = self
            .region
            .clone()
            .or_else(|| aws_env.as_ref().and_then(|a| a.region.clone()));
        let no_region = || BuildError::Aws {
            message: "no region: set AWS_REGION (or AWS_DEFAULT_REGION, or region in the profile)"
                .into(),
        };
        let public_url = |p: Provider| -> Result<String, BuildError> {
            if p.base_url.contains("{region}") {
                let r = region.as_deref().ok_or_else(no_region)?;
                Ok(p.base_url.replace("{region}", r))
            } else {
                Ok(p.base_url.to_string())
            }
        };
        let base_url = match (&self.base_url, self.provider) {
            (Some(url), _) => url.clone(),
            (None, Some(p)) => match env(p.base_url_env) {
                // OLLAMA_HOST is `host[:port]` as often as a URL.
                Some(url) if std::ptr::eq(p.format, &crate::ollama::FORMAT) => {
                    crate::ollama::host_url(&url)
                }
                Some(url) => url,
                None if p.base_url.is_empty() => {
                    return Err(BuildError::NoBaseUrl {
                        provider: p.name,
                        var: p.base_url_env,
                    });
                }
                None => public_url(p)?,
            },
            (None, None) => {
                return Err(BuildError::MissingBaseUrl {
                    format: self.format.name,
                });
            }
        };
        check_base_url(&base_url)?;
        let base_url = base_url.trim_end_matches('/');

        let key_vars: Vec<String> = match (&self.api_key_env, self.provider) {
            (Some(var), _) => vec![var.clone()],
            (None, Some(p)) => p.api_key_env.iter().map(|v| v.to_string()).collect(),
            (None, None) => Vec::new(),
        };
        let key = match self.api_key {
            Some(k) => Some(k),
            None => key_vars.iter().find_map(|v| env(v)).map(Secret::new),
        };
        let mut signer = None;
        let (auth, key) = match access {
            Access::Standard => {
                // A hosted service needs its key; a local server (LM
                // Studio, Ollama) or another base URL may take none.
                let own_service = self.provider.is_some_and(|p| {
                    public_url(p).is_ok_and(|u| base_url == u) && p.base_url.starts_with("https://")
                });
                // AWS: without a bearer API key, SigV4 with credentials.
                if let (None, Auth::Aws { service }) = (&key, endpoint.auth) {
                    let credentials = match (self.aws_credentials, aws_env) {
                        (Some(c), _) => Some(AwsCredentialSource::Static(c)),
                        (None, Some(a)) => a
                            .credentials
                            .map_err(|message| BuildError::Aws { message })?,
                        (None, None) => None,
                    };
                    if let Some(source) = credentials {
                        let sign: std::sync::Arc<dyn crate::transport::Sign> =
                            std::sync::Arc::new(SigV4 {
                                source,
                                region: region.clone().ok_or_else(no_region)?,
                                service,
                            });
                        signer = Some(sign);
                    }
                }
                if key.is_none() && signer.is_none() && own_service && !key_vars.is_empty() {
                    let mut vars = key_vars;
                    if matches!(endpoint.auth, Auth::Aws { .. }) {
                        vars.extend([
                            "AWS_ACCESS_KEY_ID".to_string(),
                            "a profile in ~/.aws/credentials".to_string(),
                        ]);
                    }
                    return Err(BuildError::MissingKey { vars });
                }
                (endpoint.auth, key)
            }
            // Azure always needs the key or a token, whatever the base URL.
            Access::Azure => match (key, self.ad_token) {
                (Some(k), _) => (Auth::Header(crate::azure::KEY_HEADER), Some(k)),
                (None, Some(t)) => (Auth::Bearer, Some(t)),
                (None, None) => match env(crate::azure::AD_TOKEN_ENV) {
                    Some(t) => (Auth::Bearer, Some(Secret::new(t))),
                    None => {
                        let mut vars = key_vars;
                        vars.push(crate::azure::AD_TOKEN_ENV.into());
                        return Err(BuildError::MissingKey { vars });
                    }
                },
            },
        };

        let mut headers = HeaderMap::new();
        if let Some(key) = key {
            let (name, value) = match auth {
                // An AWS API key (Bedrock's) is a bearer token.
                Auth::Bearer | Auth::Aws { .. } => {
                    (AUTHORIZATION, format!("Bearer {}", key.expose()))
                }
                Auth::Header(name) => (HeaderName::from_static(name), key.expose().to_string()),
            };
            let mut value = HeaderValue::from_str(&value).map_err(|_| BuildError::BadHeader {
                name: name.to_string(),
                why: "the API key holds characters a header cannot carry".into(),
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        for (name, value) in endpoint.headers {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        let agent = self.user_agent.as_deref().unwrap_or(DEFAULT_USER_AGENT);
        headers.insert(USER_AGENT, header_value("user-agent", agent)?);
        for (name, value) in &self.headers {
            let n = HeaderName::from_bytes(name.as_bytes()).map_err(|_| BuildError::BadHeader {
                name: name.clone(),
                why: "not a valid header name".into(),
            })?;
            headers.insert(n, header_value(name, value)?);
        }

        let model = self
            .model
            .strip_prefix(endpoint.model_prefix)
            .unwrap_or(&self.model)
            .to_string();
        let urls = match access {
            Access::Standard => {
                // An AWS model id is a URI label (`...-v1:0` → `...-v1%3A0`).
                let label = match endpoint.auth {
                    Auth::Aws { .. } => aws::encode_label(&model),
                    _ => model.clone(),
                };
                let url = |path: &str| format!("{base_url}{}", path.replace("{model}", &label));
                [url(endpoint.path), url(endpoint.stream_path)]
            }
            Access::Azure => {
                let version = self
                    .api_version
                    .or_else(|| crate::azure::API_VERSION_ENV.iter().find_map(|v| env(v)));
                crate::azure::urls(self.format, base_url, &model, version.as_deref())?
            }
        };
        let transport = match self.client {
            Some(clients) => Transport::with_clients(clients, self.http),
            None => Transport::new(self.http),
        }
        .map_err(|e| BuildError::Client {
            message: e.to_string(),
        })?;
        let parsed = urls.clone().map(|u| reqwest::Url::parse(&u).ok());
        Ok(HttpModel {
            format: self.format,
            model,
            parsed,
            urls,
            headers,
            transport,
            signer,
            warned: Default::default(),
        })
    }
}

fn header_value(name: &str, value: &str) -> Result<HeaderValue, BuildError> {
    HeaderValue::from_str(value).map_err(|_| BuildError::BadHeader {
        name: name.to_string(),
        why: "the value holds characters a header cannot carry".into(),
    })
}

fn check_base_url(url: &str) -> Result<(), BuildError> {
    let bad = |why: String| BuildError::BadBaseUrl {
        url: url.to_string(),
        why,
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| bad(e.to_string()))?;
    match parsed.scheme() {
        "http" | "https" => Ok(()),
        other => Err(bad(format!("expected http or https, got {other}"))),
    }
}

impl Provider {
    /// A builder for `model` at this provider; the key and base URL come
    /// from the environment unless given.
    pub fn model(&self, model: impl Into<String>) -> ModelBuilder {
        ModelBuilder::for_provider(*self, model)
    }
}

/// A model from a string such as `"anthropic:claude-sonnet-4-5"`, with its
/// key (and base URL, when set) from the environment. A missing key is an
/// error here, before any request. `local` is refused: the embedded model
/// is built by `parlance-local`.
///
/// ```
/// let err = parlance_providers::model("nowhere:some-model").unwrap_err();
/// assert!(err.to_string().starts_with("unknown provider \"nowhere\""));
/// ```
pub fn model(spec: &str) -> Result<HttpModel, BuildError> {
    ModelBuilder::from_spec(spec)?.build()
}
