//! `parlance._core`: the native module of the Python package
//! (`parlance-ai` on PyPI, imported as `parlance`). It wraps the public
//! Rust API of the `parlance-ai` crate; the Python side
//! (`bindings/python/python/parlance`) turns type hints into schemas and
//! gives the API its Python shape.

mod agent;
mod call;
mod checkpoint;
mod convert;
mod convert_formats;
mod errors;
mod events;
mod format;
mod guardrail;
mod input;
mod local;
mod mcp;
mod model_host;
mod models;
mod outcome;
mod prices;
mod response;
mod runtime;
mod store;
mod tools;
mod toolset;
mod traces;

use pyo3::prelude::*;

/// At most `n` characters of `s`, with an ellipsis when cut (for reprs).
pub(crate) fn short(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Panics in Rust, on purpose, the three ways a call reaches Rust (`sync`:
/// in the call; `blocking`: in a future waited for; `async`: in a future
/// awaited from Python). For the tests that check no panic reaches a user
/// as anything but a Python exception.
#[pyfunction]
fn _panic_for_tests<'py>(py: Python<'py>, how: &str) -> PyResult<Bound<'py, PyAny>> {
    let message = format!("deliberate panic ({how})");
    match how {
        "sync" => panic!("{message}"),
        "blocking" => runtime::block_on(py, async move {
            if !message.is_empty() {
                panic!("{message}");
            }
            Ok(())
        })
        .map(|()| py.None().into_bound(py)),
        _ => runtime::awaitable(py, "_panic_for_tests()", async move {
            if !message.is_empty() {
                panic!("{message}");
            }
            Ok(())
        }),
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    logs_to_python_logging(py);
    m.add_class::<agent::PyAgent>()?;
    m.add_class::<guardrail::PyGuardrail>()?;
    m.add_class::<agent::PyWork>()?;
    m.add_class::<tools::PyTool>()?;
    m.add_class::<tools::PyToolContext>()?;
    m.add_class::<response::PyResponse>()?;
    m.add_class::<response::PyUsage>()?;
    m.add_class::<response::PyApprovalRequest>()?;
    m.add_class::<events::PyRunStream>()?;
    m.add_class::<models::PyModel>()?;
    m.add_class::<store::PyStore>()?;
    m.add_class::<mcp::PyMcpServer>()?;
    m.add_class::<traces::PyTraces>()?;
    m.add_class::<toolset::PyToolset>()?;
    model_host::register(m)?;
    let fmt = PyModule::new(py, "format")?;
    fmt.add_function(wrap_pyfunction!(format::validate, &fmt)?)?;
    fmt.add_function(wrap_pyfunction!(format::canonical, &fmt)?)?;
    fmt.add_function(wrap_pyfunction!(format::dumps, &fmt)?)?;
    fmt.add_function(wrap_pyfunction!(format::schema, &fmt)?)?;
    fmt.add_function(wrap_pyfunction!(convert_formats::convert, &fmt)?)?;
    fmt.add("FORMAT_VERSION", parlance::format::FORMAT_VERSION)?;
    m.add_submodule(&fmt)?;
    m.add_function(wrap_pyfunction!(prices::cost, m)?)?;
    m.add_function(wrap_pyfunction!(local::pull_local_model, m)?)?;
    m.add_function(wrap_pyfunction!(traces::export_traces, m)?)?;
    m.add_function(wrap_pyfunction!(local::local_model_path, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// The runtime's logs go to Python's `logging`, under the Rust module's
/// path (`parlance_providers.http_model`: a request's dropped reasoning is
/// a warning there, shown by Python's default handler). Levels are read
/// once per logger (what `logging` says when a logger first logs), and
/// span bookkeeping (`tracing.*`) is not logged. Another native module
/// that installed a Rust logger first keeps it.
fn logs_to_python_logging(py: Python<'_>) {
    if let Ok(logger) = pyo3_log::Logger::new(py, pyo3_log::Caching::LoggersAndLevels) {
        let _ = logger
            .filter(log::LevelFilter::Debug)
            .filter_target("tracing".to_owned(), log::LevelFilter::Off)
            .install();
    }
}
