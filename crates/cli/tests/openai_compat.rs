//! `POST /v1/chat/completions` of the real `parlance serve`, read as bytes
//! (the official client's view is bindings/python/tests/test_openai_compat.py):
//! the stream's `data:` lines end with `[DONE]`; a run that waits for a
//! decision says where to decide and lists its pending calls; a thread of
//! another caller is not found; the tokens of the API apply.

mod common;

use common::replay::ReplayServer;
use common::*;
use serde_json::{Value, json};

async fn raw_post(url: &str, body: &Value, headers: &[(&str, &str)]) -> (u16, String) {
    let mut req = reqwest::Client::new()
        .post(format!("{url}/v1/chat/completions"))
        .json(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_completions_stream_wait_for_decisions_and_keep_threads_apart() {
    let provider = ReplayServer::start(vec![
        chat_stream(text("It has shipped.")),
        chat(call("call_1", "refund", json!({"amount": 40}))),
        chat(call("call_2", "refund", json!({"amount": 50}))),
        chat(text("Refunded 50.")),
    ])
    .await;
    let dir = temp_dir();
    let tokens = "[[auth.tokens]]\ntoken = \"tok-ann-0123456789\"\nsubject = \"ann\"\n[[auth.tokens]]\ntoken = \"tok-bob-0123456789\"\nsubject = \"bob\"\n";
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", tokens));
    let ann = [("authorization", "Bearer tok-ann-0123456789")];

    // No token: refused as by the rest of the API.
    let ask = json!({"model": "support", "messages": [{"role": "user", "content": "Where is A-17?"}], "stream": true});
    let (status, _) = raw_post(&server.url, &ask, &[]).await;
    assert_eq!(status, 401);

    let (status, body) = raw_post(&server.url, &ask, &ann).await;
    assert_eq!(status, 200, "{body}");
    let data: Vec<&str> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .collect();
    assert_eq!(data.last(), Some(&"[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "It has shipped.");
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["parlance"]["status"], "completed");

    // A run that waits for a person: the answer says where to decide.
    let (status, t) = post(
        &server.url,
        "/v1/threads",
        &json!({}),
        Some("tok-ann-0123456789"),
    )
    .await;
    assert_eq!(status, 201);
    let thread = t["id"].as_str().unwrap();
    let with_thread = [ann[0], ("x-parlance-thread", thread)];
    let ask = json!({"model": "support", "messages": [{"role": "user", "content": "Refund 40"}]});
    let (status, body) = raw_post(&server.url, &ask, &with_thread).await;
    assert_eq!(status, 200, "{body}");
    let r: Value = serde_json::from_str(&body).unwrap();
    let run = r["parlance"]["run_id"].as_str().unwrap();
    assert_eq!(r["parlance"]["status"], "requires_approval");
    assert_eq!(r["parlance"]["thread_id"], thread);
    assert_eq!(r["parlance"]["pending"][0]["name"], "refund");
    let content = r["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(
        content.contains("waits for a person's decision on refund")
            && content.contains(&format!("POST /v1/runs/{run}/decisions")),
        "{content}"
    );
    // It is the thread's run, waiting in the store.
    let (_, stored) = get(
        &server.url,
        &format!("/v1/runs/{run}"),
        Some("tok-ann-0123456789"),
    )
    .await;
    assert_eq!(stored["status"], "requires_approval");

    // Another caller's thread is not found.
    let bob = [
        ("authorization", "Bearer tok-bob-0123456789"),
        ("x-parlance-thread", thread),
    ];
    let (status, body) = raw_post(&server.url, &ask, &bob).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(
        provider.received().len(),
        2,
        "nothing more reached the model"
    );

    // Stateless: the paused response comes signed, to send back with the
    // decision.
    let ask = json!({"model": "support", "messages": [{"role": "user", "content": "Refund 50"}]});
    let (status, body) = raw_post(&server.url, &ask, &ann).await;
    assert_eq!(status, 200, "{body}");
    let r: Value = serde_json::from_str(&body).unwrap();
    let content = r["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(
        content.contains("sending back parlance.paused"),
        "{content}"
    );
    let paused = &r["parlance"]["paused"];
    assert!(paused["signature"].is_string(), "{paused}");
    let pending = &paused["pending"][0];
    let run = paused["id"].as_str().unwrap();
    let decision = json!({"agent": "support", "paused": paused, "decisions": [{
        "tool_call_id": pending["tool_call_id"], "digest": pending["digest"], "decision": "answered",
        "content": [{"type": "text", "text": "refund #992 issued"}]}]});
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{run}/decisions"),
        &decision,
        Some("tok-ann-0123456789"),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["output"], "Refunded 50.");
}
