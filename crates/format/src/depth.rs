//! One depth limit for reading and writing.
//!
//! JSON readers stop somewhere (serde_json at 128 nested arrays and
//! objects), so a document Parlance writes must stay well below that or it
//! cannot be read back: a value accepted at one depth must not become
//! unreadable when written one or two levels deeper (a legacy flat tool
//! call gains a level in canonical form; `parlance validate --json` wraps
//! a document in one more object). The canonical structure around a
//! free-form value (arguments, a JSON block, metadata, an artifact, a tool
//! schema) is at most ten levels deep, so the limit is on the free-form
//! value itself: readers refuse deeper values, and whoever writes one from
//! a provider's JSON (tool call arguments) applies the same test.

use serde_json::Value;

use crate::{FormatError, Message};

/// The deepest a free-form value (tool call arguments, a `json` block,
/// `metadata`, an `artifact`, a tool's `input_schema`...) may nest, in
/// arrays and objects; a scalar is depth 0, `{}` and `[]` depth 1.
///
/// With the canonical structure around it (at most 10 levels) and a
/// wrapper or two, a document stays below serde_json's 128.
pub const MAX_VALUE_DEPTH: usize = 100;

/// Whether `v` nests no deeper than `limit` arrays and objects. Iterative
/// (no recursion, whatever the input), and it stops at the first level
/// beyond the limit.
pub fn within_depth(v: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((v, d)) = stack.pop() {
        match v {
            Value::Array(a) if d < limit => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(m) if d < limit => stack.extend(m.values().map(|c| (c, d + 1))),
            Value::Array(_) | Value::Object(_) => return false,
            _ => {}
        }
    }
    true
}

/// `v` if it nests no deeper than [`MAX_VALUE_DEPTH`], else the error every
/// reader and writer gives, at `path` (`decisions[0].arguments`).
pub fn check_depth(v: &Value, path: &str) -> Result<(), FormatError> {
    if within_depth(v, MAX_VALUE_DEPTH) {
        Ok(())
    } else {
        Err(FormatError::new(
            path,
            format!(
                "nested deeper than {MAX_VALUE_DEPTH} levels of arrays and objects (the format's limit)"
            ),
        ))
    }
}

/// The deepest nesting of arrays and objects in JSON text (strings
/// skipped). A byte scan: no parse, no recursion.
fn text_depth(json: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in json.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// A message's canonical JSON, refused (with the reader's error) when the
/// reader would refuse it: what a store writes must read back. Only a
/// message nesting deeper than the limit as a whole is read again, so the
/// usual write costs one byte scan.
pub fn to_readable_json(message: &Message) -> Result<String, FormatError> {
    let json = crate::to_json(message);
    if text_depth(&json) > MAX_VALUE_DEPTH {
        Message::from_json_str(&json)?;
    }
    Ok(json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(levels: usize) -> Value {
        let mut v = json!(1);
        for i in 0..levels {
            v = if i % 2 == 0 {
                json!([v])
            } else {
                json!({"a": v})
            };
        }
        v
    }

    #[test]
    fn depth_counts_arrays_and_objects_not_scalars() {
        assert!(within_depth(&json!(1), 0));
        assert!(within_depth(&json!("x"), 0));
        assert!(!within_depth(&json!([]), 0));
        assert!(within_depth(&json!([]), 1));
        assert!(within_depth(&json!({}), 1));
        assert!(within_depth(&json!({"a": [1, {"b": 2}]}), 3));
        assert!(!within_depth(&json!({"a": [1, {"b": 2}]}), 2));
        for n in [1, 5, 99, 100, 101] {
            assert!(within_depth(&nested(n), n), "{n}");
            assert!(!within_depth(&nested(n), n - 1), "{n}");
        }
    }

    #[test]
    fn text_depth_skips_strings() {
        assert_eq!(text_depth("1"), 0);
        assert_eq!(text_depth(r#"{"a":[1,{"b":"[[[{\"]]"}]}"#), 3);
        assert_eq!(text_depth(&nested(150).to_string()), 150);
    }

    #[test]
    fn a_message_is_written_only_if_it_reads_back() {
        let call = |depth| {
            Message::new(
                crate::Role::Assistant,
                vec![crate::Block::tool_call(
                    "c1",
                    "t",
                    json!({"a": nested(depth)}),
                )],
            )
        };
        // The value itself at the limit, the message deeper than it.
        let ok = to_readable_json(&call(MAX_VALUE_DEPTH - 1)).unwrap();
        assert!(text_depth(&ok) > MAX_VALUE_DEPTH);
        assert_eq!(
            Message::from_json_str(&ok).unwrap(),
            call(MAX_VALUE_DEPTH - 1)
        );
        let e = to_readable_json(&call(MAX_VALUE_DEPTH)).unwrap_err();
        assert!(e.to_string().contains("nested deeper than 100"), "{e}");
        assert!(e.path.contains("arguments"), "{e}");
        assert!(check_depth(&nested(MAX_VALUE_DEPTH), "x").is_ok());
        let e = check_depth(&nested(MAX_VALUE_DEPTH + 1), "x.y").unwrap_err();
        assert_eq!(e.path, "x.y");
    }
}
