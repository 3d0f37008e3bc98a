//! Rust errors as the Python exceptions of `parlance._errors` (defined in
//! Python so that they carry typed attributes and inherit from the
//! standard exceptions users already catch).

use parlance::format::FormatError;
use parlance::{BuildError, DecisionError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

macro_rules! class {
    ($fn:ident, $name:literal) => {
        /// The exception class, imported once.
        pub fn $fn(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
            static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
            CLASS.import(py, "parlance._errors", $name)
        }
    };
}

class!(tool_error_class, "ToolError");
class!(arguments_refused_class, "_ArgumentsRefused");
class!(run_error_class, "RunError");
class!(format_error_class, "FormatError");
class!(decision_error_class, "DecisionError");
class!(config_error_class, "ConfigError");
class!(store_error_class, "StoreError");

/// An instance of `class(args)` as a `PyErr` (or the error making it).
fn raise<'py, A: pyo3::call::PyCallArgs<'py>>(
    class: PyResult<&Bound<'py, PyAny>>,
    args: A,
) -> PyErr {
    match class.and_then(|c| c.call1(args)) {
        Ok(v) => PyErr::from_value(v),
        Err(e) => e,
    }
}

/// A `FormatError` with the Rust message, path and detail.
pub fn format_error(py: Python<'_>, e: &FormatError) -> PyErr {
    raise(
        format_error_class(py),
        (e.to_string(), e.path.clone(), e.message.clone()),
    )
}

/// A `FormatError` from a plain message (a JSON syntax error...).
pub fn format_message(py: Python<'_>, text: String) -> PyErr {
    raise(format_error_class(py), (text,))
}

/// A `DecisionError`.
pub fn decision_error(py: Python<'_>, e: &DecisionError) -> PyErr {
    raise(
        decision_error_class(py),
        (e.to_string(), e.path.clone(), e.message.clone()),
    )
}

/// A `ConfigError` with a message.
pub fn config_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(config_error_class(py), (message.into(),))
}

/// A model that cannot be built.
pub fn build_error(py: Python<'_>, e: &BuildError) -> PyErr {
    config_error(py, e.to_string())
}

/// A `StoreError` of a kind (`busy`, `not_found`...).
pub fn raise_store(py: Python<'_>, kind: &str, message: String) -> PyErr {
    raise(store_error_class(py), (message, kind.to_string()))
}
