//! One depth limit for reading and writing (issue 15, item 13): whatever
//! the reader accepts, written in canonical form, reads back; deeper input
//! is refused with the path of the value, never a panic.

use parlance_format::{MAX_VALUE_DEPTH, Message, to_json};
use serde_json::{Value, json};

fn nested(levels: usize) -> Value {
    let mut v = json!("leaf");
    for _ in 0..levels {
        v = json!({"a": v});
    }
    v
}

fn flat_call(args: Value) -> Value {
    json!({"role": "assistant", "content": [
        {"type": "text", "text": "x"},
        {"type": "tool_call", "id": "c", "name": "f", "args": args}]})
}

#[test]
fn the_deepest_accepted_value_writes_and_reads_back() {
    // The legacy flat shape gains a level in canonical form.
    let m = Message::from_value(&flat_call(nested(MAX_VALUE_DEPTH))).unwrap();
    let written = to_json(&m);
    let again = Message::from_json_str(&written).unwrap();
    assert_eq!(again, m);
    // Wrapped once more (as `parlance validate --json --canonical` does), still readable.
    let wrapped = format!("{{\"canonical\": {written}}}");
    serde_json::from_str::<Value>(&wrapped).unwrap();
}

#[test]
fn a_value_one_level_deeper_is_refused_with_its_path() {
    let e = Message::from_value(&flat_call(nested(MAX_VALUE_DEPTH + 1))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "content[1].args: nested deeper than 100 levels of arrays and objects (the format's limit)"
    );
    // The case: 123 levels in the flat shape.
    let e = Message::from_value(&flat_call(nested(123))).unwrap_err();
    assert_eq!(e.path, "content[1].args");
    for (doc, path) in [
        (
            json!({"role": "assistant", "content": [{"type": "json", "json": nested(101)}]}),
            "content[0].json",
        ),
        (
            json!({"role": "user", "content": [], "metadata": {"m": nested(100)}}),
            "metadata",
        ),
        (
            json!({"role": "tool", "content": [{"type": "tool_result", "tool_result": {"tool_call_id": "c", "content": [], "artifact": nested(101)}}]}),
            "content[0].tool_result.artifact",
        ),
    ] {
        let e = Message::from_value(&doc).unwrap_err();
        assert_eq!(e.path, path, "{e}");
    }
}
