//! Models: from a string (`"openai:gpt-4o-mini"`) or built for a provider
//! with a base URL, key, headers, user agent and timeouts of your own.

use std::sync::Arc;
use std::time::Duration;

use parlance::Model;
use parlance::providers::Provider;
use pyo3::prelude::*;

use crate::errors::{build_error, config_error};

/// A model an agent talks to.
#[pyclass(module = "parlance", name = "Model", frozen)]
pub struct PyModel {
    pub model: Arc<dyn Model>,
}

fn secs(py: Python<'_>, what: &str, s: Option<f64>) -> PyResult<Option<Duration>> {
    match s {
        None => Ok(None),
        Some(s) if s.is_finite() && s > 0.0 => Ok(Some(Duration::from_secs_f64(s))),
        Some(s) => Err(config_error(
            py,
            format!("{what}: expected a positive number of seconds, got {s}"),
        )),
    }
}

#[pymethods]
impl PyModel {
    /// A model from a string: ``"anthropic:claude-sonnet-4-5"``,
    /// ``"openai:gpt-4o-mini"``, ``"openai-responses:gpt-5"``,
    /// ``"gemini:gemini-2.5-flash"``. The key comes from the provider's
    /// variable; a missing one is a ``ConfigError`` here, before any request.
    #[staticmethod]
    fn from_string(py: Python<'_>, spec: &str) -> PyResult<Self> {
        let model = parlance::model(spec).map_err(|e| build_error(py, &e))?;
        Ok(PyModel { model })
    }

    /// A model of ``provider`` (``openai``, ``openai-responses``,
    /// ``anthropic``, ``gemini``) with settings of your own.
    #[staticmethod]
    #[pyo3(signature = (provider, model, *, base_url = None, api_key = None, api_key_env = None,
        headers = None, user_agent = None, connect_timeout = None, first_byte_timeout = None,
        idle_timeout = None))]
    #[allow(clippy::too_many_arguments)]
    fn build(
        py: Python<'_>,
        provider: &str,
        model: String,
        base_url: Option<String>,
        api_key: Option<String>,
        api_key_env: Option<String>,
        headers: Option<Vec<(String, String)>>,
        user_agent: Option<String>,
        connect_timeout: Option<f64>,
        first_byte_timeout: Option<f64>,
        idle_timeout: Option<f64>,
    ) -> PyResult<Self> {
        let Some(p) = Provider::named(provider) else {
            return Err(config_error(
                py,
                format!(
                    "unknown provider {provider:?} (expected one of: {})",
                    parlance::providers::PROVIDERS
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        let mut b = p.model(model);
        if let Some(u) = base_url {
            b = b.base_url(u);
        }
        if let Some(k) = api_key {
            b = b.api_key(k);
        }
        if let Some(v) = api_key_env {
            b = b.api_key_env(v);
        }
        for (k, v) in headers.unwrap_or_default() {
            b = b.header(k, v);
        }
        if let Some(u) = user_agent {
            b = b.user_agent(u);
        }
        if let Some(d) = secs(py, "connect_timeout", connect_timeout)? {
            b = b.connect_timeout(d);
        }
        if let Some(d) = secs(py, "first_byte_timeout", first_byte_timeout)? {
            b = b.first_byte_timeout(d);
        }
        if let Some(d) = secs(py, "idle_timeout", idle_timeout)? {
            b = b.idle_timeout(d);
        }
        let model = b.build().map_err(|e| build_error(py, &e))?;
        Ok(PyModel {
            model: Arc::new(model),
        })
    }

    /// The provider's name.
    #[getter]
    fn provider(&self) -> String {
        self.model.provider().to_string()
    }

    /// The model's id.
    #[getter]
    fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }

    fn __repr__(&self) -> String {
        format!("Model({}:{})", self.model.provider(), self.model.model_id())
    }
}
