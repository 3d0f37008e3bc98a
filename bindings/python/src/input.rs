//! What a run takes from Python, read with the format crate's strict
//! readers so that bad input gets the same path-named errors as in Rust:
//! the input, earlier turns, a paused response, decisions.

use parlance::format::{FormatError, messages_from_value, turn_from_value};
use parlance::{Decision, Message, Response, RunInput, Turn};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use serde_json::Value;

use crate::convert::from_py;
use crate::errors::{format_error, format_message};
use crate::response::PyResponse;

fn under(py: Python<'_>, e: FormatError, prefix: &str) -> PyErr {
    format_error(py, &e.under(prefix))
}

/// The run's input: a string (one user message), a message dict, or a
/// list of message dicts.
pub fn run_input(py: Python<'_>, input: &Bound<'_, PyAny>) -> PyResult<RunInput> {
    if let Ok(s) = input.cast::<PyString>() {
        return Ok(RunInput::text(s.to_cow()?));
    }
    let v = from_py(input, "input")?;
    let messages = match &v {
        Value::Array(_) => messages_from_value(&v, "input").map_err(|e| format_error(py, &e))?,
        Value::Object(_) => {
            vec![Message::from_value(&v).map_err(|e| under(py, e, "input"))?]
        }
        _ => {
            return Err(format_message(
                py,
                "input: expected a string, a message (dict) or a list of messages".into(),
            ));
        }
    };
    Ok(RunInput {
        input: messages,
        ..Default::default()
    })
}

/// Earlier turns: responses, turn dicts (`{"messages": [...]}`, stored
/// run records) or lists of messages, read by the format's one reader of
/// turns (a turn without `messages` is one the model does not see).
pub fn turns(py: Python<'_>, turns: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Turn>> {
    let Some(turns) = turns else {
        return Ok(Vec::new());
    };
    let list = turns
        .cast::<PyList>()
        .map_err(|_| format_message(py, "turns: expected a list of responses or turns".into()))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let path = format!("turns[{i}]");
        if let Ok(r) = item.cast::<PyResponse>() {
            out.push(Turn {
                messages: r.get().inner.messages.clone(),
            });
            continue;
        }
        let v = from_py(&item, &path)?;
        out.push(turn_from_value(&v, &path).map_err(|e| format_error(py, &e))?);
    }
    Ok(out)
}

/// A paused response: a `Response`, its dict or its JSON text.
pub fn paused(py: Python<'_>, paused: &Bound<'_, PyAny>) -> PyResult<Response> {
    if let Ok(r) = paused.cast::<PyResponse>() {
        return Ok((*r.get().inner).clone());
    }
    let v = if let Ok(s) = paused.cast::<PyString>() {
        serde_json::from_str(&s.to_cow()?).map_err(|e| {
            format_message(
                py,
                format!(
                    "paused: invalid JSON at line {} column {}: {e}",
                    e.line(),
                    e.column()
                ),
            )
        })?
    } else {
        from_py(paused, "paused")?
    };
    Response::from_value(&v).map_err(|e| under(py, e, "paused"))
}

/// Decisions as canonical dicts (what `approve`, `edit`, `reject` and
/// `answer` make).
pub fn decisions(py: Python<'_>, decisions: &Bound<'_, PyAny>) -> PyResult<Vec<Decision>> {
    let v = from_py(decisions, "decisions")?;
    let Value::Array(items) = v else {
        return Err(format_message(
            py,
            "decisions: expected a list of decisions".into(),
        ));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, d)| Decision::from_value(d).map_err(|e| under(py, e, &format!("decisions[{i}]"))))
        .collect()
}
