//! Reading back a constrained reply that was cut off (by the token limit
//! or the loop guard). Under a grammar the reply is JSON, so a cut one is
//! a JSON prefix: `{"answer": "I'm so sorry. I` or `{"tool_calls": [{…},
//! {"na`. The longest prefix that closes into a usable reply is kept: an
//! answer string, or the complete tool calls (a half-written call is
//! dropped, never guessed at).

use serde_json::Value;

/// What is open at the end of a JSON prefix: the brackets to close, and
/// whether it ends inside a string.
fn open_state(prefix: &str) -> (Vec<char>, bool) {
    let mut stack = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in prefix.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' => {
                stack.pop();
            }
            _ => {}
        }
    }
    (stack, in_string)
}

/// The prefix closed into a JSON document, if it parses.
fn close(prefix: &str) -> Option<Value> {
    let mut p = prefix.to_string();
    let (_, in_string) = open_state(&p);
    if in_string {
        // A dangling escape cannot be closed.
        if p.ends_with('\\') && !p.ends_with("\\\\") {
            p.pop();
        }
        p.push('"');
    }
    let (stack, _) = open_state(&p);
    p.extend(stack.iter().rev());
    serde_json::from_str(&p).ok()
}

/// Tool calls that each have a name and an arguments object.
fn usable_calls(v: &Value) -> bool {
    v.get("tool_calls")
        .and_then(Value::as_array)
        .is_some_and(|calls| {
            !calls.is_empty()
                && calls
                    .iter()
                    .all(|c| c["name"].is_string() && c["arguments"].is_object())
        })
}

/// The cut reply read back, or `None` when nothing usable can be.
pub fn salvage(text: &str) -> Option<Value> {
    let t = text.trim_start();
    if !t.starts_with('{') {
        return None;
    }
    // Cut inside an answer string: closed where it stopped.
    if let Some(v) = close(t).filter(|v| v.get("answer").is_some_and(Value::is_string)) {
        return Some(v);
    }
    // Tool calls: up to the end of the last whole call (where `}` brings
    // the reply back to its top-level array).
    let mut ends = Vec::new();
    let (mut in_string, mut escaped, mut depth) = (false, false, 0usize);
    for (i, c) in t.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                if c == '}' && depth == 2 {
                    ends.push(i);
                }
            }
            _ => {}
        }
    }
    ends.iter()
        .rev()
        .filter_map(|&i| close(&t[..=i]))
        .find(usable_calls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_cut_answer_string_is_closed() {
        assert_eq!(
            salvage(r#"{"answer": "I'm so sorry. I"#),
            Some(json!({"answer": "I'm so sorry. I"}))
        );
        assert_eq!(
            salvage(r#" {"answer":"a \"b\" c\"#),
            Some(json!({"answer": "a \"b\" c"}))
        );
        assert_eq!(
            salvage(r#"{"answer":"back\\"#),
            Some(json!({"answer": "back\\"}))
        );
        assert_eq!(salvage(r#"{"answer": "#), None, "nothing said yet");
        assert_eq!(
            salvage(r#"{"answer": {"city": "Par"#),
            None,
            "a structured answer is not guessed"
        );
        assert_eq!(salvage(r#"{"answer": 12"#), None);
    }

    #[test]
    fn only_complete_tool_calls_are_kept() {
        let call = r#"{"name": "lookup_order", "arguments": {"order_id": "A-1002"}}"#;
        let want =
            json!({"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A-1002"}}]});
        assert_eq!(
            salvage(&format!(r#"{{"tool_calls": [{call}, {{""#)),
            Some(want.clone())
        );
        assert_eq!(
            salvage(&format!(r#"{{"tool_calls": [{call}, {{"name": "look"#)),
            Some(want.clone())
        );
        assert_eq!(
            salvage(&format!(
                r#"{{"tool_calls": [{call}, {{"name": "x", "arguments": {{"a": 1"#
            )),
            Some(want.clone())
        );
        assert_eq!(salvage(&format!(r#"{{"tool_calls": [{call}"#)), Some(want));
        assert_eq!(
            salvage(r#"{"tool_calls": [{"name": "lookup_order", "argu"#),
            None
        );
        assert_eq!(salvage(r#"{"tool_calls": ["#), None);
    }

    #[test]
    fn a_call_cut_inside_nested_arguments_is_dropped() {
        let first = r#"{"name": "a", "arguments": {"n": 12}}"#;
        let want = json!({"tool_calls": [{"name": "a", "arguments": {"n": 12}}]});
        // The second call's "q" object closed, but not its arguments.
        let cut = format!(
            r#"{{"tool_calls": [{first}, {{"name": "b", "arguments": {{"q": {{"r": 1}}, "s""#
        );
        assert_eq!(salvage(&cut), Some(want.clone()));
        let cut = format!(
            r#"{{"tool_calls": [{first}, {{"name": "b", "arguments": {{"q": [{{"r": 1}}], "s""#
        );
        assert_eq!(salvage(&cut), Some(want));
    }

    #[test]
    fn braces_and_quotes_inside_strings_do_not_end_calls() {
        let first = r#"{"name": "say", "arguments": {"text": "a } \" } b"}}"#;
        let want = json!({"tool_calls": [{"name": "say", "arguments": {"text": "a } \" } b"}}]});
        assert_eq!(
            salvage(&format!(r#"{{"tool_calls": [{first}, {{"na"#)),
            Some(want.clone())
        );
        // A cut inside such a string keeps nothing of that call.
        let cut = format!(
            r#"{{"tool_calls": [{first}, {{"name": "say", "arguments": {{"text": "x }} \" }}"#
        );
        assert_eq!(salvage(&cut), Some(want));
    }

    #[test]
    fn calls_without_a_name_or_arguments_object_are_not_kept() {
        assert_eq!(
            salvage(r#"{"tool_calls": [{"name": 1, "arguments": {}}, {"#),
            None
        );
        assert_eq!(salvage(r#"{"tool_calls": [{"arguments": {}}, {"#), None);
        assert_eq!(
            salvage(r#"{"tool_calls": [{"name": "x", "arguments": 3}, {"#),
            None
        );
        assert_eq!(salvage(r#"{"tool_calls": [{"name": "x"}, {"#), None);
        assert_eq!(
            salvage(
                r#"{"tool_calls": [{"name": "x", "arguments": {}}, {"name": "y", "arguments": 3}, {"#
            ),
            Some(json!({"tool_calls": [{"name": "x", "arguments": {}}]})),
            "up to the last whole call"
        );
        assert_eq!(salvage(r#"{"answer": "a", "#), None);
    }

    #[test]
    fn text_that_is_not_json_is_left_alone() {
        assert_eq!(salvage("plain words"), None);
        assert_eq!(salvage(""), None);
        assert_eq!(salvage(r#"{"other": 1}"#), None);
    }

    #[test]
    fn brackets_inside_strings_do_not_count() {
        assert_eq!(
            salvage(r#"{"answer": "a } ] { [ \" b"#),
            Some(json!({"answer": "a } ] { [ \" b"}))
        );
        assert_eq!(open_state(r#"{"a": ["}", {"#), (vec!['}', ']', '}'], false));
        assert_eq!(open_state(r#"{"a": "x\"#), (vec!['}'], true));
    }
}
