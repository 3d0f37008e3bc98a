//! What a run takes from JavaScript, read with the format crate's strict
//! readers so that bad input gets the same path-named errors as in Rust
//! and Python: the input, earlier turns, a paused response, decisions.
//! The package's JavaScript hands each over as JSON text (one
//! `JSON.stringify` there, one parse here: cheaper than building the
//! values through N-API one property at a time).

use parlance::format::{messages_from_value, turns_from_value};
use parlance::{Decision, Message, Response, RunInput, Turn};
use serde_json::Value;

use crate::errors::{format_error, format_message, parse};

/// The run's input: a string (one user message), a message, or a list of
/// messages.
pub fn run_input(text: &str) -> napi::Result<RunInput> {
    let v = parse("input", text)?;
    let input = match &v {
        Value::String(s) => return Ok(RunInput::text(s.as_str())),
        Value::Array(_) => messages_from_value(&v, "input").map_err(|e| format_error(&e))?,
        Value::Object(_) => {
            vec![Message::from_value(&v).map_err(|e| format_error(&e.under("input")))?]
        }
        _ => {
            return Err(format_message(
                "input: expected a string, a message (an object) or a list of messages",
            ));
        }
    };
    Ok(RunInput {
        input,
        ..Default::default()
    })
}

/// Earlier turns: responses, turns (`{"messages": [...]}`, stored run
/// records) or lists of messages, read by the format's one reader of
/// turns (a turn without `messages` is one the model does not see).
pub fn turns(text: Option<&str>) -> napi::Result<Vec<Turn>> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    let v = parse("turns", text)?;
    turns_from_value(&v, "turns").map_err(|e| format_error(&e))
}

/// A paused response (its canonical JSON).
pub fn paused(text: &str) -> napi::Result<Response> {
    let v = parse("paused", text)?;
    Response::from_value(&v).map_err(|e| format_error(&e.under("paused")))
}

/// Decisions (what `approve`, `edit`, `reject` and `answer` make).
pub fn decisions(text: &str) -> napi::Result<Vec<Decision>> {
    let v = parse("decisions", text)?;
    let Value::Array(items) = v else {
        return Err(format_message("decisions: expected a list of decisions"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, d)| {
            Decision::from_value(d).map_err(|e| format_error(&e.under(&format!("decisions[{i}]"))))
        })
        .collect()
}
