//! Back-pressure instead of false failures (issue 34, item 3): `parlance
//! serve` started with an open-file limit of 1024, soft and hard (it cannot
//! raise it), and 500 runs at once, each a model call, an HTTP tool call
//! and a model call. No run may complete with a failure caused by the
//! server's own lack of descriptors (a tool result "could not connect:
//! Too many open files" handed to the model); runs beyond what the server
//! can carry wait for a turn or get `503 overloaded` with `Retry-After`;
//! the server stays healthy. Prints the figures; asserts no timing.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const RUNS: usize = 500;
const OPEN_FILES: libc::rlim_t = 1024;

/// An HTTP/1.1 server answering each request with `answer(body)` after
/// `delay`, keeping connections alive between requests (as providers'
/// servers do: a client's pool then holds them open); counts the requests.
async fn answering(delay: Duration, answer: fn(&Value) -> Value) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((mut conn, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            };
            let count = Arc::clone(&count);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut tmp = [0u8; 8192];
                loop {
                    let (head_end, len) = loop {
                        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                            let len = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse::<usize>().ok())
                                .unwrap_or(0);
                            break (i + 4, len);
                        }
                        match conn.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&tmp[..n]),
                        }
                    };
                    while buf.len() < head_end + len {
                        match conn.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&tmp[..n]),
                        }
                    }
                    let body: Value = serde_json::from_slice(&buf[head_end..head_end + len])
                        .unwrap_or(Value::Null);
                    buf.drain(..head_end + len);
                    count.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(delay).await;
                    let out = answer(&body).to_string();
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        out.len()
                    );
                    if conn
                        .write_all(format!("{head}{out}").as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    (url, seen)
}

/// The model: a call of `lookup_order` first, the answer once it has the
/// tool's result (OpenAI Chat wire format).
fn model(body: &Value) -> Value {
    let has_result = body["messages"]
        .as_array()
        .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
    let message = if has_result {
        json!({"role": "assistant", "content": "A-17 has shipped."})
    } else {
        calls(&[("call_1", "lookup_order", json!({"id": "A-17"}))])
    };
    json!({"id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": if has_result { "stop" } else { "tool_calls" }}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}})
}

/// Raises this test process's own soft limit to its hard one: it holds
/// the clients' connections and the mocks' (the server's is what is low).
fn raise_own_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct given.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
    assert!(
        lim.rlim_cur >= 4096,
        "this test needs 4096 open files for its own clients and mocks (the hard limit is {})",
        lim.rlim_max
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_hundred_runs_under_a_hard_limit_of_1024_files_fail_none_falsely() {
    raise_own_limit();
    let (provider_url, asked) = answering(Duration::from_millis(300), model).await;
    let (tool_url, looked_up) = answering(
        Duration::from_millis(300),
        |_| json!({"id": "A-17", "status": "shipped"}),
    )
    .await;
    let dir = temp_dir();
    let unlimited = std::env::var("PARLANCE_TEST_NO_ADMISSION").is_ok();
    let extra = Extra {
        top: if unlimited {
            "max_connections = 100000\nmax_runs = 100000"
        } else {
            ""
        },
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider_url, &tool_url, "", &extra);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_parlance"));
    cmd.args(["serve", "--config", cfg.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .env("RUST_LOG", "error");
    // SAFETY: only setrlimit between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: OPEN_FILES,
                rlim_max: OPEN_FILES,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let server = spawned(cmd);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.child.id())).unwrap();
    assert!(
        limits.lines().any(|l| l.starts_with("Max open files")
            && l.split_whitespace().filter(|w| *w == "1024").count() == 2),
        "{limits}"
    );

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let start = Instant::now();
    let runs = (0..RUNS).map(|_| {
        let (client, url) = (client.clone(), server.url.clone());
        async move {
            let resp = client
                .post(format!("{url}/v1/runs"))
                .json(&json!({"agent": "support", "input": "Where is A-17?"}))
                .send()
                .await
                .expect("the server took the connection");
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_string());
            let body: Value = resp.json().await.unwrap_or(Value::Null);
            (status, retry_after, body)
        }
    });
    let outcomes = futures::future::join_all(runs).await;
    let took = start.elapsed();

    let (mut completed, mut refused, mut failed) = (0, 0, Vec::new());
    for (status, retry_after, body) in &outcomes {
        match status {
            200 if body["status"] == "completed" => {
                completed += 1;
                assert_eq!(body["output"], "A-17 has shipped.", "{body}");
                let result = &body["messages"][2]["content"][0]["tool_result"];
                assert!(
                    result.get("status").is_none(),
                    "a completed run whose tool call failed: {result}"
                );
                assert_eq!(
                    result["content"][0]["json"]["status"], "shipped",
                    "{result}"
                );
            }
            200 => {
                // A run the server could not carry fails as the server's
                // failure, never as the tool's or the model's.
                assert_eq!(body["error"]["code"], "server_resources", "{body}");
                failed.push(body.clone());
            }
            503 => {
                refused += 1;
                assert_eq!(retry_after.as_deref(), Some("1"), "{body}");
                assert_eq!(body["error"]["code"], "overloaded", "{body}");
            }
            other => panic!("unexpected answer {other}: {body}"),
        }
    }
    // Healthy afterwards: a run goes through.
    let (status, body) = get(&server.url, "/healthz", None).await;
    assert_eq!(status, 200, "{body}");
    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Where is A-17?"}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["output"], "A-17 has shipped.");
    eprintln!(
        "{RUNS} runs under a hard limit of {OPEN_FILES} files: {completed} completed, {refused} refused with 503, {} failed as server_resources, in {took:?} ({} model requests, {} tool calls)",
        failed.len(),
        asked.load(Ordering::SeqCst),
        looked_up.load(Ordering::SeqCst)
    );
    assert!(completed > 0);
    if !unlimited {
        // Within its limits the server never ran short (without them,
        // `PARLANCE_TEST_NO_ADMISSION=1`, some runs end server_resources).
        assert!(failed.is_empty(), "{failed:?}");
    }
}

/// Beyond `max_runs` and its queue: `503 overloaded` with `Retry-After`,
/// counted in the metrics; the runs admitted complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_its_runs_and_queue_the_server_answers_503_with_retry_after() {
    let (provider_url, _) = answering(Duration::from_millis(800), model).await;
    let (tool_url, _) = answering(
        Duration::ZERO,
        |_| json!({"id": "A-17", "status": "shipped"}),
    )
    .await;
    let dir = temp_dir();
    let extra = Extra {
        top: "max_runs = 2\nrun_queue_ms = 100",
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider_url, &tool_url, "", &extra);
    let server = start(&cfg);
    let runs = (0..6).map(|_| {
        let url = server.url.clone();
        async move {
            let resp = reqwest::Client::new()
                .post(format!("{url}/v1/runs"))
                .json(&json!({"agent": "support", "input": "Where is A-17?"}))
                .send()
                .await
                .unwrap();
            let status = resp.status().as_u16();
            let retry_after = resp.headers().get("retry-after").cloned();
            (status, retry_after, resp.json::<Value>().await.unwrap())
        }
    });
    let outcomes = futures::future::join_all(runs).await;
    let done = outcomes
        .iter()
        .filter(|(s, _, b)| *s == 200 && b["status"] == "completed")
        .count();
    let refused: Vec<_> = outcomes.iter().filter(|(s, _, _)| *s == 503).collect();
    assert_eq!(done + refused.len(), 6, "{outcomes:?}");
    assert!(done >= 2 && !refused.is_empty(), "{outcomes:?}");
    for (_, retry_after, body) in &refused {
        assert_eq!(retry_after.as_ref().unwrap(), "1");
        assert_eq!(body["error"]["code"], "overloaded");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("try again"),
            "{body}"
        );
    }
    let metrics = reqwest::get(format!("{}/metrics", server.url))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let line = metrics
        .lines()
        .find(|l| l.starts_with("parlance_runs_refused_total"))
        .unwrap_or_else(|| panic!("{metrics}"));
    assert_eq!(
        line.split_whitespace().last().unwrap(),
        refused.len().to_string(),
        "{line}"
    );
}
