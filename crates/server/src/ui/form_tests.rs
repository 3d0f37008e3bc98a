//! The edit form's tests: fields from schemas, values read back, the
//! engine's messages placed at their fields.

use super::*;
use serde_json::json;

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn posted_fields_become_arguments() {
    let (args, errors) = assemble(
        &pairs(&[
            ("call.0.f.s!./order_id", "A-1"),
            ("call.0.f.n!./amount", "250"),
            ("call.0.f.n./cents", ""),
            ("call.0.f.s./note", ""),
            ("call.0.f.b./notify", "true"),
            ("call.0.f.e./currency", "\"EUR\""),
            ("call.0.f.o!./to", ""),
            ("call.0.f.s!./to/iban", "DE00"),
            ("call.0.f.s!./to/a~1b", "slash"),
            ("call.0.f.j./tags", "[\"a\"]"),
            ("call.0.f.x.", "{\"extra\": 1}"),
            ("call.1.f.s!./order_id", "other call"),
        ]),
        0,
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        args,
        json!({"order_id": "A-1", "amount": 250, "notify": true, "currency": "EUR",
               "to": {"iban": "DE00", "a/b": "slash"}, "tags": ["a"], "extra": 1})
    );
}

#[test]
fn what_cannot_be_read_is_named_at_its_field() {
    let (args, errors) = assemble(
        &pairs(&[
            ("call.0.f.n!./amount", "nine hundred"),
            ("call.0.f.j./tags", "[oops"),
            ("call.0.f.zz./x", "1"),
            ("call.0.f.s!.no-slash", "1"),
        ]),
        0,
    );
    // Not a number: sent as text, for the engine to name.
    assert_eq!(args, json!({"amount": "nine hundred"}));
    assert!(
        errors["/tags"][0].starts_with("not valid JSON"),
        "{errors:?}"
    );
    assert_eq!(errors[""].len(), 2, "{errors:?}");
}

#[test]
fn messages_go_to_the_field_they_name() {
    let args = json!({"amount": 900, "to": {"iban": "x"}, "items": [1], "a.b": 1});
    let ptrs: Vec<String> = ["/amount", "/to", "/to/iban", "/items", "/a.b"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let lines: Vec<String> = [
        "amount: must be at most 500, got 900",
        "to.iban: must match ^DE, got \"x\"",
        "to: unexpected key \"k\"",
        "items[0]: must be a string, got 1",
        "[\"a.b\"]: must be a string, got 1",
        "(arguments): missing",
        "amountx: no such field",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let placed = place(&lines, &ptrs, &args);
    assert_eq!(placed["/amount"], vec![lines[0].clone()]);
    assert_eq!(placed["/to/iban"], vec![lines[1].clone()]);
    assert_eq!(placed["/to"], vec![lines[2].clone()]);
    assert_eq!(placed["/items"], vec![lines[3].clone()]);
    assert_eq!(placed["/a.b"], vec![lines[4].clone()]);
    assert_eq!(placed[""], vec![lines[5].clone(), lines[6].clone()]);
}

#[test]
fn the_form_follows_the_schema_and_escapes_values() {
    let schema = json!({
        "type": "object", "required": ["amount"],
        "properties": {
            "amount": {"type": "integer", "maximum": 500, "description": "EUR"},
            "reason": {"type": ["string", "null"]},
            "kind": {"enum": ["full", "partial"]},
            "to": {"$ref": "#/$defs/Account"},
            "lines": {"type": "array", "items": {"type": "string"}}
        },
        "$defs": {"Account": {"type": "object", "properties": {"iban": {"type": "string"}}}}
    });
    let args = json!({"amount": 900, "reason": "<script>x</script>", "kind": "full", "to": {"iban": "DE"}, "lines": ["a"], "more": true});
    let html = render(0, &schema, &args, &Prefill::default(), &Errors::new())
        .unwrap()
        .into_string();
    for name in [
        "call.0.f.n!./amount",
        "call.0.f.s./reason",
        "call.0.f.e./kind",
        "call.0.f.o./to",
        "call.0.f.s./to/iban",
        "call.0.f.j./lines",
        "call.0.f.x.",
    ] {
        assert!(html.contains(&format!("name=\"{name}\"")), "{name}: {html}");
    }
    assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"), "{html}");
    assert!(!html.contains("<script>"), "{html}");
    assert!(
        render(
            0,
            &json!({"type": "array"}),
            &json!([]),
            &Prefill::default(),
            &Errors::new()
        )
        .is_none()
    );
}

mod depth {
    //! Random pointers and depths: the parser never builds a value deeper
    //! than the format's limit, never fails on one within it, and never
    //! overflows its stack (a post can name a million levels).
    use super::*;
    use parlance_format::{MAX_VALUE_DEPTH, within_depth};
    use proptest::prelude::*;

    fn nested(levels: usize) -> Value {
        let mut v = json!("leaf");
        for i in 0..levels {
            v = if i % 2 == 0 {
                json!([v])
            } else {
                json!({"k": v})
            };
        }
        v
    }

    fn segment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("a".to_string()),
            Just(String::new()),
            Just("~0".to_string()),
            Just("~1".to_string()),
            "[a-z0-9]{1,3}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn assembled_arguments_stay_within_the_limit(
            levels in prop_oneof![0usize..130, 130usize..20_000],
            seg in segment(),
            kind in prop::sample::select(vec!["s", "s!", "n", "b", "e", "j", "x", "o", "o!"]),
            value_depth in 0usize..120,
        ) {
            let ptr: String = (0..levels).map(|_| format!("/{seg}")).collect();
            let value = match kind {
                "j" | "e" => nested(value_depth).to_string(),
                "x" => json!({"extra": nested(value_depth)}).to_string(),
                _ => "1".to_string(),
            };
            let pairs = vec![(format!("call.0.f.{kind}.{ptr}"), value)];
            let (args, errors) = assemble(&pairs, 0);
            prop_assert!(within_depth(&args, MAX_VALUE_DEPTH) || !errors.is_empty());
            if errors.is_empty() {
                prop_assert!(within_depth(&args, MAX_VALUE_DEPTH));
            }
            if levels > MAX_VALUE_DEPTH {
                prop_assert!(
                    errors[""].iter().any(|e| e.contains("nested deeper than 100 levels")),
                    "{errors:?}"
                );
            }
            let depth = levels + match kind { "j" | "e" => value_depth, "x" => value_depth + 1, _ => 0 };
            if (1..=MAX_VALUE_DEPTH).contains(&levels) && depth <= MAX_VALUE_DEPTH && matches!(kind, "s" | "j") {
                prop_assert!(errors.is_empty(), "{errors:?}");
                prop_assert!(args.pointer(&ptr).is_some());
            }
        }
    }
}
