//! ``parlance.Guardrail``'s native half: the package's wrapper of the
//! user's function (``def`` or ``async def``, given the check as a dict,
//! answering a verdict dict or ``None``) as an engine guardrail
//! (`parlance_bindings::guardrail`). What it raises fails the run with
//! code ``guardrail_failed``, naming the guardrail and the exception.

use std::sync::Arc;

use parlance::Guardrail;
use parlance_bindings::Dialect;
use parlance_bindings::guardrail::{host_guardrail, point};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::call::{call_back, exception_text};
use crate::convert::{from_py, to_py};
use crate::errors::bind_error;

/// A guardrail, held by the package's ``Guardrail``.
#[pyclass(module = "parlance._core", name = "Guardrail", frozen)]
pub struct PyGuardrail {
    pub guardrail: Guardrail,
    /// An ``async def``: its runs want the caller's loop.
    pub is_async: bool,
}

#[pymethods]
impl PyGuardrail {
    /// ``check(check_dict) -> verdict_dict | None`` at ``point``
    /// (``input``, ``tool_call``, ``output``).
    #[new]
    #[pyo3(signature = (name, point_name, check, *, is_async))]
    fn new(
        py: Python<'_>,
        name: String,
        point_name: &str,
        check: Py<PyAny>,
        is_async: bool,
    ) -> PyResult<Self> {
        let at = point(point_name, Dialect::Python).map_err(|e| bind_error(py, e))?;
        let f = Arc::new(check);
        let host = Arc::new(move |input: serde_json::Value| {
            let f = Arc::clone(&f);
            let call = call_back(
                f,
                is_async,
                move |py| PyTuple::new(py, [to_py(py, &input)?]),
                |_, out| from_py(out, "(verdict)"),
            );
            Box::pin(async move {
                call.await.map_err(|e| {
                    Python::attach(|py| {
                        let (kind, message) = exception_text(py, &e);
                        format!("raised {kind}: {message}")
                    })
                })
            }) as futures::future::BoxFuture<'static, Result<serde_json::Value, String>>
        });
        Ok(PyGuardrail {
            guardrail: host_guardrail(&name, at, Dialect::Python, host),
            is_async,
        })
    }

    /// Its name.
    #[getter]
    fn name(&self) -> &str {
        self.guardrail.name()
    }

    /// Where it runs.
    #[getter]
    fn point(&self) -> &'static str {
        self.guardrail.point().as_str()
    }
}
