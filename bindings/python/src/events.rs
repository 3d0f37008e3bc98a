//! A streamed run (the bindings' shared `Events`) as an async iterator of
//! the event classes of `parlance._events`. A failed run raises
//! `RunError` where `RunCompleted` would come.

use std::sync::Arc;

use parlance::{RunEvent, RunStatus};
use parlance_bindings::Events;
use pyo3::exceptions::PyStopAsyncIteration;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyList;

use crate::convert::to_py;
use crate::errors::bind_error_attached;
use crate::outcome::finish;
use crate::response::{PyApprovalRequest, PyResponse};
use crate::runtime::awaitable;
use crate::tools::RunCtx;

/// The events of a run, as they happen.
#[pyclass(module = "parlance", name = "RunStream", frozen)]
pub struct PyRunStream {
    stream: Arc<tokio::sync::Mutex<Events>>,
    ctx: Arc<RunCtx>,
    output_type: Option<Py<PyAny>>,
}

impl PyRunStream {
    pub fn new(stream: Events, ctx: Arc<RunCtx>, output_type: Option<Py<PyAny>>) -> Self {
        PyRunStream {
            stream: Arc::new(tokio::sync::Mutex::new(stream)),
            ctx,
            output_type,
        }
    }
}

fn class<'py>(py: Python<'py>, name: &'static str) -> PyResult<Bound<'py, PyAny>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let m = MODULE.get_or_try_init(py, || py.import("parlance._events").map(Bound::unbind))?;
    m.bind(py).getattr(name)
}

fn event<'py>(
    py: Python<'py>,
    e: RunEvent,
    ctx: &RunCtx,
    output_type: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    match e {
        RunEvent::TextDelta(t) => class(py, "TextDelta")?.call1((t,)),
        RunEvent::ThinkingDelta(t) => class(py, "ThinkingDelta")?.call1((t,)),
        RunEvent::MessageCompleted(m) => {
            let v = serde_json::to_value(&m).expect("json");
            class(py, "MessageCompleted")?.call1((to_py(py, &v)?,))
        }
        RunEvent::ToolCallStarted { call_id, name } => {
            class(py, "ToolCallStarted")?.call1((call_id, name))
        }
        RunEvent::ToolCallFinished {
            call_id,
            name,
            status,
            elapsed,
        } => class(py, "ToolCallFinished")?.call1((
            call_id,
            name,
            status.as_str(),
            elapsed.as_secs_f64(),
        )),
        RunEvent::ApprovalRequired(requests) => {
            let list = PyList::empty(py);
            for r in requests {
                list.append(Py::new(py, PyApprovalRequest(Arc::new(r)))?)?;
            }
            class(py, "ApprovalRequired")?.call1((list,))
        }
        RunEvent::ContextCompacted(c) => class(py, "ContextCompacted")?.call1((
            c.strategy.as_str(),
            c.replaces,
            c.tokens_before,
            c.tokens_after,
        )),
        RunEvent::RunCompleted(r) => {
            let failed = r.status == RunStatus::Failed;
            let response: PyResponse = finish(py, r, ctx, output_type)?;
            debug_assert!(!failed);
            class(py, "RunCompleted")?.call1((Py::new(py, response)?,))
        }
    }
}

#[pymethods]
impl PyRunStream {
    fn __aiter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __anext__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stream = Arc::clone(&self.stream);
        let ctx = Arc::clone(&self.ctx);
        let output_type = self.output_type.as_ref().map(|t| t.clone_ref(py));
        awaitable(py, "the run's stream", async move {
            let next = stream.lock().await.next().await;
            let Some(e) = next.map_err(bind_error_attached)? else {
                return Err(PyStopAsyncIteration::new_err(()));
            };
            Python::attach(|py| event(py, e, &ctx, output_type).map(Bound::unbind))
        })
    }
}
