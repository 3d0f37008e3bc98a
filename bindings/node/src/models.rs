//! Models: from a string (`"openai:gpt-4o-mini"`), or with a base URL,
//! key, headers, user agent and timeouts of your own.

use std::sync::Arc;
use std::time::Duration;

use napi_derive::napi;
use parlance::{Model, ModelBuilder};

use crate::errors::{bind, config_error};

/// Settings of a model (all optional; camelCase as the package takes them).
#[napi(object)]
pub struct ModelSettings {
    /// The API's base URL (a proxy, a local server).
    #[napi(js_name = "baseURL")]
    pub base_url: Option<String>,
    /// The API key (instead of the provider's environment variable).
    pub api_key: Option<String>,
    /// The environment variable that holds the key.
    pub api_key_env: Option<String>,
    /// Extra headers sent with every request.
    pub headers: Option<std::collections::HashMap<String, String>>,
    /// The User-Agent header.
    pub user_agent: Option<String>,
    /// Milliseconds to connect.
    pub connect_timeout: Option<f64>,
    /// Milliseconds until the first byte of an answer.
    pub first_byte_timeout: Option<f64>,
    /// Milliseconds a stream may stay silent.
    pub idle_timeout: Option<f64>,
}

/// A model an agent talks to.
#[napi]
pub struct NativeModel {
    pub(crate) model: Arc<dyn Model>,
}

fn ms(what: &str, v: Option<f64>) -> napi::Result<Option<Duration>> {
    match v {
        None => Ok(None),
        Some(v) if v.is_finite() && v > 0.0 => Ok(Some(Duration::from_secs_f64(v / 1000.0))),
        Some(v) => Err(config_error(format!(
            "{what}: expected a positive number of milliseconds, got {v}"
        ))),
    }
}

#[napi]
impl NativeModel {
    /// A model from a string and optional settings. The key comes from the
    /// settings or the provider's variable: a missing one is an error here,
    /// before any request.
    #[napi(constructor, catch_unwind)]
    pub fn new(spec: String, settings: Option<ModelSettings>) -> napi::Result<Self> {
        let Some(s) = settings else {
            let model = parlance::model(&spec).map_err(|e| bind(e.into()))?;
            return Ok(NativeModel { model });
        };
        let mut b = ModelBuilder::from_spec(&spec).map_err(|e| bind(e.into()))?;
        if let Some(u) = s.base_url {
            b = b.base_url(u);
        }
        if let Some(k) = s.api_key {
            b = b.api_key(k);
        }
        if let Some(v) = s.api_key_env {
            b = b.api_key_env(v);
        }
        let mut headers: Vec<_> = s.headers.unwrap_or_default().into_iter().collect();
        headers.sort();
        for (k, v) in headers {
            b = b.header(k, v);
        }
        if let Some(u) = s.user_agent {
            b = b.user_agent(u);
        }
        if let Some(d) = ms("connectTimeout", s.connect_timeout)? {
            b = b.connect_timeout(d);
        }
        if let Some(d) = ms("firstByteTimeout", s.first_byte_timeout)? {
            b = b.first_byte_timeout(d);
        }
        if let Some(d) = ms("idleTimeout", s.idle_timeout)? {
            b = b.idle_timeout(d);
        }
        let model = b.build().map_err(|e| bind(e.into()))?;
        Ok(NativeModel {
            model: Arc::new(model),
        })
    }

    /// The provider's name.
    #[napi(getter)]
    pub fn provider(&self) -> String {
        self.model.provider().to_string()
    }

    /// The model's id.
    #[napi(getter)]
    pub fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }
}
