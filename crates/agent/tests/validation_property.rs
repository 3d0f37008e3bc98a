//! Property: over 100,000 generated argument objects against a non-trivial
//! schema, none that violates it reaches the tool function, and none that
//! satisfies it is refused. The oracle is written by hand from the schema,
//! independently of the validator.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parlance_agent::{CallSettings, Tool, ToolBox, ToolContext, ToolError};
use parlance_format::{ToolCall, ToolStatus};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["order_id", "amount", "items"],
        "properties": {
            "order_id": {"type": "string", "pattern": "^[A-Z]-[0-9]{4}$"},
            "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 500},
            "currency": {"enum": ["EUR", "USD"]},
            "items": {
                "type": "array", "minItems": 1, "maxItems": 3,
                "items": {
                    "type": "object", "additionalProperties": false, "required": ["sku", "qty"],
                    "properties": {
                        "sku": {"type": "string", "minLength": 3, "maxLength": 8},
                        "qty": {"type": "integer", "minimum": 1, "maximum": 10}
                    }
                }
            },
            "note": {"type": ["string", "null"], "maxLength": 10}
        }
    })
}

/// The schema above, by hand.
fn oracle(v: &Value) -> bool {
    let Some(o) = v.as_object() else { return false };
    let known = ["order_id", "amount", "currency", "items", "note"];
    if o.keys().any(|k| !known.contains(&k.as_str())) {
        return false;
    }
    let order_ok = o.get("order_id").and_then(Value::as_str).is_some_and(|s| {
        let b = s.as_bytes();
        b.len() == 6
            && b[0].is_ascii_uppercase()
            && b[1] == b'-'
            && b[2..].iter().all(u8::is_ascii_digit)
    });
    let amount_ok = o
        .get("amount")
        .and_then(Value::as_f64)
        .is_some_and(|a| a > 0.0 && a <= 500.0);
    let currency_ok = o.get("currency").is_none_or(|c| c == "EUR" || c == "USD");
    let items_ok = o
        .get("items")
        .and_then(Value::as_array)
        .is_some_and(|items| {
            (1..=3).contains(&items.len())
                && items.iter().all(|it| {
                    let Some(it) = it.as_object() else {
                        return false;
                    };
                    it.keys().all(|k| k == "sku" || k == "qty")
                        && it
                            .get("sku")
                            .and_then(Value::as_str)
                            .is_some_and(|s| (3..=8).contains(&s.chars().count()))
                        && it.get("qty").is_some_and(|q| {
                            // JSON Schema's integer: any number with no fraction.
                            q.as_f64()
                                .is_some_and(|f| f.fract() == 0.0 && (1.0..=10.0).contains(&f))
                        })
                })
        });
    let note_ok = o
        .get("note")
        .is_none_or(|n| n.is_null() || n.as_str().is_some_and(|s| s.chars().count() <= 10));
    order_ok && amount_ok && currency_ok && items_ok && note_ok
}

/// A field that is usually right and sometimes wrong or missing.
fn field(good: BoxedStrategy<Value>, bad: BoxedStrategy<Value>) -> BoxedStrategy<Option<Value>> {
    prop_oneof![
        24 => good.prop_map(Some),
        1 => bad.prop_map(Some),
        1 => Just(None),
    ]
    .boxed()
}

fn item() -> BoxedStrategy<Value> {
    let sku = field(
        "[a-z]{3,8}".prop_map(Value::from).boxed(),
        prop_oneof![
            Just(json!("ab")),
            Just(json!("abcdefghi")),
            Just(json!(5)),
            Just(json!("ÿÿÿ"))
        ]
        .boxed(),
    );
    let qty = field(
        (1i64..=10).prop_map(Value::from).boxed(),
        prop_oneof![
            Just(json!(0)),
            Just(json!(11)),
            Just(json!(2.5)),
            Just(json!("3")),
            Just(json!(3.0))
        ]
        .boxed(),
    );
    (sku, qty, prop::bool::weighted(0.02))
        .prop_map(|(sku, qty, extra)| {
            let mut m = Map::new();
            if let Some(s) = sku {
                m.insert("sku".into(), s);
            }
            if let Some(q) = qty {
                m.insert("qty".into(), q);
            }
            if extra {
                m.insert("price".into(), json!(1));
            }
            Value::Object(m)
        })
        .boxed()
}

fn args() -> impl Strategy<Value = Value> {
    let order_id = field(
        "[A-Z]-[0-9]{4}".prop_map(Value::from).boxed(),
        prop_oneof![
            Just(json!("a-1234")),
            Just(json!("A-123")),
            Just(json!("AB-1234")),
            Just(json!("")),
            Just(json!(1234)),
            Just(Value::Null),
            "[A-Za-z0-9-]{0,8}".prop_map(Value::from),
        ]
        .boxed(),
    );
    let amount = field(
        prop_oneof![
            (1u32..=500).prop_map(Value::from),
            (0.001f64..500.0).prop_map(Value::from),
            Just(json!(500))
        ]
        .boxed(),
        prop_oneof![
            Just(json!(0)),
            Just(json!(-1)),
            Just(json!(500.5)),
            Just(json!(501)),
            Just(json!("10")),
            Just(json!(-1e-9)),
        ]
        .boxed(),
    );
    let currency = prop_oneof![
        3 => Just(None),
        2 => Just(Some(json!("EUR"))),
        1 => Just(Some(json!("USD"))),
        1 => Just(Some(json!("GBP"))),
    ];
    let items = field(
        prop::collection::vec(item(), 1..=3)
            .prop_map(Value::from)
            .boxed(),
        prop_oneof![
            Just(json!([])),
            prop::collection::vec(item(), 4..=5).prop_map(Value::from),
            Just(json!({"sku": "abc", "qty": 1})),
        ]
        .boxed(),
    );
    let note = prop_oneof![
        4 => Just(None),
        1 => Just(Some(Value::Null)),
        2 => "[a-z ]{0,10}".prop_map(|s| Some(Value::from(s))),
        1 => "[a-z ]{11,14}".prop_map(|s| Some(Value::from(s))),
    ];
    let top = prop_oneof![
        40 => Just(None),
        1 => Just(Some(json!([1, 2]))),
        1 => Just(Some(json!("order"))),
    ];
    (
        order_id,
        amount,
        currency,
        items,
        note,
        prop::bool::weighted(0.03),
        top,
    )
        .prop_map(|(order_id, amount, currency, items, note, extra, top)| {
            if let Some(t) = top {
                return t;
            }
            let mut m = Map::new();
            for (k, v) in [
                ("order_id", order_id),
                ("amount", amount),
                ("currency", currency),
                ("items", items),
                ("note", note),
            ] {
                if let Some(v) = v {
                    m.insert(k.into(), v);
                }
            }
            if extra {
                m.insert("coupon".into(), json!("X"));
            }
            Value::Object(m)
        })
}

#[test]
fn no_invalid_arguments_reach_the_function_and_no_valid_ones_are_refused() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let reached = Arc::new(AtomicU64::new(0));
    let violations = Arc::new(AtomicU64::new(0));
    let (r, v) = (reached.clone(), violations.clone());
    let mut tb = ToolBox::new();
    tb.add(
        Tool::new(
            "pay",
            "Pay for items.",
            move |args: Value, _ctx: ToolContext| {
                r.fetch_add(1, Ordering::Relaxed);
                if !oracle(&args) {
                    v.fetch_add(1, Ordering::Relaxed);
                }
                async { Ok::<_, ToolError>("paid") }
            },
        )
        .with_schema(schema()),
    )
    .unwrap();
    let settings = CallSettings::default();
    let (valid, invalid) = (AtomicU64::new(0), AtomicU64::new(0));

    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 100_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(&args(), |a| {
            let call = ToolCall::new("c", "pay", a);
            let report = runtime.block_on(tb.run_call(0, &call, &call.arguments, &settings, None));
            let expected_valid = oracle(&call.arguments);
            if expected_valid {
                valid.fetch_add(1, Ordering::Relaxed);
                prop_assert_eq!(
                    report.result.status,
                    ToolStatus::Ok,
                    "refused valid arguments {}",
                    call.arguments
                );
            } else {
                invalid.fetch_add(1, Ordering::Relaxed);
                prop_assert_eq!(
                    report.result.status,
                    ToolStatus::InvalidArguments,
                    "accepted invalid arguments {}",
                    call.arguments
                );
            }
            Ok(())
        })
        .unwrap();
    let (valid, invalid) = (valid.into_inner(), invalid.into_inner());
    assert_eq!(valid + invalid, 100_000);
    assert_eq!(
        violations.load(Ordering::Relaxed),
        0,
        "invalid arguments reached the function"
    );
    assert_eq!(
        reached.load(Ordering::Relaxed),
        valid,
        "every valid call reached the function"
    );
    // Both sides are well represented.
    assert!(
        valid > 10_000 && invalid > 10_000,
        "valid {valid}, invalid {invalid}"
    );
}
