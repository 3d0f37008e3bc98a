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
}
