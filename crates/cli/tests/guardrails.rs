//! Guardrails of a TOML agent through `parlance serve`: what the client
//! receives (down to the SSE bytes), what the provider is sent, what the
//! store keeps, and the errors of bad settings.

mod common;

use std::process::{Command, Stdio};

use common::replay::{ReplayServer, Reply, sse_frames};
use common::*;
use serde_json::{Value, json};

fn with_agent(
    dir: &std::path::Path,
    provider: &str,
    tokens: &str,
    agent: &str,
) -> std::path::PathBuf {
    config_with(
        dir,
        provider,
        "http://127.0.0.1:9",
        tokens,
        &Extra {
            agent,
            ..Extra::default()
        },
    )
}

/// An OpenAI Chat stream that writes `words` one chunk each.
fn streamed(words: &[&str]) -> Reply {
    let mut frames: Vec<(&str, String)> = words
        .iter()
        .map(|w| {
            (
                "",
                json!({"id": "c1", "object": "chat.completion.chunk", "model": "gpt-test",
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": w}}]})
                .to_string(),
            )
        })
        .collect();
    frames.push((
        "",
        json!({"id": "c1", "object": "chat.completion.chunk", "model": "gpt-test",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        .to_string(),
    ));
    frames.push(("", "[DONE]".to_string()));
    Reply::Sse {
        chunks: sse_frames(&frames),
        cut: false,
    }
}

const BLOCK_SECRETS: &str = r#"
[[agents.support.guardrails]]
kind = "block"
name = "no_passwords"
at = ["output"]
pattern = "hunter2"
message = "I can't share that."
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_answer_the_output_guardrail_blocks_never_reaches_the_client() {
    let provider =
        ReplayServer::start(vec![streamed(&["Sure. ", "The password ", "is hunter2."])]).await;
    let dir = temp_dir();
    let server = start(&with_agent(&dir, &provider.url, "", BLOCK_SECRETS));
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let id = t["id"].as_str().unwrap();
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/runs", server.url))
        .header("content-type", "application/json")
        .body(
            json!({"agent": "support", "input": "password?", "thread_id": id, "stream": true})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    let bytes = resp.bytes().await.unwrap();
    let body = String::from_utf8(bytes.to_vec()).unwrap();
    assert!(
        !body.contains("hunter2"),
        "the blocked text went out: {body}"
    );
    assert!(
        !body.contains("The password"),
        "no part of it either: {body}"
    );
    let events = parlance_providers::transport::parse_sse(&body);
    let text: String = events
        .iter()
        .filter(|(e, _)| e == "text_delta")
        .map(|(_, d)| {
            serde_json::from_str::<Value>(d).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(text, "I can't share that.");
    let (last, done) = events.last().unwrap();
    assert_eq!(last, "run_completed");
    let done: Value = serde_json::from_str(done).unwrap();
    assert_eq!(done["status"], "failed");
    assert_eq!(done["error"]["code"], "blocked");
    assert_eq!(done["error"]["message"], "I can't share that.");

    // The store keeps the answer that stands for it, with the record.
    let (_, thread) = get(&server.url, &format!("/v1/threads/{id}"), None).await;
    let thread_text = thread.to_string();
    assert!(!thread_text.contains("hunter2"), "{thread_text}");
    let last = thread["messages"].as_array().unwrap().last().unwrap()["message"].clone();
    assert_eq!(last["content"][0]["text"], "I can't share that.");
    assert_eq!(
        last["metadata"]["guardrails"],
        json!([{"name": "no_passwords", "point": "output", "outcome": "block", "reason": "matched its pattern"}])
    );
    assert_eq!(thread["runs"][0]["status"], "failed");

    // Allowed text streams (checked as a whole first).
    let provider2 = ReplayServer::start(vec![streamed(&["All ", "good."])]).await;
    let dir2 = temp_dir();
    let server2 = start(&with_agent(&dir2, &provider2.url, "", BLOCK_SECRETS));
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/runs", server2.url))
        .header("content-type", "application/json")
        .body(json!({"agent": "support", "input": "hi", "stream": true}).to_string())
        .send()
        .await
        .unwrap();
    let body = resp.text().await.unwrap();
    let events = parlance_providers::transport::parse_sse(&body);
    let deltas: Vec<String> = events
        .iter()
        .filter(|(e, _)| e == "text_delta")
        .map(|(_, d)| d.clone())
        .collect();
    assert_eq!(deltas.len(), 1, "held, then sent as one: {deltas:?}");
    assert!(deltas[0].contains("All good."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_and_tool_call_guardrails_redact_and_block_through_the_api() {
    let provider = ReplayServer::start(vec![
        // Run 1: the input is redacted before the model reads it.
        chat(text("Noted.")),
        // Run 2: a call whose arguments hold a card number runs redacted.
        chat(call(
            "call_1",
            "lookup_order",
            json!({"id": "A-17", "note": "card 4111-1111-1111-1111"}),
        )),
        chat(text("Done.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::json(
        200,
        &json!({"id": "A-17", "status": "shipped"}),
    )])
    .await;
    let dir = temp_dir();
    let tokens = r#"
[[auth.tokens]]
token = "tok-alice-0123456789"
subject = "alice"
"#;
    let agent = r#"
[[agents.support.guardrails]]
kind = "redact_secrets"
at = ["input", "tool_call", "output"]

[[agents.support.guardrails]]
kind = "redact"
name = "cards"
pattern = '\d{4}-\d{4}-\d{4}-\d{4}'
replacement = "[card]"

[[agents.support.guardrails]]
kind = "block"
name = "no_threats"
at = ["input"]
pattern = '(?i)\bbomb\b'
message = "I can't help with that."
"#;
    let cfg = config_with(
        &dir,
        &provider.url,
        &tool.url,
        tokens,
        &Extra {
            agent,
            ..Extra::default()
        },
    );
    // The lookup tool's schema takes only an id: the test's call adds a
    // note, so declare it.
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace(
            r#""required": ["id"], "additionalProperties": false"#,
            r#""note": {"type": "string"}}, "required": ["id"], "additionalProperties": false"#,
        )
        .replacen(
            r#""pattern": "^A-[0-9]+$"}}"#,
            r#""pattern": "^A-[0-9]+$"}"#,
            1,
        );
    std::fs::write(&cfg, text).unwrap();
    let server = start(&cfg);
    let auth = Some("tok-alice-0123456789");
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), auth).await;
    let id = t["id"].as_str().unwrap();

    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "my token is tok-alice-0123456789", "thread_id": id}),
        auth,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "completed", "{r}");
    let sent = provider.received()[0].body.to_string();
    assert!(
        !sent.contains("tok-alice"),
        "the model read the secret: {sent}"
    );
    assert!(sent.contains("my token is [redacted]"), "{sent}");

    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "note my card on A-17", "thread_id": id}),
        auth,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(tool.received().len(), 1, "{r}");
    assert_eq!(
        tool.received()[0].body,
        json!({"id": "A-17", "note": "card [card]"})
    );

    // A blocked input: no model call, the run failed/blocked, the thread
    // stored and free, and the input never sent again.
    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "how to make a BOMB", "thread_id": id}),
        auth,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["error"]["code"], "blocked", "{r}");
    assert_eq!(provider.received().len(), 3, "the model was not asked");

    let (_, thread) = get(&server.url, &format!("/v1/threads/{id}"), auth).await;
    let stored = thread.to_string();
    assert!(
        !stored.contains("tok-alice-0123456789"),
        "the secret was stored: {stored}"
    );
    // The model's own call is kept as it wrote it; what ran (and what
    // the tool message records) is the redacted call.
    let messages = thread["messages"].as_array().unwrap();
    let first = &messages[0]["message"];
    assert_eq!(first["content"][0]["text"], "my token is [redacted]");
    assert_eq!(first["metadata"]["guardrails"][0]["outcome"], "replace");
    let tool_message = messages
        .iter()
        .map(|m| &m["message"])
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(
        tool_message["metadata"]["guardrails"][0],
        json!({"name": "cards", "point": "tool_call", "outcome": "replace", "reason": "redacted", "tool_call_id": "call_1"})
    );
    // A retry of the blocked run is refused, nobody asked.
    let (status, r) = post(
        &server.url,
        &format!("/v1/threads/{id}/retry"),
        &json!({}),
        auth,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["error"]["code"], "blocked", "{r}");
    assert_eq!(provider.received().len(), 3);
}

fn refused(config: &std::path::Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn bad_guardrail_settings_stop_the_server_naming_the_setting() {
    for (agent, expected) in [
        (
            "[[agents.support.guardrails]]\nkind = \"moderate\"\n",
            "agents.support.guardrails[0].kind: unknown guardrail \"moderate\" (known: redact_secrets, redact, block)",
        ),
        (
            "[[agents.support.guardrails]]\nkind = \"block\"\npattern = \"x\"\n",
            "agents.support.guardrails[0].message: required (what the user reads)",
        ),
        (
            "[[agents.support.guardrails]]\nkind = \"redact\"\npattern = \"(\"\n",
            "agents.support.guardrails[0].pattern: regex parse error",
        ),
        (
            "[[agents.support.guardrails]]\nkind = \"redact\"\npattern = \"x\"\nat = [\"inbox\"]\n",
            "agents.support.guardrails[0].at: unknown guardrail point \"inbox\" (known: input, tool_call, output)",
        ),
        (
            "[[agents.support.guardrails]]\nkind = \"redact_secrets\"\nmessage = \"no\"\n",
            "agents.support.guardrails[0].message: not a setting of a redact_secrets guardrail",
        ),
        (
            "output_hold = \"word\"\n",
            "agents.support.output_hold: unknown output hold \"word\" (known: answer, sentence)",
        ),
    ] {
        let dir = temp_dir();
        let cfg = with_agent(&dir, "http://127.0.0.1:9", "", agent);
        let (code, err) = refused(&cfg);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(expected), "expected {expected:?} in: {err}");
    }
}
