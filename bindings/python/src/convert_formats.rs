//! `parlance.format.convert`: the providers crate's one conversion
//! (`parlance_providers::convert`, what `parlance convert` and the npm
//! package call), with Python's parameter names in its errors and its
//! warnings as `UserWarning`s.

use parlance::providers::convert::{Input, Kind, Params, convert as shared};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::convert::{from_py, to_py};
use crate::errors::bind_error;

const PARAMS: Params = Params {
    from: "from_",
    to: "to",
    model: "model",
};

/// Converts ``value`` (a ``request``, a ``response`` or a recorded
/// ``stream``) from one format to another: ``canonical``,
/// ``openai-chat``, ``openai-responses``, ``anthropic``, ``gemini``...
/// Writing a provider's request needs the model (``model=``, or the one
/// the input names). ``value`` is parsed JSON or its text (a stream: SSE
/// text, JSON lines, a list of events, or the bytes of a Bedrock
/// ConverseStream body). Anything dropped or degraded on the way is
/// reported as a ``UserWarning``.
#[pyfunction]
#[pyo3(signature = (value, *, from_, to, kind = "request", model = None))]
pub fn convert<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    from_: &str,
    to: &str,
    kind: &str,
    model: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let kind = Kind::parse(kind).map_err(|e| bind_error(py, e.into()))?;
    let text;
    let bytes;
    let parsed;
    let input = if let Ok(s) = value.cast::<PyString>() {
        text = s.to_cow()?.into_owned();
        Input::Text(&text)
    } else if let Ok(b) = value.cast::<PyBytes>() {
        // UTF-8 text, or a Bedrock stream's binary event-stream frames.
        bytes = b.as_bytes().to_vec();
        Input::Bytes(&bytes)
    } else {
        parsed = from_py(value, "")?;
        Input::Value(&parsed)
    };
    let out = shared(input, from_, to, kind, model.as_deref(), &PARAMS)
        .map_err(|e| bind_error(py, e.into()))?;
    if !out.warnings.is_empty() {
        let warn = py.import("warnings")?.getattr("warn")?;
        for w in out.warnings {
            warn.call1((w,))?;
        }
    }
    to_py(py, &out.output)
}
