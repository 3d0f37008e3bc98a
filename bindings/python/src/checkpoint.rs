//! The application's checkpoint, a Python function (``def`` or ``async
//! def``) given to a run as ``checkpoint=``: each step of the run reaches
//! it as it completes (`parlance_bindings::checkpoint`). An ``async def``
//! runs on the caller's loop, as async tools do; a ``def`` on a worker
//! thread. What it raises fails the run (code ``store``), and is the
//! ``RunError``'s ``__cause__``.

use std::sync::Arc;

use parlance::Checkpoint;
use parlance_bindings::Dialect;
use parlance_bindings::checkpoint::HostCheckpoint;
use pyo3::prelude::*;

use crate::call::start_on_loop;
use crate::convert::to_py;
use crate::tools::RunCtx;

/// Where the raised exception waits for the run's end (`outcome.rs`).
pub const FAILURE_KEY: &str = "(checkpoint)";

/// Whether `f` is an ``async def`` (its run then needs the caller's loop).
pub fn is_async(py: Python<'_>, f: &Bound<'_, PyAny>) -> PyResult<bool> {
    crate::model_host::iscoroutinefunction(py, f)
}

/// The sentence of the run's error, and the exception kept as its cause.
fn raised(py: Python<'_>, ctx: &RunCtx, err: PyErr) -> String {
    let (kind, message) = crate::call::exception_text(py, &err);
    ctx.failures
        .lock()
        .expect("not poisoned")
        .insert(FAILURE_KEY.into(), err);
    format!("checkpoint raised {kind}: {message}")
}

/// `f` as the run's checkpoint.
pub fn checkpoint(f: Py<PyAny>, is_async: bool, ctx: Arc<RunCtx>) -> Arc<dyn Checkpoint> {
    let f = Arc::new(f);
    HostCheckpoint::shared(Dialect::Python, move |step| {
        let (f, ctx) = (Arc::clone(&f), Arc::clone(&ctx));
        Box::pin(async move {
            if is_async && ctx.event_loop.is_some() {
                let pending = Python::attach(|py| {
                    let start = || {
                        let coro = f.bind(py).call1((to_py(py, &step)?,))?;
                        let event_loop = ctx.event_loop.as_ref().expect("checked").bind(py);
                        start_on_loop(event_loop, ctx.context.as_ref().map(|c| c.bind(py)), coro)
                    };
                    start().map_err(|e| raised(py, &ctx, e))
                })?;
                let done = pending.await;
                return Python::attach(|py| done.map(drop).map_err(|e| raised(py, &ctx, e)));
            }
            // A `def`, or an `async def` with no loop to run on: a worker thread.
            tokio::task::spawn_blocking(move || {
                Python::attach(|py| {
                    let call = || {
                        let out = f.bind(py).call1((to_py(py, &step)?,))?;
                        if is_async {
                            crate::call::run_coroutine(py, out)?;
                        }
                        Ok(())
                    };
                    call().map_err(|e| raised(py, &ctx, e))
                })
            })
            .await
            .unwrap_or_else(|e| Err(format!("the checkpoint's worker thread failed: {e}")))
        })
    })
}
