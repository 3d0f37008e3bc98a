//! The one-line message of every keyword, exactly; the 40-character cut;
//! names and values that would break a line or a path quoted and escaped.

use parlance_agent::ArgValidator;
use serde_json::{Value, json};

fn problems(schema: Value, args: Value) -> Vec<String> {
    ArgValidator::new("t", &schema).unwrap().problems(&args)
}

fn one(schema: Value, args: Value) -> String {
    let p = problems(schema, args);
    assert_eq!(p.len(), 1, "{p:?}");
    p[0].clone()
}

#[test]
fn every_keyword_has_its_line() {
    let cases: Vec<(Value, Value, &str)> = vec![
        (
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}], "additionalItems": false}),
            json!(["a", 1, 2]),
            "(arguments): must have at most 1 item, got 3",
        ),
        (
            json!({"prefixItems": [{"type": "string"}], "unevaluatedItems": false}),
            json!(["a", 1, 2]),
            "(arguments): has 2 items the schema does not allow",
        ),
        (
            json!({"type": "object", "unevaluatedProperties": false, "properties": {"a": {}}}),
            json!({"a": 1, "b": 2}),
            "b: unexpected property",
        ),
        (
            json!({"minProperties": 2}),
            json!({"a": 1}),
            "(arguments): must have at least 2 properties, got 1",
        ),
        (
            json!({"minProperties": 1}),
            json!({}),
            "(arguments): must have at least 1 property, got 0",
        ),
        (
            json!({"maxProperties": 1}),
            json!({"a": 1, "b": 2}),
            "(arguments): must have at most 1 property, got 2",
        ),
        (
            json!({"contains": {"type": "string"}}),
            json!([1, 2]),
            "(arguments): must contain at least one matching item",
        ),
        (
            json!({"oneOf": [{"type": "integer"}, {"minimum": 0}, {"type": "string"}]}),
            json!(5),
            "(arguments): must match exactly one of the 3 allowed shapes, but matches several: #0 and #1",
        ),
        (
            json!({"not": {"type": "string"}}),
            json!("x"),
            "(arguments): is not allowed here, got \"x\"",
        ),
        (
            json!({"properties": {"a": false}}),
            json!({"a": 1}),
            "a: is not allowed",
        ),
        (
            json!({"propertyNames": {"maxLength": 3}}),
            json!({"long-name": 1}),
            "(arguments): property name must be at most 3 characters long, got \"long-name\"",
        ),
        (
            json!({"properties": {"n": {"type": ["integer", "null"]}}}),
            json!({"n": "x"}),
            "n: must be an integer or null, got string \"x\"",
        ),
        (
            json!({"dependentRequired": {"a": ["b"]}}),
            json!({"a": 1}),
            "b: required property missing",
        ),
    ];
    for (schema, args, want) in cases {
        assert_eq!(one(schema.clone(), args.clone()), want, "{schema} / {args}");
    }
}

#[test]
fn values_are_cut_at_40_characters_and_stay_on_one_line() {
    let schema = json!({"properties": {"s": {"maxLength": 1}}});
    let forty = "y".repeat(40);
    assert_eq!(
        one(schema.clone(), json!({"s": forty})),
        format!("s: must be at most 1 character long, got \"{forty}\""),
        "40 characters are shown whole"
    );
    let forty_one = format!("{forty}z");
    assert_eq!(
        one(schema.clone(), json!({"s": forty_one})),
        format!("s: must be at most 1 character long, got \"{forty}…\""),
    );
    assert_eq!(
        one(schema, json!({"s": "two\nlines \"quoted\""})),
        "s: must be at most 1 character long, got \"two\\nlines \\\"quoted\\\"\""
    );
}

#[test]
fn awkward_property_names_are_quoted() {
    let schema = json!({"type": "object", "additionalProperties": false, "properties": {
        "a.b": {"type": "string"}, "": {"type": "string"}, "x[0]": {"type": "object", "properties": {"in\nner": {"type": "string"}}}}});
    for (args, want) in [
        (
            json!({"a.b": 1}),
            "[\"a.b\"]: must be a string, got integer 1",
        ),
        (json!({"": 1}), "[\"\"]: must be a string, got integer 1"),
        (
            json!({"x[0]": {"in\nner": 2}}),
            "[\"x[0]\"][\"in\\nner\"]: must be a string, got integer 2",
        ),
        (
            json!({"new\nline": 1}),
            "[\"new\\nline\"]: unexpected property",
        ),
    ] {
        let p = problems(schema.clone(), args.clone());
        assert_eq!(p, [want], "{args}");
        assert!(p.iter().all(|l| !l.contains('\n')));
    }
    let long = "k".repeat(60);
    let p = problems(schema, json!({long.clone(): 1}));
    assert_eq!(
        p,
        [format!("[\"{}…\"]: unexpected property", "k".repeat(40))]
    );
}

#[test]
fn names_with_spaces_and_names_of_exactly_40_characters() {
    let schema = json!({"type": "object", "properties": {"x": {}}, "additionalProperties": false});
    assert_eq!(
        problems(schema.clone(), json!({"has space": 1})),
        ["[\"has space\"]: unexpected property"]
    );
    let forty = format!("{}.b", "a".repeat(38));
    assert_eq!(
        problems(schema, json!({forty.clone(): 1})),
        [format!("[\"{forty}\"]: unexpected property")],
        "a quoted name of 40 characters is shown whole"
    );
}

#[test]
fn the_fast_check_and_the_debug_form() {
    let v = ArgValidator::new("t", &json!({"type": "integer"})).unwrap();
    assert!(v.is_valid(&json!(3)));
    assert!(!v.is_valid(&json!("3")));
    assert_eq!(format!("{v:?}"), "ArgValidator");
}

#[test]
fn numbers_are_named_by_their_kind() {
    assert_eq!(
        one(json!({"type": "string"}), json!(u64::MAX)),
        "(arguments): must be a string, got integer 18446744073709551615"
    );
    assert_eq!(
        one(json!({"type": "string"}), json!(-1.5)),
        "(arguments): must be a string, got number -1.5"
    );
}

#[test]
fn choices_null_and_ties() {
    assert_eq!(
        one(json!({"type": "string"}), Value::Null),
        "(arguments): must be a string, got null"
    );
    assert_eq!(
        one(
            json!({"oneOf": [{"type": "integer"}, {"minimum": 0}, {"maximum": 9}]}),
            json!(5)
        ),
        "(arguments): must match exactly one of the 3 allowed shapes, but matches several: #0, #1 and #2"
    );
    // The closest branch has more than 3 problems: one general line.
    let four = json!({"type": "object", "required": ["a", "b", "c", "d"]});
    let five = json!({"type": "object", "required": ["a", "b", "c", "d", "e"]});
    assert_eq!(
        one(json!({"anyOf": [four, five]}), json!({})),
        "(arguments): must match one of the allowed shapes, got an object"
    );
}
