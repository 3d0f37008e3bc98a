//! A toolset written in Python (``parlance.Toolset``): a function (``def``
//! or ``async def``) the agent asks before each model call for its tools
//! (`parlance_bindings::toolset`). An ``async def`` runs on the caller's
//! loop, as async tools do; a ``def`` on a worker thread. The package's
//! wrapper hands back ``_core.Tool`` objects; each is keyed by identity,
//! so the same objects cost no rebuild.

use std::sync::Arc;

use parlance_bindings::toolset::{HostToolset, Listed};
use pyo3::prelude::*;

use crate::call::start_on_loop;
use crate::tools::{PyTool, RunCtx};

/// A toolset for agents (``parlance.Toolset`` wraps it).
#[pyclass(module = "parlance._core", name = "Toolset", frozen)]
pub struct PyToolset {
    pub toolset: Arc<HostToolset>,
}

fn raised(py: Python<'_>, err: PyErr) -> String {
    let (kind, message) = crate::call::exception_text(py, &err);
    format!("its function raised {kind}: {message}")
}

/// The returned list as tools.
fn listed(py: Python<'_>, v: &Bound<'_, PyAny>) -> Result<Vec<Listed>, String> {
    let mut out = Vec::new();
    for (i, item) in v.try_iter().map_err(|e| raised(py, e))?.enumerate() {
        let item = item.map_err(|e| raised(py, e))?;
        let Ok(t) = item.cast::<PyTool>() else {
            return Err(format!(
                "[{i}]: expected a tool, got {}",
                crate::convert::type_name(&item)
            ));
        };
        out.push(Listed {
            key: item.as_ptr() as u64,
            tool: t.get().tool.clone(),
            keep: Box::new(item.clone().unbind()),
        });
    }
    Ok(out)
}

/// The run's `deps` (``None`` outside a run or without deps).
fn deps(py: Python<'_>, run: Option<&Arc<RunCtx>>) -> Py<PyAny> {
    run.and_then(|r| r.deps.as_ref().map(|d| d.clone_ref(py)))
        .unwrap_or_else(|| py.None())
}

async fn list(f: Arc<Py<PyAny>>, is_async: bool) -> Result<Vec<Listed>, String> {
    let run = parlance::agent::current_deps::<Arc<RunCtx>>();
    if let Some(run) = run.as_ref().filter(|r| is_async && r.event_loop.is_some()) {
        let pending = Python::attach(|py| {
            let start = || {
                let coro = f.bind(py).call1((deps(py, Some(&**run)),))?;
                let event_loop = run.event_loop.as_ref().expect("checked").bind(py);
                start_on_loop(event_loop, run.context.as_ref().map(|c| c.bind(py)), coro)
            };
            start().map_err(|e| raised(py, e))
        })?;
        let done = pending.await;
        return Python::attach(|py| match done {
            Ok(v) => listed(py, v.bind(py)),
            Err(e) => Err(raised(py, e)),
        });
    }
    tokio::task::spawn_blocking(move || {
        Python::attach(|py| {
            let out = f
                .bind(py)
                .call1((deps(py, run.as_deref()),))
                .map_err(|e| raised(py, e))?;
            let out = if is_async {
                crate::call::run_coroutine(py, out).map_err(|e| raised(py, e))?
            } else {
                out
            };
            listed(py, &out)
        })
    })
    .await
    .unwrap_or_else(|e| Err(format!("its worker thread failed: {e}")))
}

#[pymethods]
impl PyToolset {
    /// ``list(deps)``: returns the ``_core.Tool``s offered now
    /// (``is_async``: an ``async def``).
    #[new]
    #[pyo3(signature = (name, list, *, is_async, prefix = None))]
    fn new(name: String, list: Py<PyAny>, is_async: bool, prefix: Option<String>) -> Self {
        let f = Arc::new(list);
        let toolset = HostToolset::new(&name, prefix, move || {
            Box::pin(self::list(Arc::clone(&f), is_async))
        });
        PyToolset {
            toolset: Arc::new(toolset),
        }
    }
}
