//! Models: from a string (`"openai:gpt-4o-mini"`) or built for a provider
//! with settings of your own (`parlance_bindings::models`).

use std::sync::Arc;

use parlance::Model;
use parlance_bindings::Dialect;
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::from_py;
use crate::errors::bind_error;

/// A model an agent talks to.
#[pyclass(module = "parlance", name = "Model", frozen, subclass)]
pub struct PyModel {
    pub model: Arc<dyn Model>,
}

#[pymethods]
impl PyModel {
    /// A model written in Python: a subclass that defines ``request``
    /// (see ``parlance.testing`` and docs/guide/testing.md). Its
    /// arguments are the subclass's own.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn py_new(
        _args: &Bound<'_, pyo3::types::PyTuple>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> Self {
        PyModel {
            model: crate::model_host::unbound(),
        }
    }

    /// A model from a string: ``"anthropic:claude-sonnet-4-5"``,
    /// ``"openai:gpt-4o-mini"``, ``"openai-responses:gpt-5"``,
    /// ``"gemini:gemini-2.5-flash"``. The key comes from the provider's
    /// variable; a missing one is a ``ConfigError`` here, before any request.
    #[staticmethod]
    fn from_string(py: Python<'_>, spec: &str) -> PyResult<Self> {
        let model = parlance::model(spec).map_err(|e| bind_error(py, e.into()))?;
        Ok(PyModel { model })
    }

    /// A model of ``provider`` (``openai``, ``anthropic``, ``bedrock``,
    /// ``azure``...) with ``settings`` (a dict: ``base_url``, ``api_key``,
    /// ``headers``, timeouts in seconds, ``retry``, ``api_version``,
    /// ``azure_ad_token``, ``region``, ``aws_credentials``...: read by the
    /// bindings' shared reader, ``parlance_bindings::models``).
    #[staticmethod]
    #[pyo3(signature = (provider, model, settings = None))]
    fn build(
        py: Python<'_>,
        provider: &str,
        model: &str,
        settings: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let settings = match settings {
            Some(s) => from_py(s, "settings")?,
            None => Value::Null,
        };
        let model =
            parlance_bindings::models::provider_model(provider, model, &settings, Dialect::Python)
                .map_err(|e| bind_error(py, e))?;
        Ok(PyModel { model })
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
