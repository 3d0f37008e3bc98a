//! Threads: a `Store` (SQLite or PostgreSQL). Opening and every operation
//! are the bindings' shared ones (`parlance_bindings::store`: one query
//! per operation, answered with JSON); runs on its threads are
//! `Work.on_thread` and friends (`agent.rs`).

use parlance::store::Store;
use parlance_bindings::Dialect;
use parlance_bindings::store::{StoreOptions, open, query};
use pyo3::prelude::*;

use crate::convert::{from_py, to_py};
use crate::errors::{bind_error, bind_error_attached};
use crate::runtime::{awaitable, block_on};

/// Threads in SQLite (``sqlite:///parlance.db``, ``sqlite::memory:``) or
/// PostgreSQL (``postgres://...``). Opening migrates the schema.
#[pyclass(module = "parlance", name = "Store", frozen)]
pub struct PyStore {
    pub store: Store,
}

#[pymethods]
impl PyStore {
    /// ``options``: ``{"lease": seconds, "redact": [secrets]}``.
    #[new]
    #[pyo3(signature = (url, options = None))]
    fn new(py: Python<'_>, url: String, options: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let options = match options {
            Some(o) => Some(from_py(o, "options")?),
            None => None,
        };
        let options =
            StoreOptions::read(options.as_ref(), Dialect::Python).map_err(|e| bind_error(py, e))?;
        let store = block_on(py, async move {
            open(&url, options).await.map_err(bind_error_attached)
        })?;
        Ok(PyStore { store })
    }

    /// One operation (``{"op": "thread", "thread_id": ...}``: see
    /// ``parlance_bindings::store::query``), as an awaitable of its answer.
    fn query<'py>(&self, py: Python<'py>, q: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let q = from_py(q, "query")?;
        let store = self.store.clone();
        awaitable(py, "store", async move {
            let answer = query(&store, &q, Dialect::Python).await;
            Python::attach(|py| match answer {
                Ok(v) => to_py(py, &v).map(Bound::unbind),
                Err(e) => Err(bind_error(py, e)),
            })
        })
    }

    /// ``query``, waited for with the GIL released.
    fn query_blocking<'py>(
        &self,
        py: Python<'py>,
        q: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let q = from_py(q, "query")?;
        let store = self.store.clone();
        let v = block_on(py, async move {
            query(&store, &q, Dialect::Python)
                .await
                .map_err(bind_error_attached)
        })?;
        to_py(py, &v)
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
