//! A guardrail the package's user writes (a Python function, a
//! JavaScript one): the engine hands it the check as JSON in the
//! language's spelling and reads its verdict back, so both packages share
//! one reading of verdicts and one set of errors.
//!
//! What the function sees: `{point, text, messages, call, value, partial,
//! thread_id}` (`threadId` in JavaScript; `point` is `input`, `tool_call`
//! or `output`, `toolCall` in JavaScript). What it answers: `null` to
//! allow, or `{action, message?, reason?, value?}` (action `allow`,
//! `block`, `replace`, `retry`, `require_approval` — `requireApproval`
//! in JavaScript).

use futures::future::BoxFuture;
use parlance::{GuardPoint, Guarded, Guardrail, Verdict};
use serde_json::Value;

use crate::{BindError, Dialect};

/// The host's function: the check's JSON in, the verdict's JSON (or the
/// sentence of what it raised) out.
pub type HostCheck = dyn Fn(Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync;

/// A point as the dialect spells it.
fn point_name(p: GuardPoint, d: Dialect) -> &'static str {
    match (p, d) {
        (GuardPoint::ToolCall, Dialect::Node) => "toolCall",
        (p, _) => p.as_str(),
    }
}

/// The point `s` names (either spelling), or an error naming the known ones.
pub fn point(s: &str, d: Dialect) -> Result<GuardPoint, BindError> {
    let canonical = if s == "toolCall" { "tool_call" } else { s };
    GuardPoint::parse(canonical).map_err(|_| {
        let known: Vec<&str> = GuardPoint::ALL.iter().map(|p| point_name(*p, d)).collect();
        BindError::config(format!(
            "guardrail point: expected one of {}, got {s:?}",
            known.join(", ")
        ))
    })
}

/// The check as the function receives it.
pub fn check_value(g: &Guarded, d: Dialect) -> Value {
    let mut v = serde_json::to_value(g).expect("json");
    v["point"] = Value::String(point_name(g.point, d).into());
    if d == Dialect::Node
        && let Some(o) = v.as_object_mut()
        && let Some(t) = o.remove("thread_id")
    {
        o.insert("threadId".into(), t);
    }
    v
}

/// The function's answer as a verdict; the error names what is wrong.
pub fn verdict(v: &Value) -> Result<Verdict, String> {
    let mut v = v.clone();
    if v["action"] == "requireApproval" {
        v["action"] = Value::String("require_approval".into());
    }
    Verdict::from_value(&v).map_err(|e| format!("its verdict: {e}"))
}

/// A guardrail whose check is the host's function.
pub fn host_guardrail(
    name: &str,
    point: GuardPoint,
    d: Dialect,
    check: std::sync::Arc<HostCheck>,
) -> Guardrail {
    Guardrail::new(name, point, move |g| {
        let (check, input) = (std::sync::Arc::clone(&check), check_value(&g, d));
        async move {
            let answer = check(input).await?;
            verdict(&answer).map_err(Into::into)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_dialect_spells_the_check_and_reads_both_spellings_of_verdicts() {
        let g = Guarded {
            point: GuardPoint::ToolCall,
            text: "{}".into(),
            messages: vec![],
            call: None,
            value: json!({}),
            partial: false,
            thread_id: Some("thr_1".into()),
        };
        let node = check_value(&g, Dialect::Node);
        assert_eq!(
            (node["point"].clone(), node["threadId"].clone()),
            (json!("toolCall"), json!("thr_1"))
        );
        let py = check_value(&g, Dialect::Python);
        assert_eq!(
            (py["point"].clone(), py["thread_id"].clone()),
            (json!("tool_call"), json!("thr_1"))
        );
        assert_eq!(
            verdict(&json!({"action": "requireApproval", "reason": "big"})),
            Ok(Verdict::require_approval().because("big"))
        );
        assert_eq!(
            verdict(&json!({"action": "nope"})).unwrap_err(),
            "its verdict: action: unknown action \"nope\" (known: allow, block, replace, retry, require_approval)"
        );
        assert_eq!(point("toolCall", Dialect::Node), Ok(GuardPoint::ToolCall));
        assert_eq!(
            point("inbox", Dialect::Node).unwrap_err().to_string(),
            "guardrail point: expected one of input, toolCall, output, got \"inbox\""
        );
    }
}
