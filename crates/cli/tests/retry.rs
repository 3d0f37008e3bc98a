//! `fail`, approvals and retry through the real `parlance serve` and
//! `parlance threads retry`: a run stopped by `fail` while a call waits
//! for approval leaves a usable thread; a reviewer's answer the provider
//! cannot carry is refused; a retry runs the failed call again, with the
//! same `Idempotency-Key`.

mod common;

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::{Value, json};

fn failing_then_ok() -> Vec<Reply> {
    vec![
        Reply::Full {
            status: 503,
            headers: vec![],
            body: "try later".into(),
        },
        Reply::json(200, &json!({"id": "A-1", "status": "shipped"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_with_a_pending_call_then_retry_through_the_api() {
    let provider = ReplayServer::start(vec![
        chat(calls(&[
            ("c1", "refund", json!({"amount": 5})),
            ("c2", "lookup_order", json!({"id": "A-1"})),
        ])),
        chat(text("Refunded; A-1 has shipped.")),
    ])
    .await;
    let tool = ReplayServer::start(failing_then_ok()).await;
    let dir = temp_dir();
    let extra = Extra {
        agent: "on_tool_exception = \"fail\"",
        ..Extra::default()
    };
    let server = start(&config_with(&dir, &provider.url, &tool.url, "", &extra));
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let thread = t["id"].as_str().unwrap().to_string();
    let (_, failed) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 5 and find A-1", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], "tool_failed");
    assert!(!failed.to_string().contains("approval_request"), "{failed}");

    // Retry: the failed HTTP call runs again; the refund waits again.
    let (status, paused) = post(
        &server.url,
        &format!("/v1/threads/{thread}/retry"),
        &json!({}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["status"], "requires_approval", "{paused}");
    assert_eq!(paused["pending"][0]["name"], "refund");
    assert_eq!(
        provider.received().len(),
        1,
        "no model call before the decision"
    );
    assert_eq!(tool.received().len(), 2);
    // The run again of the failed call is the same call: the same key.
    let keys: Vec<_> = tool
        .received()
        .iter()
        .map(|r| r.header("idempotency-key").map(str::to_string))
        .collect();
    let want = Some(format!("{thread}/c2"));
    assert_eq!(keys, [want.clone(), want]);

    // An answer holding an image is refused; the run still waits.
    let pending = &paused["pending"][0];
    let path = format!("/v1/runs/{}/decisions", paused["id"].as_str().unwrap());
    let image = json!({"decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"], "decision": "answered",
        "content": [{"type": "image", "image": {"url": "https://example.com/receipt.png"}}]}]});
    let (status, e) = post(&server.url, &path, &image, None).await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(e["error"]["code"], "invalid_decision");
    assert!(
        e["error"]["message"].as_str().unwrap().starts_with(
            "decisions[0].content[0]: an answer holds text and json blocks only, not image"
        ),
        "{e}"
    );
    let ok = json!({"decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"], "decision": "answered",
        "content": [{"type": "text", "text": "refund #12 issued"}]}]});
    let (status, done) = post(&server.url, &path, &ok, None).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    // The model read the new results, never the failure.
    let sent = provider.received()[1].body["messages"].to_string();
    assert!(
        sent.contains("shipped") && sent.contains("refund #12 issued"),
        "{sent}"
    );
    assert!(!sent.contains("503") && !sent.contains("failed"), "{sent}");
    // Nothing left to retry.
    let (status, e) = post(
        &server.url,
        &format!("/v1/threads/{thread}/retry"),
        &json!({}),
        None,
    )
    .await;
    assert_eq!(
        (status, &e["error"]["code"]),
        (409, &json!("conflict")),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parlance_threads_retry() {
    let provider = ReplayServer::start(vec![
        chat(call("c1", "lookup_order", json!({"id": "A-1"}))),
        chat(text("A-1 has shipped.")),
    ])
    .await;
    let tool = ReplayServer::start(failing_then_ok()).await;
    let dir = temp_dir();
    let extra = Extra {
        agent: "on_tool_exception = \"fail\"",
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider.url, &tool.url, "", &extra);
    let server = start(&cfg);
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let thread = t["id"].as_str().unwrap().to_string();
    let (_, failed) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Find A-1", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let store = format!("sqlite://{}", dir.join("threads.db").display());
    let (cfg, thread2) = (cfg.to_str().unwrap().to_string(), thread.clone());
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_parlance"))
            .args([
                "threads", "retry", &thread2, "--config", &cfg, "--store", &store,
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "A-1 has shipped."
    );
    let (_, t) = get(&server.url, &format!("/v1/threads/{thread}"), None).await;
    let runs: Vec<Value> = t["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["status"], "completed");
}
