//! JSON values as people read them: an object as a list of its fields,
//! nested objects indented, short arrays of plain values on one line;
//! the raw JSON one click away. Every value is escaped (maud), so tool
//! arguments and results, untrusted, are only ever text.

use maud::{Markup, html};
use serde_json::Value;

/// Deeper than this, the rest is shown as JSON.
const MAX_DEPTH: usize = 6;

/// A value, readably.
pub fn readable(v: &Value) -> Markup {
    value(v, 0)
}

fn value(v: &Value, depth: usize) -> Markup {
    match v {
        Value::Object(m) if m.is_empty() => html! { span .muted { "(no fields)" } },
        Value::Object(m) if depth < MAX_DEPTH => html! {
            dl .fields {
                @for (k, x) in m {
                    div { dt { (k) } dd { (value(x, depth + 1)) } }
                }
            }
        },
        Value::Array(a) if a.is_empty() => html! { span .muted { "(none)" } },
        Value::Array(a) if depth < MAX_DEPTH && a.iter().all(is_plain) && a.len() <= 20 => html! {
            ul .inline { @for x in a { li { (value(x, depth + 1)) } } }
        },
        Value::Array(a) if depth < MAX_DEPTH => html! {
            ol .items { @for x in a { li { (value(x, depth + 1)) } } }
        },
        Value::String(s) => html! { span .string { (s) } },
        Value::Null => html! { span .muted { "null" } },
        Value::Bool(b) => html! { span .literal { (b) } },
        Value::Number(n) => html! { span .literal { (n) } },
        other => html! { code { (pretty(other)) } },
    }
}

fn is_plain(v: &Value) -> bool {
    !matches!(v, Value::Object(_) | Value::Array(_))
}

/// Indented JSON.
pub fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// A value readably, with its raw JSON folded under it.
pub fn with_raw(v: &Value) -> Markup {
    html! {
        div .args { (readable(v)) }
        details .raw {
            summary { "Raw JSON" }
            pre { code { (pretty(v)) } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn everything_is_escaped() {
        let payload = "<img src=x onerror=alert(1)><script>alert(2)</script>";
        let html = with_raw(&json!({payload: [payload, {"k": payload}]})).into_string();
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{html}"
        );
    }

    #[test]
    fn fields_nested_and_lists() {
        let html = readable(
            &json!({"order": "A-1", "amount": 900, "tags": ["a", "b"], "to": {"iban": "X"}}),
        )
        .into_string();
        assert!(html.contains("<dt>order</dt>"), "{html}");
        assert!(html.contains("<ul class=\"inline\"><li>"), "{html}");
        assert!(html.contains("<dt>iban</dt>"), "{html}");
    }
}
