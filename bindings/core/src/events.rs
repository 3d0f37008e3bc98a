//! A run event as JSON for a package: `{"type": "text_delta", "text": ...}`,
//! the field names in the package's spelling (`call_id`/`callId`), an
//! elapsed time in its unit. The last event, `run_completed`, carries the
//! response (Node reads it as its canonical text, byte for byte: see
//! [`event_json`]).

use parlance::RunEvent;
use serde_json::{Value, json};

use crate::Dialect;

/// The event as a JSON value in dialect `d` (elapsed times: seconds in
/// Python, milliseconds in JavaScript).
pub fn event_value(e: &RunEvent, d: Dialect) -> Value {
    let ty = e.name();
    match e {
        RunEvent::TextDelta(t) | RunEvent::ThinkingDelta(t) => json!({"type": ty, "text": t}),
        RunEvent::MessageCompleted(m) => json!({"type": ty, "message": m}),
        RunEvent::ToolCallStarted { call_id, name } => {
            json!({"type": ty, d.name("call_id"): call_id, "name": name})
        }
        RunEvent::ToolCallFinished {
            call_id,
            name,
            status,
            elapsed,
        } => {
            let (key, amount) = match d {
                Dialect::Python => ("elapsed", elapsed.as_secs_f64()),
                Dialect::Node => ("elapsedMs", elapsed.as_secs_f64() * 1000.0),
            };
            json!({"type": ty, d.name("call_id"): call_id, "name": name, "status": status, key: amount})
        }
        RunEvent::ApprovalRequired(p) => json!({"type": ty, "pending": p}),
        RunEvent::ContextCompacted(c) => json!({
            "type": ty,
            "strategy": c.strategy.as_str(),
            "replaces": c.replaces,
            d.name("tokens_before"): c.tokens_before,
            d.name("tokens_after"): c.tokens_after,
        }),
        RunEvent::RunCompleted(r) => json!({"type": ty, "response": r}),
    }
}

/// The event as JSON text in dialect `d`; `run_completed` carries the
/// response's canonical text exactly.
pub fn event_json(e: &RunEvent, d: Dialect) -> String {
    match e {
        RunEvent::RunCompleted(r) => format!(
            "{{\"type\":\"run_completed\",\"response\":{}}}",
            parlance::format::to_json(r)
        ),
        other => event_value(other, d).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parlance::ToolStatus;
    use std::time::Duration;

    #[test]
    fn field_names_and_units_follow_the_dialect() {
        let e = RunEvent::ToolCallFinished {
            call_id: "c".into(),
            name: "t".into(),
            status: ToolStatus::Ok,
            elapsed: Duration::from_millis(1500),
        };
        assert_eq!(
            event_value(&e, Dialect::Node),
            json!({"type": "tool_call_finished", "callId": "c", "name": "t", "status": "ok", "elapsedMs": 1500.0})
        );
        assert_eq!(
            event_value(&e, Dialect::Python),
            json!({"type": "tool_call_finished", "call_id": "c", "name": "t", "status": "ok", "elapsed": 1.5})
        );
    }
}
