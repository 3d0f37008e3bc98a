//! The load test of issue 14's "done when", through real `parlance serve`
//! processes: 500 concurrent runs on 500 threads, spread over two servers
//! sharing one SQLite store (lease 10 s: long enough that a heartbeat
//! waiting behind 500 runs' writes never loses a live run's thread); some
//! clients hang up (a stream dropped after its first event, a request
//! given up after 0.3 s); one server is killed
//! with SIGKILL mid-load and started again. At the end every run's outcome
//! is stored (`completed`, or `failed` with `interrupted` for the runs the
//! killed server held) and no thread is blocked: each takes a new run.
//!
//! It prints figures and asserts the invariants, never timings.
//! `PARLANCE_LOAD_THREADS` changes the number of runs (default 500).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A model provider (OpenAI Chat wire format) answering every request
/// after `delay`, streamed or not as asked.
async fn slow_provider(delay: Duration) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let served = Arc::new(AtomicUsize::new(0));
    let received = Arc::new(AtomicUsize::new(0));
    let (count, seen) = (served.clone(), received.clone());
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let (count, seen) = (count.clone(), seen.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut tmp = [0u8; 8192];
                let (head_end, len) = loop {
                    let Ok(n) = conn.read(&mut tmp).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&tmp[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                        let len = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (i + 4, len);
                    }
                };
                while buf.len() < head_end + len {
                    let Ok(n) = conn.read(&mut tmp).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&tmp[..n]);
                }
                let body: Value = serde_json::from_slice(&buf[head_end..]).unwrap_or(Value::Null);
                seen.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(delay).await;
                count.fetch_add(1, Ordering::SeqCst);
                let reply = if body["stream"] == json!(true) {
                    let chunk = json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}]});
                    let sse = format!("data: {chunk}\n\ndata: [DONE]\n\n");
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
                        sse.len()
                    )
                } else {
                    let answer = json!({"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}).to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                        answer.len()
                    )
                };
                let _ = conn.write_all(reply.as_bytes()).await;
            });
        }
    });
    (url, received, served)
}

/// How a client behaves.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Client {
    Waits,
    HangsUpStreaming,
    GivesUp,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_runs_two_servers_one_killed() {
    let n: usize = std::env::var("PARLANCE_LOAD_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let (provider, received, served) = slow_provider(Duration::from_secs(3)).await;
    let dir = temp_dir();
    let extra = Extra {
        store: "lease_ms = 10000",
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider, "http://127.0.0.1:9", "", &extra);
    let mut a = start(&cfg);
    let b = start(&cfg);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut threads = Vec::new();
    for _ in 0..n {
        let (_, t) = post(&b.url, "/v1/threads", &json!({}), None).await;
        threads.push(t["id"].as_str().unwrap().to_string());
    }
    let started = Instant::now();
    let mut clients = Vec::new();
    for (i, thread) in threads.iter().enumerate() {
        let url = if i % 2 == 0 {
            a.url.clone()
        } else {
            b.url.clone()
        };
        let kind = match i % 10 {
            3 => Client::HangsUpStreaming,
            7 => Client::GivesUp,
            _ => Client::Waits,
        };
        let (http, thread) = (http.clone(), thread.clone());
        clients.push(tokio::spawn(async move {
            let body = json!({"agent": "support", "input": "Go", "thread_id": thread, "stream": kind == Client::HangsUpStreaming});
            let req = http
                .post(format!("{url}/v1/runs"))
                .header("content-type", "application/json")
                .body(body.to_string());
            match kind {
                Client::Waits => match req.send().await {
                    Ok(r) => r.status().as_u16(),
                    Err(_) => 0, // its server was killed
                },
                Client::HangsUpStreaming => {
                    if let Ok(mut r) = req.send().await {
                        let _ = r.chunk().await;
                    }
                    1
                }
                Client::GivesUp => {
                    let _ = req.timeout(Duration::from_millis(300)).send().await;
                    1
                }
            }
        }));
    }
    // Kill server A while its runs wait for the model (once most runs have
    // reached the model); start it again.
    let deadline = Instant::now() + Duration::from_secs(30);
    while received.load(Ordering::SeqCst) < n * 8 / 10 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let killed_at = started.elapsed();
    let reached = received.load(Ordering::SeqCst);
    let a = start(&cfg);
    let mut answers = [0usize; 3]; // 200, killed, other
    let mut got = Vec::new();
    for c in clients {
        let status = c.await.unwrap();
        match status {
            200 => answers[0] += 1,
            0 => answers[1] += 1,
            1 => {}
            other => panic!("a client got HTTP {other}"),
        }
        got.push(status);
    }

    // Every run ends with its outcome stored (the killed server's runs
    // once their lease has run out), read through either server.
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for (i, thread) in threads.iter().enumerate() {
        let url = if i % 2 == 0 { &a.url } else { &b.url };
        let mut tries = 0;
        let run = loop {
            let (status, t) = get(url, &format!("/v1/threads/{thread}"), None).await;
            assert_eq!(status, 200, "{t}");
            let runs = t["runs"].as_array().unwrap();
            if runs.is_empty() && got[i] != 200 {
                // The client left (or its server died) before the run was
                // started: there is no run, and nothing to store.
                break Value::Null;
            }
            if let Some(run) = runs.first().filter(|r| r["status"] != "running") {
                assert_eq!(runs.len(), 1, "{thread}: {t}");
                break run.clone();
            }
            tries += 1;
            assert!(tries < 300, "{thread}: still running after 30 s: {t}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let outcome = match run["status"].as_str().unwrap_or("never started") {
            "never started" => "never started".to_string(),
            "completed" => "completed".to_string(),
            "failed" => format!("failed ({})", run["error"]["code"].as_str().unwrap_or("?")),
            other => panic!("{thread}: unexpected status {other}"),
        };
        if outcome != "completed" && outcome != "never started" {
            assert_eq!(outcome, "failed (interrupted)", "{thread}: {run}");
            assert_eq!(
                i % 2,
                0,
                "only the killed server's runs may be interrupted: {run}"
            );
        }
        *outcomes.entry(outcome).or_default() += 1;
    }
    let settled_at = started.elapsed();
    // No thread is blocked: each takes a new run at once.
    let mut next = Vec::new();
    for (i, thread) in threads.iter().enumerate() {
        let url = if i % 2 == 0 {
            a.url.clone()
        } else {
            b.url.clone()
        };
        let (http, thread) = (http.clone(), thread.clone());
        next.push(tokio::spawn(async move {
            let r = http
                .post(format!("{url}/v1/runs"))
                .header("content-type", "application/json")
                .body(
                    json!({"agent": "support", "input": "Again", "thread_id": thread}).to_string(),
                )
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            let v: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
            (status, v)
        }));
    }
    for (thread, h) in threads.iter().zip(next) {
        let (status, v) = h.await.unwrap();
        assert_eq!(status, 200, "{thread} is blocked: {v}");
        assert_eq!(v["status"], "completed", "{thread}: {v}");
    }
    eprintln!(
        "load: {n} runs on {n} threads over 2 servers; server A killed at {killed_at:?}; \
         {} runs had reached the model; \
         clients: {} answered 200, {} cut by the kill, {} hung up or gave up on purpose; \
         outcomes: {outcomes:?}; all settled by {settled_at:?}; {} model requests served; \
         then {n} follow-up runs all completed",
        reached,
        answers[0],
        answers[1],
        n - answers[0] - answers[1],
        served.load(Ordering::SeqCst),
    );
    assert_eq!(outcomes.values().sum::<usize>(), n);
}
