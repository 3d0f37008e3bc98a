//! Runs on threads through the real `parlance serve`: steps slower than the
//! lease (2 s here, steps of 5 s), clients that hang up or time out, a
//! server killed with SIGKILL mid-run.

mod common;

use std::time::Duration;

use common::replay::{ReplayServer, Reply, sse_frames};
use common::*;
use serde_json::{Value, json};

const LEASE: &str = "lease_ms = 2000";

fn slow(ms: u64, reply: Reply) -> Reply {
    Reply::Delayed(ms, Box::new(reply))
}

async fn new_thread(url: &str) -> String {
    let (status, t) = post(url, "/v1/threads", &json!({}), None).await;
    assert_eq!(status, 201, "{t}");
    t["id"].as_str().unwrap().to_string()
}

/// Waits until the run (or the only run of `thread`) is no longer running.
async fn settled(url: &str, thread: &str) -> Value {
    for _ in 0..150 {
        let (_, t) = get(url, &format!("/v1/threads/{thread}"), None).await;
        if let Some(run) = t["runs"].as_array().and_then(|r| r.last())
            && run["status"] != "running"
        {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the run on {thread} never ended")
}

/// A model answer and a tool call that each take 5 s, with a 2 s lease: a
/// second request on the same thread mid-step is refused (the first run
/// holds it by its heartbeat), and the first run completes with its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_longer_than_the_lease_keep_their_thread() {
    let provider = ReplayServer::start(vec![
        slow(5000, chat(text("A slow but sure answer."))),
        chat(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        chat(text("It has shipped.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![slow(
        5000,
        Reply::json(200, &json!({"status": "shipped"})),
    )])
    .await;
    let dir = temp_dir();
    let extra = Extra {
        store: LEASE,
        ..Extra::default()
    };
    let server = start(&config_with(&dir, &provider.url, &tool.url, "", &extra));
    // One after the other, so each replay script is consumed in order: a
    // slow model answer, then a slow tool.
    for (label, input) in [("model", "Hello"), ("tool", "Where is A-17?")] {
        let thread = new_thread(&server.url).await;
        let url = server.url.clone();
        let body = json!({"agent": "support", "input": input, "thread_id": thread});
        let first = tokio::spawn(async move { post(&url, "/v1/runs", &body, None).await });
        tokio::time::sleep(Duration::from_millis(3500)).await;
        let (status, e) = post(
            &server.url,
            "/v1/runs",
            &json!({"agent": "support", "input": "me too", "thread_id": thread}),
            None,
        )
        .await;
        assert_eq!(
            status, 409,
            "{label}: the thread was taken from a healthy run: {e}"
        );
        assert_eq!(e["error"]["code"], "thread_busy");
        let (status, r) = first.await.unwrap();
        assert_eq!(status, 200, "{label}: {r}");
        assert_eq!(r["status"], "completed", "{label}: {r}");
        let (_, t) = get(&server.url, &format!("/v1/threads/{thread}"), None).await;
        assert_eq!(t["runs"].as_array().unwrap().len(), 1, "{label}");
        if label == "tool" {
            let result = &t["messages"][2]["message"]["content"][0]["tool_result"];
            assert_eq!(
                (&result["status"], &result["content"][0]["json"]),
                (&Value::Null, &json!({"status": "shipped"})),
                "the slow tool's result is stored as it ran (status ok is implied)"
            );
        }
    }
}

/// A streaming client that hangs up after the first event, and a client
/// that times out after 0.5 s: both runs end, store their outcome and
/// usage, free the thread at once, and can be read with GET /v1/runs/{id}.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_on_threads_outlive_their_clients() {
    let stream_answer = sse_frames(&[
        ("", json!({"id": "c1", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Streamed to nobody."}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 7, "completion_tokens": 4, "total_tokens": 11}}).to_string()),
        ("", "[DONE]".to_string()),
    ]);
    let provider = ReplayServer::start(vec![
        slow(
            1500,
            Reply::Sse {
                chunks: stream_answer,
                cut: false,
            },
        ),
        slow(1500, chat(text("Answered after the client left."))),
        chat(text("The thread is free.")),
    ])
    .await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", ""));

    // Streaming: read the first event (run_started names the run), hang up.
    let thread = new_thread(&server.url).await;
    let mut resp = reqwest::Client::new()
        .post(format!("{}/v1/runs", server.url))
        .header("content-type", "application/json")
        .body(
            json!({"agent": "support", "input": "Hi", "thread_id": thread, "stream": true})
                .to_string(),
        )
        .send()
        .await
        .unwrap();
    let first = resp.chunk().await.unwrap().unwrap();
    let first = String::from_utf8_lossy(&first).to_string();
    assert!(
        first.starts_with("id: ") && first.contains("\nevent: run_started\n"),
        "{first}"
    );
    let (_, started) = parlance_providers::transport::parse_sse(&first).remove(0);
    let run_id = serde_json::from_str::<Value>(&started).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    drop(resp);
    let t = settled(&server.url, &thread).await;
    assert_eq!(t["runs"][0]["status"], "completed", "{t}");
    let (status, run) = get(&server.url, &format!("/v1/runs/{run_id}"), None).await;
    assert_eq!(status, 200, "{run}");
    assert_eq!(run["status"], "completed");
    assert_eq!(run["output"], "Streamed to nobody.");
    assert_eq!(run["usage"]["output_tokens"], 4);
    assert_eq!(run["messages"].as_array().unwrap().len(), 2);

    // Not streaming: the client gives up after 0.5 s.
    let thread = new_thread(&server.url).await;
    let gave_up = reqwest::Client::builder()
        .timeout(Duration::from_millis(500))
        .build()
        .unwrap()
        .post(format!("{}/v1/runs", server.url))
        .header("content-type", "application/json")
        .body(json!({"agent": "support", "input": "Hi", "thread_id": thread}).to_string())
        .send()
        .await;
    assert!(gave_up.is_err(), "the client was meant to time out");
    let t = settled(&server.url, &thread).await;
    let run = &t["runs"][0];
    assert_eq!(run["status"], "completed", "{t}");
    assert_eq!(run["output"], "Answered after the client left.");
    assert_eq!(run["usage"]["output_tokens"], 5);
    // The thread takes the next run at once.
    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Still there?", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["output"], "The thread is free.");
}

/// A server killed with SIGKILL mid-run, its agent set not to resume
/// (`resume = "off"`; the runs that resume are `resume.rs`'s): restarted,
/// its dead runs show `interrupted` on the first read, and the thread can
/// be deleted or run again at once (no new run needed to free it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_leaves_no_blocked_thread() {
    let provider = ReplayServer::start(vec![
        slow(30_000, chat(text("never heard"))),
        slow(30_000, chat(text("never heard either"))),
    ])
    .await;
    let dir = temp_dir();
    let extra = Extra {
        store: LEASE,
        agent: "resume = \"off\"",
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider.url, "http://127.0.0.1:9", "", &extra);
    let mut server = start(&cfg);
    let (a, b) = (new_thread(&server.url).await, new_thread(&server.url).await);
    for thread in [&a, &b] {
        let url = server.url.clone();
        let body = json!({"agent": "support", "input": "Hi", "thread_id": thread});
        tokio::spawn(async move { post(&url, "/v1/runs", &body, None).await });
    }
    tokio::time::sleep(Duration::from_millis(700)).await;
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;

    let server = start(&cfg);
    let (_, t) = get(&server.url, &format!("/v1/threads/{a}"), None).await;
    assert_eq!(t["runs"][0]["status"], "failed", "{t}");
    assert_eq!(t["runs"][0]["error"]["code"], "interrupted");
    let resp = reqwest::Client::new()
        .delete(format!("{}/v1/threads/{b}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status().as_u16(),
        204,
        "{}",
        resp.text().await.unwrap()
    );
}
