//! Tool engine costs: argument validation per call, and the engine's
//! dispatch overhead per tool call (validation + context + timeout +
//! result), against a tool that does nothing.
//!
//! Run: `cargo bench -p parlance-agent --bench tools`

use divan::{Bencher, black_box};
use parlance_agent::{ArgValidator, CallSettings, Tool, ToolBox, ToolContext, ToolError};
use parlance_format::ToolCall;
use serde::Deserialize;
use serde_json::{Value, json};

fn main() {
    divan::main();
}

fn schema() -> Value {
    json!({
        "type": "object", "additionalProperties": false, "required": ["order_id", "amount"],
        "properties": {
            "order_id": {"type": "string", "pattern": "^[A-Z]-[0-9]{4}$"},
            "amount": {"type": "number", "exclusiveMinimum": 0, "maximum": 500},
            "currency": {"enum": ["EUR", "USD"]}
        }
    })
}

#[divan::bench]
fn validate_valid_arguments(b: Bencher) {
    let v = ArgValidator::new("pay", &schema()).unwrap();
    let args = json!({"order_id": "A-1001", "amount": 20, "currency": "EUR"});
    b.bench(|| black_box(v.problems(black_box(&args))));
}

#[divan::bench]
fn validate_invalid_arguments_with_messages(b: Bencher) {
    let v = ArgValidator::new("pay", &schema()).unwrap();
    let args = json!({"order_id": "A-1001", "amount": 900, "currency": "GBP"});
    b.bench(|| black_box(v.problems(black_box(&args))));
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Pay {
    #[allow(dead_code)]
    order_id: String,
}

fn toolbox() -> ToolBox {
    let mut tb = ToolBox::new();
    tb.add(
        Tool::new("pay", "Pay.", |_: Pay, _ctx: ToolContext| async {
            Ok::<_, ToolError>("ok")
        })
        .with_schema(schema()),
    )
    .unwrap();
    tb.add(
        Tool::blocking("pay_sync", "Pay.", |_: Pay, _ctx: ToolContext| {
            Ok::<_, ToolError>("ok")
        })
        .with_schema(schema()),
    )
    .unwrap();
    tb
}

#[divan::bench]
fn dispatch_one_async_call(b: Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tb = toolbox();
    let call = ToolCall::new("c1", "pay", json!({"order_id": "A-1001", "amount": 20}));
    let s = CallSettings::default();
    b.bench(|| rt.block_on(tb.run_call(0, &call, &call.arguments, &s, None)));
}

#[divan::bench]
fn dispatch_one_blocking_call(b: Bencher) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let tb = toolbox();
    let call = ToolCall::new(
        "c1",
        "pay_sync",
        json!({"order_id": "A-1001", "amount": 20}),
    );
    let s = CallSettings::default();
    b.bench(|| rt.block_on(tb.run_call(0, &call, &call.arguments, &s, None)));
}

#[divan::bench]
fn dispatch_three_parallel_async_calls(b: Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tb = toolbox();
    let calls: Vec<ToolCall> = (0..3)
        .map(|i| {
            ToolCall::new(
                format!("c{i}"),
                "pay",
                json!({"order_id": "A-1001", "amount": 20}),
            )
        })
        .collect();
    let pairs: Vec<(&ToolCall, &Value)> = calls.iter().map(|c| (c, &c.arguments)).collect();
    let s = CallSettings::default();
    b.bench(|| rt.block_on(tb.run_calls(&pairs, &s, None)));
}
