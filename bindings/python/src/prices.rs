//! `parlance.cost`: the cost of a usage under the price table (the
//! built-in genai-prices one, or a file's ahead of it).

use parlance::{PriceTable, Usage};
use pyo3::prelude::*;

use crate::convert::from_py;
use crate::errors::{config_error, format_error};
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
    let Some((provider, id)) = model.split_once(':') else {
        return Err(config_error(
            py,
            format!("model {model:?}: expected provider:model, e.g. anthropic:claude-sonnet-4-5"),
        ));
    };
    let usage: Usage = match usage.cast::<PyUsage>() {
        Ok(u) => u.get().0,
        Err(_) => {
            let v = from_py(usage, "usage")?;
            Usage::from_value(&v).map_err(|e| format_error(py, &e))?
        }
    };
    let builtin = PriceTable::builtin();
    Ok(match prices {
        None => builtin.cost(provider, id, &usage),
        Some(path) => {
            let table = PriceTable::from_file(&path)
                .map_err(|e| config_error(py, e.to_string()))?
                .then(builtin.clone());
            table.cost(provider, id, &usage)
        }
    })
}
