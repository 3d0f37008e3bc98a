//! What a run takes from Python, read by the bindings' shared readers
//! (`parlance_bindings::input`: the same path-named errors as Rust and
//! Node). Only what is Python's own is here: a `Response` object is taken
//! as it is, without a round trip through dicts.

use parlance::{Decision, Response, RunInput, Turn};
use parlance_bindings::input as shared;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::convert::from_py;
use crate::errors::{bind_error, format_message};
use crate::response::PyResponse;

/// The run's input: a string (one user message), a message dict, or a
/// list of message dicts.
pub fn run_input(py: Python<'_>, input: &Bound<'_, PyAny>) -> PyResult<RunInput> {
    if let Ok(s) = input.cast::<PyString>() {
        return Ok(RunInput::text(s.to_cow()?));
    }
    shared::run_input(&from_py(input, "input")?).map_err(|e| bind_error(py, e))
}

/// Earlier turns: `Response`s, turn dicts (`{"messages": [...]}`, stored
/// run records) or lists of messages.
pub fn turns(py: Python<'_>, turns: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Turn>> {
    let Some(turns) = turns.filter(|t| !t.is_none()) else {
        return Ok(Vec::new());
    };
    let list = turns
        .cast::<PyList>()
        .map_err(|_| format_message(py, "turns: expected a list of responses or turns".into()))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        if let Ok(r) = item.cast::<PyResponse>() {
            out.push(Turn {
                messages: r.get().inner.messages.clone(),
            });
            continue;
        }
        let path = format!("turns[{i}]");
        let v = from_py(&item, &path)?;
        out.push(
            parlance::format::turn_from_value(&v, &path).map_err(|e| bind_error(py, e.into()))?,
        );
    }
    Ok(out)
}

/// A paused response: a `Response`, its dict or its JSON text.
pub fn paused(py: Python<'_>, paused: &Bound<'_, PyAny>) -> PyResult<Response> {
    if let Ok(r) = paused.cast::<PyResponse>() {
        return Ok((*r.get().inner).clone());
    }
    shared::paused(&from_py(paused, "paused")?).map_err(|e| bind_error(py, e))
}

/// Decisions as canonical dicts (what `approve`, `edit`, `reject` and
/// `answer` make).
pub fn decisions(py: Python<'_>, decisions: &Bound<'_, PyAny>) -> PyResult<Vec<Decision>> {
    shared::decisions(&from_py(decisions, "decisions")?).map_err(|e| bind_error(py, e))
}
