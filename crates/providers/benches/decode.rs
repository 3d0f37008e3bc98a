//! Provider translation costs: decode throughput (MB/s) of a large
//! response, a run's decodes on the peerbench task (and the canonical
//! check's share of them), and the cost per SSE event of the stream
//! decoders, over the recorded fixtures in `testdata/providers/`.
//!
//! Run: `cargo bench -p parlance-providers --bench decode`

use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};
use parlance_providers::transport::{StreamDecoder, parse_sse};
use parlance_providers::{anthropic, openai_chat};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

/// A recorded payload from the repository's `testdata/providers/`.
fn fixture(path: &str) -> String {
    let p = format!(
        "{}/../../testdata/providers/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// A 1 MB Chat Completions answer: long text and forty tool calls.
fn large_openai_response() -> String {
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(20_000);
    let calls: Vec<Value> = (0..40)
        .map(|i| json!({"id": format!("call_{i}"), "type": "function", "function": {"name": "lookup", "arguments": json!({"id": i, "tags": ["a", "b", "c"], "note": "x".repeat(200)}).to_string()}}))
        .collect();
    json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": text, "tool_calls": calls}, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}})
    .to_string()
}

#[divan::bench]
fn openai_decode_large_response(b: Bencher) {
    let body = large_openai_response();
    b.counter(BytesCount::new(body.len())).bench(|| {
        let v: Value = serde_json::from_str(black_box(&body)).unwrap();
        openai_chat::decode_response(&v).unwrap()
    });
}

/// The two answers of the peerbench task (its mock's Chat Completions
/// shape): three `get_order` calls, then the summary.
fn peerbench_answers() -> [Value; 2] {
    let calls: Vec<Value> = (0..3)
        .map(|i| json!({"id": format!("call_1_{i}"), "type": "function",
            "function": {"name": "get_order", "arguments": json!({"order_id": format!("A-{}", 1001 + i)}).to_string()}}))
        .collect();
    let answer = |message: Value, finish: &str| {
        json!({"id": "chatcmpl-mock1", "object": "chat.completion", "created": 1_764_000_000,
            "model": "mock-model", "system_fingerprint": "fp_mock",
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 60, "total_tokens": 180}})
    };
    [
        answer(
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
            "tool_calls",
        ),
        answer(
            json!({"role": "assistant", "content": "Order summary: A-1001=shipped; A-1002=shipped; A-1003=shipped."}),
            "stop",
        ),
    ]
}

/// What a run's two decodes cost on the peerbench task, the canonical
/// check included (the figure that would have caught issue 35's
/// sequential regression: see `peerbench_check_*` for the check's share).
#[divan::bench]
fn peerbench_decode_run(b: Bencher) {
    let answers = peerbench_answers();
    b.bench(|| {
        for a in &answers {
            black_box(openai_chat::decode_response(black_box(a)).unwrap());
        }
    });
}

/// The check every decoded answer passes, in place (`Message::check`)...
#[divan::bench]
fn peerbench_check_in_place(b: Bencher) {
    let messages = peerbench_answers().map(|a| openai_chat::decode_response(&a).unwrap());
    b.bench(|| {
        for m in &messages {
            black_box(m).check().unwrap();
        }
    });
}

/// ...and the same verdict the way it was first made: written to JSON and
/// read back by the strict reader (what every run paid from `eafc958`).
#[divan::bench]
fn peerbench_check_by_round_trip(b: Bencher) {
    let messages = peerbench_answers().map(|a| openai_chat::decode_response(&a).unwrap());
    b.bench(|| {
        for m in &messages {
            let v = serde_json::to_value(black_box(m)).unwrap();
            black_box(parlance_format::Message::from_value(&v).unwrap());
        }
    });
}

#[divan::bench]
fn openai_stream_per_event(b: Bencher) {
    let lines: Vec<String> = fixture("openai-chat/vercel__openai-text.chunks.txt")
        .lines()
        .map(str::to_string)
        .collect();
    b.counter(ItemsCount::new(lines.len())).bench(|| {
        let mut d = openai_chat::stream::ChatStream::new();
        for l in &lines {
            black_box(d.event("", l).unwrap());
        }
        d.end().unwrap()
    });
}

#[divan::bench]
fn anthropic_stream_per_event(b: Bencher) {
    let doc: serde_yaml::Value = serde_yaml::from_str(&fixture(
        "anthropic/pydantic__test_anthropic_model_thinking_part_stream.yaml",
    ))
    .unwrap();
    let text = doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_string();
    let events = parse_sse(&text);
    b.counter(ItemsCount::new(events.len())).bench(|| {
        let mut d = anthropic::stream::AnthropicStream::new();
        for (name, data) in &events {
            black_box(d.event(name, data).unwrap());
        }
        d.end().unwrap()
    });
}

#[divan::bench]
fn sse_framing_per_event(b: Bencher) {
    let doc: serde_yaml::Value = serde_yaml::from_str(&fixture(
        "anthropic/pydantic__test_anthropic_model_thinking_part_stream.yaml",
    ))
    .unwrap();
    let text = doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_string();
    let n = parse_sse(&text).len();
    b.counter(ItemsCount::new(n))
        .bench(|| parse_sse(black_box(&text)));
}
