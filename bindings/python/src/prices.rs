//! `parlance.cost`: the cost of a usage under the price table (the
//! built-in genai-prices one, or a file's ahead of it).

use parlance::Usage;
use pyo3::prelude::*;

use crate::convert::from_py;
use crate::errors::{bind_error, format_error};
use crate::response::PyUsage;

/// What ``usage`` on ``model`` (``"provider:model"``) cost, in US dollars;
/// ``None`` when the price table does not know the model. ``prices``: a
/// JSON price table file consulted before the built-in one.
#[pyfunction]
#[pyo3(signature = (model, usage, *, prices = None))]
pub fn cost(
    py: Python<'_>,
    model: &str,
    usage: &Bound<'_, PyAny>,
    prices: Option<std::path::PathBuf>,
) -> PyResult<Option<f64>> {
    let usage: Usage = match usage.cast::<PyUsage>() {
        Ok(u) => u.get().0,
        Err(_) => {
            let v = from_py(usage, "usage")?;
            Usage::from_value(&v).map_err(|e| format_error(py, &e))?
        }
    };
    parlance_bindings::prices::cost(model, &usage, prices.as_deref()).map_err(|e| bind_error(py, e))
}
