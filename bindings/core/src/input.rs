//! What a run takes from a package, read with the format crate's strict
//! readers so that bad input gets the same path-named errors in every
//! language: the input, earlier turns, a paused response, decisions.
//! Each package hands over JSON values (Python converts its objects,
//! Node parses the text its JavaScript wrote).

use parlance::format::{messages_from_value, parse_json, turns_from_value};
use parlance::{Decision, Message, Response, RunInput, Turn};
use serde_json::Value;

use crate::BindError;

/// The run's input: a string (one user message), a message, or a list of
/// messages.
pub fn run_input(v: &Value) -> Result<RunInput, BindError> {
    Ok(RunInput {
        input: messages(v, "input")?,
        ..Default::default()
    })
}

/// Messages as a run's input is given: a string (a user message), a
/// message, or a list of messages; errors under `path`.
pub fn messages(v: &Value, path: &str) -> Result<Vec<Message>, BindError> {
    match v {
        Value::String(s) => Ok(vec![Message::user(s.as_str())]),
        Value::Array(_) => Ok(messages_from_value(v, path)?),
        Value::Object(_) => Ok(vec![Message::from_value(v).map_err(|e| e.under(path))?]),
        _ => Err(BindError::format(format!(
            "{path}: expected a string, a message (an object) or a list of messages"
        ))),
    }
}

/// Earlier turns: responses, turns (`{"messages": [...]}`, stored run
/// records) or lists of messages, read by the format's one reader of
/// turns (a turn without `messages` is one the model does not see).
pub fn turns(v: Option<&Value>) -> Result<Vec<Turn>, BindError> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => Ok(turns_from_value(v, "turns")?),
    }
}

/// A paused response: its canonical value, or its JSON text.
pub fn paused(v: &Value) -> Result<Response, BindError> {
    let parsed;
    let v = match v {
        Value::String(text) => {
            parsed = parse_json(text).map_err(|e| e.under("paused"))?;
            &parsed
        }
        v => v,
    };
    Ok(Response::from_value(v).map_err(|e| e.under("paused"))?)
}

/// Decisions (what `approve`, `edit`, `reject` and `answer` make).
pub fn decisions(v: &Value) -> Result<Vec<Decision>, BindError> {
    let Value::Array(items) = v else {
        return Err(BindError::format("decisions: expected a list of decisions"));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, d)| {
            Decision::from_value(d)
                .map_err(|e| BindError::from(e.under(&format!("decisions[{i}]"))))
        })
        .collect()
}

/// A thread's metadata: an object (none: empty).
pub fn metadata(v: Option<&Value>) -> Result<Value, BindError> {
    match v {
        None | Some(Value::Null) => Ok(Value::Object(Default::default())),
        Some(v @ Value::Object(_)) => Ok(v.clone()),
        Some(_) => Err(BindError::config("metadata: expected an object")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_is_a_string_a_message_or_a_list() {
        assert_eq!(
            run_input(&json!("Hi")).unwrap().input,
            vec![Message::user("Hi")]
        );
        let m = json!({"role": "user", "content": [{"type": "text", "text": "Hi"}]});
        assert_eq!(run_input(&m).unwrap().input.len(), 1);
        assert_eq!(run_input(&json!([m, m])).unwrap().input.len(), 2);
        let e = run_input(&json!(3)).unwrap_err();
        assert_eq!(
            e.text,
            "input: expected a string, a message (an object) or a list of messages"
        );
        let e = run_input(&json!({"role": "robot", "content": []})).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("input.role"), "{e}");
    }

    #[test]
    fn decisions_name_their_index() {
        let e = decisions(
            &json!([{"decision": "approved", "tool_call_id": "c", "digest": format!("sha256:{}", "0".repeat(64))}, {"decision": "maybe"}]),
        )
        .unwrap_err();
        assert!(e.text.starts_with("decisions[1]"), "{e}");
        assert!(decisions(&json!({})).is_err());
    }

    #[test]
    fn a_paused_response_reads_from_text_or_value() {
        let r = json!({"status": "completed", "messages": []});
        assert!(paused(&r).is_ok());
        assert!(paused(&json!(r.to_string())).is_ok());
        let e = paused(&json!("{")).unwrap_err();
        assert!(e.text.starts_with("paused: invalid JSON"), "{e}");
    }
}
