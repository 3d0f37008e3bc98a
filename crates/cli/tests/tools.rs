//! HTTP tools and limits through the real `parlance serve`: how each kind
//! of failure ends a call, output limits, the open-file limit, connections
//! per host, and the logs that say what happened.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The tool result the model was sent last (its text).
fn last_tool_text(provider: &ReplayServer, request: usize) -> String {
    let sent = &provider.received()[request].body["messages"];
    sent.as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

const LEAKY: &str = r#"
[tools.leaky]
kind = "http"
url = "http://127.0.0.1:9/lookup?api_key=SECRETKEY123"
description = "A tool whose URL holds a key."
input_schema = '{"type": "object"}'
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_tool_failures_follow_the_policy() {
    let provider = ReplayServer::start(vec![
        // return_generic, 503 with a secret in its body
        chat(call("c1", "lookup_order", json!({"id": "A-1"}))),
        chat(text("Sorry.")),
        // fail, 503
        chat(call("c2", "lookup_order", json!({"id": "A-2"}))),
        // default policy, connection refused, URL with a key
        chat(call("c3", "leaky", json!({}))),
        chat(text("It is down.")),
        // 4xx: the tool's own error
        chat(call("c4", "lookup_order", json!({"id": "A-4"}))),
        chat(text("No such order.")),
    ])
    .await;
    let body = "connection failed: postgres://admin:hunter2@db.internal/orders";
    let tool = ReplayServer::start(vec![
        Reply::Full {
            status: 503,
            headers: vec![],
            body: body.into(),
        },
        Reply::Full {
            status: 500,
            headers: vec![],
            body: body.into(),
        },
        Reply::json(404, &json!({"error": "no such order"})),
    ])
    .await;
    let dir = temp_dir();
    let extra = Extra {
        tables: LEAKY,
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider.url, &tool.url, "", &extra);
    let (server, log) = start_logged(&cfg, &[]);
    let agent = |policy: &str| json!({"model": "mock:gpt-test", "tools": ["lookup_order", "leaky"], "on_tool_exception": policy});

    let (_, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": agent("return_generic"), "input": "A-1?"}),
        None,
    )
    .await;
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(last_tool_text(&provider, 1), "lookup_order failed.");
    assert!(!r.to_string().contains("hunter2"), "{r}");

    let (_, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": agent("fail"), "input": "A-2?"}),
        None,
    )
    .await;
    assert_eq!(r["status"], "failed", "a 5xx is an unexpected failure: {r}");
    assert_eq!(r["error"]["code"], "tool_failed");
    assert_eq!(
        r["error"]["cause"]["message"],
        "HTTP 500 Internal Server Error from the tool's server"
    );
    assert!(!r.to_string().contains("hunter2"), "{r}");

    let (_, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": agent("return_to_model"), "input": "?"}),
        None,
    )
    .await;
    assert_eq!(r["status"], "completed", "{r}");
    let seen = last_tool_text(&provider, 4);
    assert!(
        seen.starts_with("leaky failed: http: could not connect"),
        "{seen}"
    );
    assert!(
        !seen.contains("api_key") && !seen.contains("SECRETKEY123"),
        "{seen}"
    );

    let (_, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": agent("fail"), "input": "A-4?"}),
        None,
    )
    .await;
    assert_eq!(
        r["status"], "completed",
        "a 4xx is the tool's own error: {r}"
    );
    assert_eq!(
        last_tool_text(&provider, 6),
        "HTTP 404: {\"error\":\"no such order\"}"
    );

    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("http tool answered a server error"),
        "{logged}"
    );
    assert!(logged.contains("http tool failed"), "{logged}");
    assert!(!logged.contains("SECRETKEY123"), "{logged}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_tool_output_never_reaches_the_model_or_the_store() {
    let provider = ReplayServer::start(vec![
        chat(call("c1", "lookup_order", json!({"id": "A-1"}))),
        chat(text("Too much.")),
    ])
    .await;
    let huge = json!("x".repeat(20 * 1024 * 1024)).to_string();
    let tool = ReplayServer::start(vec![Reply::Full {
        status: 200,
        headers: vec![],
        body: huge,
    }])
    .await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, &tool.url, ""));
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "A-1?", "thread_id": t["id"]}),
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        r.to_string().len() < 10_000,
        "the answer carries the output"
    );
    let seen = last_tool_text(&provider, 1);
    assert_eq!(
        seen,
        "lookup_order answered more than its output limit of 1048576 bytes; the answer was dropped"
    );
    let db: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("threads.db"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(db < 2 * 1024 * 1024, "the store grew to {db} bytes");
}

/// A tool server that answers after 300 ms and counts how many requests
/// it holds at once.
async fn counting_tool() -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (n, p) = (now.clone(), peak.clone());
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let (n, p) = (n.clone(), p.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = conn.read(&mut buf).await;
                let held = n.fetch_add(1, Ordering::SeqCst) + 1;
                p.fetch_max(held, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
                n.fetch_sub(1, Ordering::SeqCst);
                let body = "{\"ok\":true}";
                let _ = conn
                    .write_all(format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).as_bytes())
                    .await;
            });
        }
    });
    (url, now, peak)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_files_raised_connections_per_host_capped() {
    let six: Vec<(String, Value)> = (0..6)
        .map(|i| (format!("c{i}"), json!({"id": format!("A-{i}")})))
        .collect();
    let list: Vec<(&str, &str, Value)> = six
        .iter()
        .map(|(id, a)| (id.as_str(), "lookup_order", a.clone()))
        .collect();
    let provider = ReplayServer::start(vec![chat(calls(&list)), chat(text("All six."))]).await;
    let (tool_url, _, peak) = counting_tool().await;
    let dir = temp_dir();
    let extra = Extra {
        top: "max_connections_per_host = 2",
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider.url, &tool_url, "", &extra);
    // Started with a soft limit of 256 open files (the hard one unchanged).
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_parlance"));
    cmd.args(["serve", "--config", cfg.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let mut lim = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
            lim.rlim_cur = 256.min(lim.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            Ok(())
        });
    }
    let server = spawned(cmd);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.child.id())).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let nums: Vec<&str> = line
        .split_whitespace()
        .filter(|w| w.chars().all(|c| c.is_ascii_digit()) || *w == "unlimited")
        .collect();
    assert_eq!(
        nums[0], nums[1],
        "the soft limit was raised to the hard one: {line}"
    );

    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "All six?"}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let results = &r["messages"][2]["content"];
    assert_eq!(results.as_array().unwrap().len(), 6);
    for res in results.as_array().unwrap() {
        assert_eq!(
            res["tool_result"]["content"][0]["json"],
            json!({"ok": true}),
            "{res}"
        );
    }
    assert_eq!(
        peak.load(Ordering::SeqCst),
        2,
        "at most 2 requests at once to one host"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_follow_rust_log_as_json_lines_with_secrets_scrubbed() {
    let provider = ReplayServer::start(vec![
        chat(call("c1", "lookup_order", json!({"id": "A-1"}))),
        chat(text("Down.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::Full {
        status: 502,
        headers: vec![],
        body: "upstream said: token tok-operator-9876 rejected".into(),
    }])
    .await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, &tool.url, "");
    let env = [
        ("PARLANCE_LOG_FORMAT", "json"),
        ("RUST_LOG", "info"),
        ("PARLANCE_OPERATOR_TOKENS", "ops=tok-operator-9876"),
    ];
    let (server, log) = start_logged(&cfg, &env);
    let (status, _) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "A-1?"}),
        Some("tok-operator-9876"),
    )
    .await;
    assert_eq!(status, 200);
    drop(server);
    let logged = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = logged
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect();
    assert!(
        lines.iter().any(|l| l["message"] == "open-file limit"
            || l["message"]
                .as_str()
                .is_some_and(|m| m.contains("open-file limit"))),
        "{logged}"
    );
    let warn = lines
        .iter()
        .find(|l| l["message"] == "http tool answered a server error")
        .unwrap_or_else(|| panic!("{logged}"));
    assert_eq!(warn["level"], "WARN");
    assert_eq!(warn["body"], "upstream said: token [redacted] rejected");
    assert!(!logged.contains("tok-operator-9876"));

    // RUST_LOG=error: no warnings, no info.
    let provider = ReplayServer::start(vec![
        chat(call("c1", "lookup_order", json!({"id": "A-1"}))),
        chat(text("Down.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::Full {
        status: 502,
        headers: vec![],
        body: "x".into(),
    }])
    .await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, &tool.url, "");
    let (server, log) = start_logged(&cfg, &[("RUST_LOG", "error")]);
    post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "A-1?"}),
        None,
    )
    .await;
    drop(server);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "");
}
