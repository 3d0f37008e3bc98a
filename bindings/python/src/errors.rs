//! Rust errors as the Python exceptions of `parlance._errors` (defined in
//! Python so that they carry typed attributes and inherit from the
//! standard exceptions users already catch).

use parlance::format::FormatError;
use parlance_bindings::{BindError, ErrorKind};
use pyo3::exceptions::PyRuntimeError;
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

/// The Python exception for an error of the core: its class by kind,
/// with the path, detail and store kind it carries.
pub fn bind_error(py: Python<'_>, e: BindError) -> PyErr {
    let (path, detail) = (e.path.unwrap_or_default(), e.detail.unwrap_or_default());
    match e.kind {
        ErrorKind::Format => raise(format_error_class(py), (e.text, path, detail)),
        ErrorKind::Decision => raise(decision_error_class(py), (e.text, path, detail)),
        ErrorKind::Config => raise(config_error_class(py), (e.text,)),
        ErrorKind::Store => raise(
            store_error_class(py),
            (e.text, e.store_kind.unwrap_or("database")),
        ),
        ErrorKind::Internal => PyRuntimeError::new_err(e.text),
    }
}

/// [`bind_error`], taking the GIL (for futures that end off it).
pub fn bind_error_attached(e: BindError) -> PyErr {
    Python::attach(|py| bind_error(py, e))
}

/// A `FormatError` with the Rust message, path and detail.
pub fn format_error(py: Python<'_>, e: &FormatError) -> PyErr {
    bind_error(py, e.clone().into())
}

/// A `FormatError` from a plain message (a JSON syntax error...).
pub fn format_message(py: Python<'_>, text: String) -> PyErr {
    raise(format_error_class(py), (text,))
}

/// A `ConfigError` with a message.
pub fn config_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    raise(config_error_class(py), (message.into(),))
}
