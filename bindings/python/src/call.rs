//! A Python coroutine run as a task on the caller's event loop, awaited
//! from Rust. Dropping the Rust future (the engine timed the call out, or
//! the run was stopped) cancels the task, so `CancelledError` reaches the
//! tool at its next `await`.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::channel::oneshot;
use pyo3::exceptions::asyncio::CancelledError;
use pyo3::prelude::*;

/// The task, once the loop has made it; shared with the canceller.
#[derive(Default)]
struct TaskSlot(Mutex<Option<Py<PyAny>>>);

/// Runs on the loop: makes the task (in the caller's context) and
/// reports its end.
#[pyclass(frozen)]
struct Start {
    coro: Mutex<Option<Py<PyAny>>>,
    context: Option<Py<PyAny>>,
    event_loop: Py<PyAny>,
    slot: Arc<TaskSlot>,
    tx: Mutex<Option<oneshot::Sender<PyResult<Py<PyAny>>>>>,
}

#[pymethods]
impl Start {
    fn __call__(slf: &Bound<'_, Self>) -> PyResult<()> {
        let py = slf.py();
        let me = slf.get();
        let Some(coro) = me.coro.lock().expect("not poisoned").take() else {
            return Ok(());
        };
        let create = me.event_loop.bind(py).getattr("create_task")?;
        let made = match &me.context {
            Some(c) => c.bind(py).call_method1("run", (create, coro)),
            None => create.call1((coro,)),
        };
        let task = match made {
            Ok(t) => t,
            Err(e) => {
                if let Some(tx) = me.tx.lock().expect("not poisoned").take() {
                    let _ = tx.send(Err(e));
                }
                return Ok(());
            }
        };
        *me.slot.0.lock().expect("not poisoned") = Some(task.clone().unbind());
        let done = Done {
            tx: Mutex::new(me.tx.lock().expect("not poisoned").take()),
        };
        task.call_method1("add_done_callback", (done,))?;
        Ok(())
    }
}

/// Runs on the loop when the task ends: its result or exception to Rust.
#[pyclass(frozen)]
struct Done {
    tx: Mutex<Option<oneshot::Sender<PyResult<Py<PyAny>>>>>,
}

#[pymethods]
impl Done {
    fn __call__(&self, task: &Bound<'_, PyAny>) -> PyResult<()> {
        let Some(tx) = self.tx.lock().expect("not poisoned").take() else {
            return Ok(());
        };
        let outcome = if task.call_method0("cancelled")?.is_truthy()? {
            Err(CancelledError::new_err("the tool's task was cancelled"))
        } else {
            let exc = task.call_method0("exception")?;
            if exc.is_none() {
                task.call_method0("result").map(Bound::unbind)
            } else {
                Err(PyErr::from_value(exc))
            }
        };
        let _ = tx.send(outcome);
        Ok(())
    }
}

/// Runs on the loop: cancels the task if it is still going.
#[pyclass(frozen)]
struct Cancel {
    slot: Arc<TaskSlot>,
}

#[pymethods]
impl Cancel {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        if let Some(task) = self.slot.0.lock().expect("not poisoned").take() {
            task.bind(py).call_method0("cancel")?;
        }
        Ok(())
    }
}

/// A call in flight on the loop; await it for the coroutine's result.
pub struct PendingCall {
    rx: oneshot::Receiver<PyResult<Py<PyAny>>>,
    slot: Arc<TaskSlot>,
    event_loop: Py<PyAny>,
    finished: bool,
}

/// Schedules `coro` as a task on `event_loop` (thread-safe), in `context`.
pub fn start_on_loop(
    event_loop: &Bound<'_, PyAny>,
    context: Option<&Bound<'_, PyAny>>,
    coro: Bound<'_, PyAny>,
) -> PyResult<PendingCall> {
    let (tx, rx) = oneshot::channel();
    let slot = Arc::new(TaskSlot::default());
    let start = Start {
        coro: Mutex::new(Some(coro.unbind())),
        context: context.map(|c| c.clone().unbind()),
        event_loop: event_loop.clone().unbind(),
        slot: Arc::clone(&slot),
        tx: Mutex::new(Some(tx)),
    };
    event_loop.call_method1("call_soon_threadsafe", (start,))?;
    Ok(PendingCall {
        rx,
        slot,
        event_loop: event_loop.clone().unbind(),
        finished: false,
    })
}

impl Future for PendingCall {
    type Output = PyResult<Py<PyAny>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match Pin::new(&mut self.rx).poll(cx) {
            Poll::Ready(r) => {
                self.finished = true;
                Poll::Ready(r.unwrap_or_else(|_| {
                    Err(CancelledError::new_err(
                        "the event loop dropped the tool's task (was it closed?)",
                    ))
                }))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        Python::attach(|py| {
            let cancel = Cancel {
                slot: Arc::clone(&self.slot),
            };
            // A closed loop has nothing left to cancel.
            let _ = self
                .event_loop
                .bind(py)
                .call_method1("call_soon_threadsafe", (cancel,));
        });
    }
}

/// Runs `asyncio.run(coro)`: an `async def` of the application's (a
/// model, a checkpoint, a toolset) called where no loop runs.
pub fn run_coroutine<'py>(py: Python<'py>, coro: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static RUN: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    RUN.import(py, "asyncio", "run")?.call1((coro,))
}

/// An exception's class name and message, for an error sentence.
pub fn exception_text(py: Python<'_>, err: &PyErr) -> (String, String) {
    let kind = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let message = err
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    (kind, message)
}

/// Calls a Python function of the application's from inside a run (a
/// guardrail, ...): an ``async def`` as a task on the run's loop when the
/// run has one (so it shares the caller's context), else on a worker
/// thread, a coroutine then run to its end there. `args` and `read` run
/// with the GIL held.
pub async fn call_back<T: Send + 'static>(
    f: Arc<Py<PyAny>>,
    is_async: bool,
    args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>>
    + Send
    + 'static,
    read: impl for<'py> FnOnce(Python<'py>, &Bound<'py, PyAny>) -> PyResult<T> + Send + 'static,
) -> PyResult<T> {
    let run = parlance::agent::current_deps::<Arc<crate::tools::RunCtx>>();
    if let Some(run) = run.filter(|r| is_async && r.event_loop.is_some()) {
        let pending = Python::attach(|py| {
            let coro = f.bind(py).call1(args(py)?)?;
            let event_loop = run.event_loop.as_ref().expect("checked").bind(py);
            start_on_loop(event_loop, run.context.as_ref().map(|c| c.bind(py)), coro)
        })?;
        let done = pending.await;
        return Python::attach(|py| read(py, done?.bind(py)));
    }
    tokio::task::spawn_blocking(move || {
        Python::attach(|py| {
            let out = f.bind(py).call1(args(py)?)?;
            let out = if is_async {
                run_coroutine(py, out)?
            } else {
                out
            };
            read(py, &out)
        })
    })
    .await
    .unwrap_or_else(|e| {
        Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "its worker thread failed: {e}"
        )))
    })
}
