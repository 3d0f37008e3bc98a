//! A schema whose `$defs` form a DAG of `anyOf` pairs unfolds into 2^depth
//! alternatives: describing its problems must stay bounded (before, depth
//! 18 took seconds and each level doubled it), and problems elsewhere are
//! still named.

use parlance_agent::ArgValidator;
use serde_json::{Value, json};

fn dag(depth: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..depth {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"anyOf": [{"$ref": next}, {"allOf": [{"$ref": next}], "minimum": 0}]}),
        );
    }
    defs.insert(format!("d{depth}"), json!({"type": "string"}));
    json!({"$defs": defs, "type": "object", "properties": {
        "dag": {"$ref": "#/$defs/d0"},
        "n": {"type": "integer"},
        "pick": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    }})
}

#[test]
fn an_anyof_dag_is_described_in_bounded_work() {
    let v = ArgValidator::new("t", &dag(16)).unwrap();
    assert_eq!(
        v.problems(&json!({"dag": 5})),
        [
            "(arguments): does not match any of the allowed shapes (the schema's anyOf/oneOf alternatives are too many to say which)"
        ]
    );
    assert_eq!(
        v.problems(&json!({"dag": 5, "n": "x"})),
        ["n: must be an integer, got string \"x\""]
    );
    assert!(v.problems(&json!({"dag": "ok", "n": 1})).is_empty());
    // A small choice next to a pruned one is still described.
    assert_eq!(
        v.problems(&json!({"dag": 5, "pick": true})),
        ["pick: must be a string, got boolean true"]
    );
    // Deeper, even checking would take minutes: the schema is refused.
    let e = ArgValidator::new("deep", &dag(30)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid input schema for tool \"deep\": it unfolds into more than 1000000 subschemas (anyOf/oneOf alternatives through $ref): too costly to check arguments against"
    );
    // A small one is still described in full.
    let small = ArgValidator::new("t", &dag(3)).unwrap();
    assert_eq!(
        small.problems(&json!({"dag": 5})),
        ["dag: must be a string, got integer 5"]
    );
}

/// The same DAG through `items` (a subschema, not a list): still bounded.
#[test]
fn an_anyof_dag_through_items_is_bounded_too() {
    let depth = 16;
    let mut defs = serde_json::Map::new();
    for i in 0..depth {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"anyOf": [{"items": {"$ref": next}}, {"items": {"$ref": next}, "minItems": 1}]}),
        );
    }
    defs.insert(format!("d{depth}"), json!({"type": "string"}));
    let v = ArgValidator::new("t", &json!({"$defs": defs, "$ref": "#/$defs/d0"})).unwrap();
    let mut args = json!(5);
    for _ in 0..depth {
        args = json!([args]);
    }
    assert_eq!(
        v.problems(&args),
        [
            "(arguments): does not match any of the allowed shapes (the schema's anyOf/oneOf alternatives are too many to say which)"
        ]
    );
}
