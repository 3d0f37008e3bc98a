//! How a finished run reaches Python: the response object, or for a failed
//! run the `RunError` it raises (with the tool's own exception as
//! `__cause__` under `fail`). Shared by awaited and streamed runs.

use parlance::{Block, Response, Role, RunStatus, ToolStatus};
use pyo3::prelude::*;

use crate::convert::to_py;
use crate::errors::run_error_class;
use crate::response::PyResponse;
use crate::tools::RunCtx;

/// A run's response for Python: a failed run raises `RunError` (with the
/// tool's exception as `__cause__` under `fail`).
pub fn finish(
    py: Python<'_>,
    response: Response,
    ctx: &RunCtx,
    output_type: Option<Py<PyAny>>,
) -> PyResult<PyResponse> {
    if response.status != RunStatus::Failed {
        return Ok(PyResponse::new(response, output_type));
    }
    let error = response
        .error
        .clone()
        .unwrap_or_else(|| parlance::RunError::new("failed", "the run failed without saying why"));
    let cause = match error.code.as_str() {
        "tool_failed" => first_failed_call(&response)
            .and_then(|id| ctx.failures.lock().expect("not poisoned").remove(&id)),
        "store" => ctx
            .failures
            .lock()
            .expect("not poisoned")
            .remove(crate::checkpoint::FAILURE_KEY),
        _ => None,
    };
    let detail = match &error.cause {
        Some(c) => to_py(py, c)?,
        None => py.None().into_bound(py),
    };
    let response = Py::new(py, PyResponse::new(response, None))?;
    let exc = run_error_class(py)?.call1((error.message, error.code, detail, response))?;
    let err = PyErr::from_value(exc);
    if let Some(c) = cause {
        err.set_cause(py, Some(c));
    }
    Err(err)
}

/// The call whose unexpected failure stopped the run: the first
/// `tool_failed` result of the last tool message.
fn first_failed_call(r: &Response) -> Option<String> {
    r.messages
        .iter()
        .rev()
        .find(|m| m.role == Role::Tool)?
        .content
        .iter()
        .find_map(|b| match b {
            Block::ToolResult { tool_result } if tool_result.status == ToolStatus::ToolFailed => {
                Some(tool_result.tool_call_id.clone())
            }
            _ => None,
        })
}
