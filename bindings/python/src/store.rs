//! Threads: a `Store` (SQLite or PostgreSQL) and agent runs on its threads
//! through the Rust `ThreadRunner` (history loaded, each step committed,
//! one active run per thread, paused runs resumed from any process).

use parlance::store::{ResumeError, Store, StoreError, ThreadRunner};
use parlance::{Agent, Decision, Message};
use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::Value;

use crate::convert::{from_py, to_py};
use crate::errors::{decision_error, raise_store};
use crate::runtime::{awaitable, block_on};

/// The Python exception for a store error.
pub fn store_error(py: Python<'_>, e: &StoreError) -> PyErr {
    let kind = match e {
        StoreError::Busy { .. } => "busy",
        StoreError::NotFound(_) => "not_found",
        StoreError::Conflict(_) => "conflict",
        StoreError::LeaseLost { .. } => "lease_lost",
        StoreError::Corrupt { .. } => "corrupt",
        StoreError::Unstorable(_) => "unstorable",
        StoreError::Database(_) => "database",
    };
    raise_store(py, kind, e.to_string())
}

fn json_list<T: serde::Serialize>(py: Python<'_>, items: &[T]) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(py);
    for item in items {
        list.append(to_py(py, &serde_json::to_value(item).expect("json"))?)?;
    }
    Ok(list.into_any().unbind())
}

/// Threads in SQLite (``sqlite:///parlance.db``, ``sqlite::memory:``) or
/// PostgreSQL (``postgres://...``). Opening migrates the schema.
#[pyclass(module = "parlance", name = "Store", frozen)]
pub struct PyStore {
    pub store: Store,
}

#[pymethods]
impl PyStore {
    #[new]
    fn new(py: Python<'_>, url: String) -> PyResult<Self> {
        let store = block_on(py, async move {
            Store::open(&url)
                .await
                .map_err(|e| Python::attach(|py| store_error(py, &e)))
        })?;
        Ok(PyStore { store })
    }

    /// A new thread (``metadata``: any JSON object); its id.
    #[pyo3(signature = (metadata = None))]
    fn create_thread<'py>(
        &self,
        py: Python<'py>,
        metadata: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let metadata = match metadata {
            Some(m) => from_py(m, "metadata")?,
            None => Value::Object(Default::default()),
        };
        let store = self.store.clone();
        awaitable(py, "store.create_thread()", async move {
            let t = store.create_thread(None, metadata).await;
            Python::attach(|py| match t {
                Ok(t) => Ok(t.id),
                Err(e) => Err(store_error(py, &e)),
            })
        })
    }

    /// A thread's messages, in order, as canonical dicts.
    fn messages<'py>(&self, py: Python<'py>, thread_id: String) -> PyResult<Bound<'py, PyAny>> {
        let store = self.store.clone();
        awaitable(py, "store.messages()", async move {
            let h = store.history(&thread_id).await;
            Python::attach(|py| match h {
                Ok(m) => json_list::<Message>(py, &m),
                Err(e) => Err(store_error(py, &e)),
            })
        })
    }

    /// A thread's runs (id, status, usage, error, output...), oldest first.
    fn runs<'py>(&self, py: Python<'py>, thread_id: String) -> PyResult<Bound<'py, PyAny>> {
        let store = self.store.clone();
        awaitable(py, "store.runs()", async move {
            let r = store.runs(&thread_id).await;
            Python::attach(|py| match r {
                Ok(r) => json_list(py, &r),
                Err(e) => Err(store_error(py, &e)),
            })
        })
    }

    /// Deletes a thread (refused while a run is active on it).
    fn delete_thread<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let store = self.store.clone();
        awaitable(py, "store.delete_thread()", async move {
            let r = store.delete_thread(&thread_id).await;
            Python::attach(|py| r.map_err(|e| store_error(py, &e)))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "Store({})",
            if self.store.is_postgres() {
                "postgres"
            } else {
                "sqlite"
            }
        )
    }
}

/// What a thread run does.
pub enum ThreadWork {
    /// New input on a thread.
    Run(String, Vec<Message>),
    /// The thread's last run again, from its last committed step
    /// (`ThreadRunner::retry`: a failed call runs again; refused after a
    /// completed run).
    Retry(String),
    /// Decisions for a run paused on a thread.
    Resume(String, Vec<Decision>),
}

/// Runs `work` on a store's thread; the response, or the Python error.
pub async fn on_thread(
    store: Store,
    agent: Agent,
    work: ThreadWork,
) -> Result<parlance::Response, PyErr> {
    let runner = ThreadRunner::new(store, agent);
    match work {
        ThreadWork::Run(thread, input) => runner
            .run(&thread, input)
            .await
            .map_err(|e| Python::attach(|py| store_error(py, &e))),
        ThreadWork::Retry(thread) => runner
            .retry(&thread)
            .await
            .map_err(|e| Python::attach(|py| store_error(py, &e))),
        ThreadWork::Resume(run, decisions) => runner.resume(&run, decisions).await.map_err(|e| {
            Python::attach(|py| match e {
                ResumeError::Store(e) => store_error(py, &e),
                ResumeError::Decision(e) => decision_error(py, &e),
            })
        }),
    }
}
