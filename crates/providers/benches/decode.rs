//! Provider translation costs: decode throughput (MB/s) of a large
//! response, and the cost per SSE event of the stream decoders, over the
//! recorded fixtures in `testdata/providers/`.
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
