//! `parlance.export_traces`: the GenAI spans of every run exported with
//! OTLP (`parlance_bindings::traces`); Python's `logging` keeps receiving
//! the runtime's logs.

use parlance_bindings::Dialect;
use parlance_bindings::traces::{export, settings};
use pyo3::prelude::*;

use crate::convert::from_py;
use crate::errors::{bind_error, config_error};

/// The running export.
#[pyclass(module = "parlance._core", name = "Traces", frozen)]
pub struct PyTraces {
    exporter: parlance_otel::Exporter,
}

#[pymethods]
impl PyTraces {
    /// Sends the spans ended so far and waits for the collector (the GIL
    /// released).
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let e = self.exporter.clone();
        py.detach(move || e.flush())
            .map_err(|e| config_error(py, format!("traces: flushing failed: {e}")))
    }

    /// Sends what is left and stops exporting.
    fn shutdown(&self, py: Python<'_>) -> PyResult<()> {
        let e = self.exporter.clone();
        py.detach(move || e.shutdown())
            .map_err(|e| config_error(py, format!("traces: shutting down failed: {e}")))
    }
}

/// Starts exporting (``settings``: ``endpoint``, ``headers``,
/// ``service_name``, ``protocol``).
#[pyfunction]
pub fn export_traces(py: Python<'_>, settings: &Bound<'_, PyAny>) -> PyResult<PyTraces> {
    let s = settings_of(py, settings)?;
    // The GIL released: the exporter's HTTP client starts a thread whose
    // logs go to Python's `logging`, which needs the GIL.
    let exporter = py
        .detach(move || export(&s))
        .map_err(|e| bind_error(py, e))?;
    Ok(PyTraces { exporter })
}

fn settings_of(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<parlance_otel::Settings> {
    settings(&from_py(v, "settings")?, Dialect::Python).map_err(|e| bind_error(py, e))
}
