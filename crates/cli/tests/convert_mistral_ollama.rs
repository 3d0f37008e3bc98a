//! `parlance convert` with the Mistral and Ollama wire formats, driven as a
//! user would: their recorded and documented payloads, an NDJSON stream
//! on stdin, and a request read in one and written for the other.

mod common;

use std::path::PathBuf;

use common::run::parlance;
use serde_json::{Value, json};

fn ok(args: &[&str], stdin: &str) -> (Value, String) {
    let (code, out, err) = parlance(args, stdin);
    assert_eq!(code, 0, "parlance {args:?} failed: {err}");
    let v = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("parlance {args:?} printed no JSON ({e}): {out}"));
    (v, err)
}

fn fixture(dir: &str, name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/providers")
        .join(dir)
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn mistral_answers_and_streams_convert_to_canonical() {
    let (m, _) = ok(
        &["convert", "--from", "mistral", "--kind", "response"],
        &fixture("mistral", "vercel__mistral-reasoning.json"),
    );
    assert_eq!(m["content"][0]["type"], "thinking");
    assert_eq!(m["provider"], "mistral");
    let (s, _) = ok(
        &["convert", "--from", "mistral", "--kind", "stream"],
        &fixture("mistral", "vercel__mistral-tool-call.chunks.txt"),
    );
    assert_eq!(s["content"][0]["tool_call"]["id"], "gSIMJiOkT");
    assert_eq!(s["finish_reason"], "tool_calls");
}

#[test]
fn an_ollama_ndjson_stream_and_documented_request_convert() {
    let (s, _) = ok(
        &["convert", "--from", "ollama", "--kind", "stream"],
        &fixture(
            "ollama",
            "ollamadocs__chat-request-streaming-with-tools__stream.ndjson",
        ),
    );
    assert_eq!(
        s["content"][0]["tool_call"]["arguments"],
        json!({"city": "Tokyo"})
    );
    assert_eq!(s["usage"]["input_tokens"], 169);

    let body = fixture(
        "ollama",
        "ollamadocs__chat-request-with-history-with-tools__request.json",
    );
    let (canonical, _) = ok(&["convert", "--from", "ollama", "--to", "canonical"], &body);
    let (back, _) = ok(
        &["convert", "--from", "canonical", "--to", "ollama"],
        &canonical.to_string(),
    );
    let original: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(back["messages"], original["messages"]);
    assert_eq!(back["tools"], original["tools"]);
}

#[test]
fn an_ollama_request_written_for_mistral_maps_ids_and_warns() {
    let body = json!({
        "model": "qwen3",
        "messages": [
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": "", "thinking": "Look it up.",
             "tool_calls": [{"id": "call_ollama_1", "function": {"name": "w", "arguments": {"city": "Oslo"}}}]},
            {"role": "tool", "content": "2 °C", "tool_name": "w", "tool_call_id": "call_ollama_1"}
        ],
        "options": {"num_predict": 64, "num_ctx": 8192}
    });
    let (m, err) = ok(
        &[
            "convert",
            "--from",
            "ollama",
            "--to",
            "mistral",
            "--model",
            "mistral-small-latest",
        ],
        &body.to_string(),
    );
    let id = m["messages"][1]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(id.len(), 9);
    assert!(id.chars().all(|c| c.is_ascii_alphanumeric()));
    assert_eq!(m["messages"][2]["tool_call_id"], json!(id));
    assert_eq!(m["max_tokens"], 64);
    assert!(m.get("options").is_none(), "Ollama's options stay Ollama's");
    assert!(err.contains("thinking from ollama dropped"), "{err}");
}

#[test]
fn help_and_errors_name_the_new_formats() {
    let (code, out, _) = parlance(&["convert", "--help"], "");
    assert_eq!(code, 0);
    assert!(out.contains("mistral") && out.contains("ollama"), "{out}");
    let (code, _, err) = parlance(
        &["convert", "--from", "ollama", "--to", "canonical"],
        "{\"messages\": {}}",
    );
    assert_eq!(code, 1);
    assert!(err.contains("messages: expected an array"), "{err}");
}
