//! Costs of recorded provider payloads (testdata/providers/) that carry
//! cache reads, cache writes and reasoning, against figures computed by
//! hand. Parlance's usage counts each token once (cached and cache-written
//! tokens are parts of `input_tokens`, reasoning is part of
//! `output_tokens`), so a cost that adds a cache read or a write on top of
//! the whole input, or reasoning on top of the output, would show here.

use std::path::PathBuf;

use parlance_format::{Message, Role, Usage};
use parlance_prices::{PriceTable, total_cost};
use parlance_providers::{anthropic, bedrock, openai_chat};
use serde_json::Value;

fn fixture(dir: &str, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/providers")
        .join(dir)
        .join(name)
}

fn read(path: &PathBuf) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn yaml(path: &PathBuf) -> Value {
    let y: serde_yaml::Value = serde_yaml::from_str(&read(path)).unwrap();
    serde_json::to_value(y).unwrap()
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-15, "{got} vs {want}");
}

/// Prices with no common factor between kinds, so that a token priced at
/// the wrong rate, or twice, changes the figure. Dollars per million.
fn test_table() -> PriceTable {
    PriceTable::from_json_str(
        r#"{"providers": [
          {"id": "anthropic", "models": [{"id": "claude-sonnet-4-5", "match": {"starts_with": "claude-sonnet-4-5"},
            "input": "3", "cache_read": "0.3", "cache_write": "3.75", "output": "15"}]},
          {"id": "aws", "models": [{"id": "sonnet", "match": {"contains": "anthropic.claude-sonnet-4-5"},
            "input": "3.3", "cache_read": "0.33", "cache_write": "4.125", "output": "16.5"}]},
          {"id": "deepseek", "models": [{"id": "deepseek-reasoner", "match": {"equals": "deepseek-reasoner"},
            "input": "0.56", "cache_read": "0.07", "output": "1.68"}]}
        ]}"#,
        "test table",
    )
    .unwrap()
}

#[test]
fn anthropic_cache_reads_and_writes_are_each_priced_once() {
    let doc = yaml(&fixture(
        "anthropic",
        "pydantic__test_anthropic_cache_real_api.yaml",
    ));
    let calls = doc["interactions"].as_array().unwrap();
    let table = test_table();
    let mut costs = Vec::new();
    for it in calls {
        let m = anthropic::decode_response(&it["response"]["parsed_body"]).unwrap();
        costs.push(table.message_cost(&m).expect("priced"));
    }
    // Call 1: input_tokens 3 (uncached), cache_read 1111, cache_creation 0, output 406.
    // Call 2: input_tokens 3, cache_read 1111, cache_creation 418, output 33.
    let first = (3.0 * 3.0 + 1111.0 * 0.3 + 406.0 * 15.0) / 1e6;
    let second = (3.0 * 3.0 + 1111.0 * 0.3 + 418.0 * 3.75 + 33.0 * 15.0) / 1e6;
    assert_eq!(costs.len(), 2);
    close(costs[0], first);
    close(costs[1], second);
    // Exactly (the table keeps prices as integers of 1e-15 dollars).
    assert_eq!(costs[0], 0.006_432_3);
    assert_eq!(costs[1], 0.002_404_8);
}

#[test]
fn bedrock_cache_write_then_read() {
    let doc = yaml(&fixture(
        "bedrock-converse",
        "pydantic__test_bedrock_cache_write_and_read.yaml",
    ));
    let table = test_table();
    let model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    let mut costs = Vec::new();
    for it in doc["interactions"].as_array().unwrap() {
        let m = bedrock::decode_response(&it["response"]["parsed_body"]).unwrap();
        let u = m.usage.unwrap();
        costs.push(table.cost("bedrock", model, &u).expect("priced"));
    }
    // Write: 2 uncached + 1322 written, 5 out. Read: 2 uncached + 1322 read, 5 out.
    close(costs[0], (2.0 * 3.3 + 1322.0 * 4.125 + 5.0 * 16.5) / 1e6);
    close(costs[1], (2.0 * 3.3 + 1322.0 * 0.33 + 5.0 * 16.5) / 1e6);
    assert_eq!(costs[0], 0.005_542_35);
    assert_eq!(costs[1], 0.000_525_36);
}

#[test]
fn deepseek_cached_input_and_reasoning_are_not_counted_twice() {
    let body: Value = serde_json::from_str(&read(&fixture(
        "openai-compatible",
        "deepseek__thinking-tool-call.json",
    )))
    .unwrap();
    let m = (openai_chat::DEEPSEEK.decode_response)(&body).unwrap();
    let u = m.usage.unwrap();
    // prompt 412 of which 384 cached; completion 57 of which 41 reasoning.
    assert_eq!(
        (
            u.input_tokens,
            u.cached_tokens,
            u.output_tokens,
            u.reasoning_tokens
        ),
        (412, 384, 57, Some(41))
    );
    let cost = test_table().message_cost(&m).expect("priced");
    close(cost, (28.0 * 0.56 + 384.0 * 0.07 + 57.0 * 1.68) / 1e6);
    assert_eq!(cost, 0.000_138_32);
}

#[test]
fn the_builtin_table_prices_the_recorded_anthropic_call() {
    let doc = yaml(&fixture(
        "anthropic",
        "pydantic__test_anthropic_cache_real_api.yaml",
    ));
    let m = anthropic::decode_response(&doc["interactions"][1]["response"]["parsed_body"]).unwrap();
    // genai-prices: claude-sonnet-4-5 $3 / $0.30 read / $3.75 write / $15 out.
    // (A refresh that changes these prices changes this figure.)
    assert_eq!(PriceTable::builtin().message_cost(&m), Some(0.002_404_8));
    let found = PriceTable::builtin()
        .find("anthropic", "claude-sonnet-4-5-20250929")
        .unwrap();
    assert_eq!(found.model, "claude-sonnet-4-5");
}

#[test]
fn a_run_total_is_the_sum_or_nothing() {
    let priced = |cost: Option<f64>| {
        let mut m = Message::assistant("x");
        m.usage = Some(Usage::default());
        m.cost = cost;
        m
    };
    let user = Message::new(Role::User, vec![]);
    assert_eq!(
        total_cost(&[user.clone(), priced(Some(0.25)), priced(Some(0.5))]),
        Some(0.75)
    );
    // One call of a model the table does not know: no total, not a low one.
    assert_eq!(total_cost(&[priced(Some(0.25)), priced(None)]), None);
    assert_eq!(total_cost(&[user]), None);
}
