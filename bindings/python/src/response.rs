//! A run's response, its usage and its approval requests, as Python
//! objects over the Rust values: nothing is converted until it is read,
//! and `to_json()` is the Rust serialisation, byte for byte.

use std::sync::Arc;

use parlance::{ApprovalRequest, Response, RunStatus, Usage};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyType};
use serde_json::Value;

use crate::convert::{from_py, to_py};
use crate::errors::{format_error, format_message};

/// What a run gave: its messages, output, usage, status, pending approvals.
#[pyclass(module = "parlance", name = "Response", frozen)]
pub struct PyResponse {
    pub inner: Arc<Response>,
    /// Turns the JSON output into the agent's `output_type`.
    output_type: Option<Py<PyAny>>,
}

impl PyResponse {
    pub fn new(inner: Response, output_type: Option<Py<PyAny>>) -> Self {
        PyResponse {
            inner: Arc::new(inner),
            output_type,
        }
    }
}

fn parse(py: Python<'_>, text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| {
        format_message(
            py,
            format!(
                "(root): invalid JSON at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
        )
    })
}

#[pymethods]
impl PyResponse {
    /// Reads a response from canonical JSON text (strict: anything
    /// unknown or malformed is a `FormatError` naming its path).
    #[classmethod]
    fn from_json(_cls: &Bound<'_, PyType>, py: Python<'_>, text: &str) -> PyResult<Self> {
        let v = parse(py, text)?;
        Self::read(py, &v)
    }

    /// Reads a response from its canonical dict.
    #[classmethod]
    fn from_dict(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let v = from_py(value, "")?;
        Self::read(py, &v)
    }

    /// ``Response[Order]`` in annotations evaluated at run time (the type
    /// parameter is for type checkers only).
    #[classmethod]
    fn __class_getitem__<'py>(
        cls: &Bound<'py, PyType>,
        _item: &Bound<'py, PyAny>,
    ) -> Bound<'py, PyType> {
        cls.clone()
    }

    /// The run's id.
    #[getter]
    fn id(&self) -> Option<&str> {
        self.inner.id.as_deref()
    }

    /// The thread the run belongs to, if any.
    #[getter]
    fn thread_id(&self) -> Option<&str> {
        self.inner.thread_id.as_deref()
    }

    /// ``completed``, ``requires_approval`` or ``failed``.
    #[getter]
    fn status(&self) -> &'static str {
        self.inner.status.as_str()
    }

    /// The answer as text: the output when it is a string, the output
    /// written as JSON when it is structured, empty when the run did not
    /// complete.
    #[getter]
    fn text(&self) -> String {
        self.inner.text()
    }

    /// The final output: the answer's text, or with an ``output_type`` a
    /// validated instance of it; ``None`` when the run did not complete.
    #[getter]
    fn output<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let raw = to_py(py, &self.inner.output)?;
        match &self.output_type {
            Some(validate) if self.inner.status == RunStatus::Completed => {
                validate.bind(py).call1((raw,))
            }
            _ => Ok(raw),
        }
    }

    /// This run's messages (the input, the assistant's, the tools'), as
    /// canonical dicts.
    #[getter]
    fn messages<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for m in &self.inner.messages {
            let v = serde_json::to_value(m).expect("canonical types serialise");
            list.append(to_py(py, &v)?)?;
        }
        Ok(list)
    }

    /// Token counts summed over the run.
    #[getter]
    fn usage(&self) -> PyUsage {
        PyUsage(self.inner.usage)
    }

    /// What the run's model calls cost, in US dollars (the sum of its
    /// messages' ``cost``); ``None`` when a model is not in the price table.
    #[getter]
    fn cost(&self) -> Option<f64> {
        self.inner.cost
    }

    /// Why the model stopped, when it said.
    #[getter]
    fn finish_reason(&self) -> Option<&'static str> {
        self.inner.finish_reason.map(|f| f.as_str())
    }

    /// The agent this run handed the conversation to, if it did (the
    /// next turns are that agent's); ``None`` otherwise.
    #[getter]
    fn handoff(&self) -> Option<&str> {
        self.inner.handoff()
    }

    /// The calls waiting for a decision (status ``requires_approval``).
    #[getter]
    fn pending(&self) -> Vec<PyApprovalRequest> {
        self.inner
            .pending
            .iter()
            .cloned()
            .map(|r| PyApprovalRequest(Arc::new(r)))
            .collect()
    }

    /// Why the run failed (``code``, ``message``, ``cause``), as a dict.
    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match &self.inner.error {
            None => Ok(None),
            Some(e) => to_py(py, &serde_json::to_value(e).expect("json")).map(Some),
        }
    }

    /// The canonical dict (what ``to_json`` writes).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &serde_json::to_value(&*self.inner).expect("json"))
    }

    /// Canonical JSON, byte-identical to the Rust core's (``indent``: pretty).
    #[pyo3(signature = (*, indent = false))]
    fn to_json(&self, indent: bool) -> String {
        if indent {
            parlance::format::to_json_pretty(&*self.inner)
        } else {
            parlance::format::to_json(&*self.inner)
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyResponse>()
            .is_ok_and(|o| *o.get().inner == *self.inner)
    }

    fn __repr__(&self) -> String {
        format!(
            "Response(id={:?}, status={:?}, text={:?})",
            self.inner.id.as_deref().unwrap_or(""),
            self.inner.status.as_str(),
            crate::short(&self.inner.text(), 60)
        )
    }
}

impl PyResponse {
    fn read(py: Python<'_>, v: &Value) -> PyResult<Self> {
        Response::from_value(v)
            .map(|r| PyResponse::new(r, None))
            .map_err(|e| format_error(py, &e))
    }
}

/// Token counts.
#[pyclass(module = "parlance", name = "Usage", frozen)]
#[derive(Clone)]
pub struct PyUsage(pub Usage);

#[pymethods]
impl PyUsage {
    /// All input tokens, cached ones included.
    #[getter]
    fn input_tokens(&self) -> u64 {
        self.0.input_tokens
    }
    /// All output tokens, reasoning included.
    #[getter]
    fn output_tokens(&self) -> u64 {
        self.0.output_tokens
    }
    /// The part of the input read from the provider's cache.
    #[getter]
    fn cached_tokens(&self) -> u64 {
        self.0.cached_tokens
    }
    /// The part of the input written to the cache, when reported.
    #[getter]
    fn cache_write_tokens(&self) -> Option<u64> {
        self.0.cache_write_tokens
    }
    /// The part of the output spent on reasoning, when reported.
    #[getter]
    fn reasoning_tokens(&self) -> Option<u64> {
        self.0.reasoning_tokens
    }
    /// input + output.
    #[getter]
    fn total_tokens(&self) -> u64 {
        self.0.input_tokens + self.0.output_tokens
    }
    /// The canonical dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &serde_json::to_value(self.0).expect("json"))
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyUsage>().is_ok_and(|o| o.get().0 == self.0)
    }
    fn __repr__(&self) -> String {
        format!(
            "Usage(input_tokens={}, output_tokens={}, cached_tokens={})",
            self.0.input_tokens, self.0.output_tokens, self.0.cached_tokens
        )
    }
}

/// A call waiting for a human's decision.
#[pyclass(module = "parlance", name = "ApprovalRequest", frozen)]
#[derive(Clone)]
pub struct PyApprovalRequest(pub Arc<ApprovalRequest>);

#[pymethods]
impl PyApprovalRequest {
    /// The waiting call's id (what a decision names).
    #[getter]
    fn tool_call_id(&self) -> &str {
        &self.0.tool_call_id
    }
    /// The tool.
    #[getter]
    fn name(&self) -> &str {
        &self.0.name
    }
    /// The arguments the model asked for (already validated).
    #[getter]
    fn arguments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.0.arguments)
    }
    /// The digest a decision repeats (``approve(request)`` does it for you).
    #[getter]
    fn digest(&self) -> &str {
        &self.0.digest
    }
    /// The run the call waits in, when it is a sub-agent's (an agent used
    /// as a tool); ``None`` for this run's own calls.
    #[getter]
    fn run_id(&self) -> Option<&str> {
        self.0.run_id.as_deref()
    }
    /// The canonical dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &serde_json::to_value(&*self.0).expect("json"))
    }
    fn __repr__(&self) -> String {
        format!(
            "ApprovalRequest(tool_call_id={:?}, name={:?}, arguments={})",
            self.0.tool_call_id, self.0.name, self.0.arguments
        )
    }
}
