//! The tokio runtime the Rust core runs on, and the two bridges between it
//! and asyncio: a Rust future handed to Python as an awaitable
//! ([`awaitable`]), and blocking on one with the GIL released while
//! Python's signals are still heard ([`block_on`]).
//!
//! Why not pyo3-async-runtimes' `future_into_py`: it sets each result
//! from a blocking-pool thread (one more thread hand-off per run) and does
//! not stop the Rust future when the Python one is cancelled. Here the
//! result is handed to the loop with one `call_soon_threadsafe`, and a
//! cancelled awaitable drops the run's future at once.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use futures::channel::oneshot;
use pyo3::BoundObject;
use pyo3::exceptions::PyRuntimeError;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// The one runtime of the process, started on first use.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .thread_name("parlance")
            .enable_all()
            .build()
            .expect("the tokio runtime starts")
    })
}

fn panic_error(payload: &(dyn std::any::Any + Send)) -> PyErr {
    PanicException::new_err(parlance_bindings::BindError::panic(payload).text)
}

/// `asyncio.get_running_loop()`, with an error that says what to do.
pub fn running_loop<'py>(py: Python<'py>, what: &str) -> PyResult<Bound<'py, PyAny>> {
    static GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let get = GET.import(py, "asyncio", "get_running_loop")?;
    get.call0().map_err(|_| {
        PyRuntimeError::new_err(format!(
            "{what} must be awaited inside a running event loop (use `await` in an async function, or the _sync variant)"
        ))
    })
}

/// `contextvars.copy_context()`: tools started by a run see the caller's
/// context variables.
pub fn copy_context(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    static COPY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    COPY.import(py, "contextvars", "copy_context")?.call0()
}

/// Called on the loop when the awaitable is done: a cancelled one stops
/// the Rust future.
#[pyclass(frozen)]
struct CancelOnDone {
    tx: Mutex<Option<oneshot::Sender<()>>>,
}

#[pymethods]
impl CancelOnDone {
    fn __call__(&self, fut: &Bound<'_, PyAny>) -> PyResult<()> {
        if fut.call_method0("cancelled")?.is_truthy()?
            && let Some(tx) = self.tx.lock().expect("not poisoned").take()
        {
            let _ = tx.send(());
        }
        Ok(())
    }
}

/// Called on the loop with the Rust future's outcome.
#[pyclass(frozen)]
struct Complete {
    fut: Py<PyAny>,
    outcome: Mutex<Option<PyResult<Py<PyAny>>>>,
}

#[pymethods]
impl Complete {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let fut = self.fut.bind(py);
        if fut.call_method0("done")?.is_truthy()? {
            return Ok(());
        }
        match self.outcome.lock().expect("not poisoned").take() {
            Some(Ok(v)) => fut.call_method1("set_result", (v,))?,
            Some(Err(e)) => fut.call_method1("set_exception", (e.into_value(py),))?,
            None => return Ok(()),
        };
        Ok(())
    }
}

/// Runs `fut` on the runtime and returns an asyncio future of its result,
/// on the running loop. Cancelling the Python future drops `fut`; a panic
/// becomes an exception.
pub fn awaitable<'py, F, T>(py: Python<'py>, what: &str, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let event_loop = running_loop(py, what)?;
    let py_fut = event_loop.call_method0("create_future")?;
    let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
    py_fut.call_method1(
        "add_done_callback",
        (CancelOnDone {
            tx: Mutex::new(Some(cancel_tx)),
        },),
    )?;
    let target: Py<PyAny> = py_fut.clone().unbind();
    let event_loop: Py<PyAny> = event_loop.unbind();
    runtime().spawn(async move {
        let run = AssertUnwindSafe(fut).catch_unwind();
        let outcome = futures::select_biased! {
            _ = cancel_rx.fuse() => return,
            r = run.fuse() => r,
        };
        Python::attach(|py| {
            let outcome = match outcome {
                Ok(Ok(v)) => v
                    .into_pyobject(py)
                    .map(|b| b.into_any().unbind())
                    .map_err(Into::into),
                Ok(Err(e)) => Err(e),
                Err(panic) => Err(panic_error(&*panic)),
            };
            let complete = Complete {
                fut: target,
                outcome: Mutex::new(Some(outcome)),
            };
            // The loop may be closed by now: nobody is waiting any more.
            let _ = event_loop
                .bind(py)
                .call_method1("call_soon_threadsafe", (complete,));
        });
    });
    Ok(py_fut)
}

/// Runs `fut` on the runtime and waits for it with the GIL released;
/// Ctrl-C (or any signal handler that raises) stops the wait and drops
/// the future. The caller's thread only waits, so this works from any
/// thread, a tool's worker thread included.
pub fn block_on<F, T>(py: Python<'_>, fut: F) -> PyResult<T>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let task = runtime().spawn(async move {
        let r = AssertUnwindSafe(fut).catch_unwind().await;
        let _ = tx.send(r);
    });
    let mut rx = rx;
    loop {
        let (got, back) = py.detach(move || (rx.recv_timeout(Duration::from_millis(50)), rx));
        rx = back;
        match got {
            Ok(r) => return r.unwrap_or_else(|p| Err(panic_error(&*p))),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    task.abort();
                    return Err(e);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "the run's task ended without a result",
                ));
            }
        }
    }
}
