//! A bounded load test on loopback: the real router and store (SQLite),
//! a local model provider (OpenAI Chat wire format) that answers after a
//! fixed latency, and `RUNS` agent runs with `CONCURRENCY` in flight. Each
//! run is one prompt, three parallel tool calls, two model requests.
//! Prints runs/s, p50/p99 latency, and the server's CPU time per run.
//!
//! Run: `cargo bench -p parlance-server --bench load`
//! (`PARLANCE_LOAD_RUNS`, `PARLANCE_LOAD_CONCURRENCY`, `PARLANCE_LOAD_LATENCY_MS` to change it).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// CPU time of this process (user + system).
fn cpu_time() -> Duration {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we pass; RUSAGE_SELF is valid.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

/// A model provider on loopback: every request waits `latency`, then gets
/// three parallel tool calls, or (after tool results) a final answer.
async fn provider(latency: Duration) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let calls = Arc::new(AtomicU64::new(0));
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let calls = calls.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    // One request per read loop (keep-alive).
                    let mut have = 0;
                    let (head_end, len) = loop {
                        let n = match conn.read(&mut buf[have..]).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        have += n;
                        if let Some(i) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                            let len: usize = head
                                .lines()
                                .find_map(|l| l.strip_prefix("content-length:"))
                                .and_then(|v| v.trim().parse().ok())
                                .unwrap_or(0);
                            break (i + 4, len);
                        }
                    };
                    while have < head_end + len {
                        let n = match conn.read(&mut buf[have..]).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        have += n;
                    }
                    let body = &buf[head_end..head_end + len];
                    let pat = b"\"role\":\"tool\"";
                    let after_tools = body.windows(pat.len()).any(|w| w == pat);
                    tokio::time::sleep(latency).await;
                    let n = calls.fetch_add(1, Ordering::Relaxed);
                    let message = if after_tools {
                        json!({"role": "assistant", "content": "All three orders have shipped."})
                    } else {
                        let tc: Vec<_> = (0..3)
                            .map(|i| json!({"id": format!("call_{n}_{i}"), "type": "function", "function": {"name": "lookup", "arguments": format!("{{\"id\":\"A-{i}\"}}")}}))
                            .collect();
                        json!({"role": "assistant", "content": null, "tool_calls": tc})
                    };
                    let finish = if after_tools { "stop" } else { "tool_calls" };
                    let out = json!({"id": "chatcmpl", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}})
                    .to_string();
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{out}",
                        out.len()
                    );
                    if conn.write_all(resp.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

fn main() {
    let runs = env("PARLANCE_LOAD_RUNS", 1000) as usize;
    let concurrency = env("PARLANCE_LOAD_CONCURRENCY", 100) as usize;
    let latency = Duration::from_millis(env("PARLANCE_LOAD_LATENCY_MS", 20));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let provider_url = provider(latency).await;
        let dir = std::env::temp_dir().join(format!("parlance-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config: parlance_server::Config = toml::from_str(&format!(
            r#"
[store]
url = "sqlite://{db}"
[providers.loopback]
format = "openai-chat"
base_url = "{provider_url}/v1"
api_key_env = "PARLANCE_LOAD_NO_KEY"
[agents.bench]
model = "loopback:m"
tools = ["lookup"]
[tools.lookup]
kind = "external"
description = "unused"
input_schema = '{{"type": "object"}}'
"#,
            db = dir.join("load.db").display()
        ))
        .unwrap();
        // The tool: a real in-process tool would be typical; an http tool
        // would add a third round trip. Use the engine's own tool instead.
        let state = parlance_server::AppState::new(config).await.unwrap();
        let agent = parlance_agent::Agent::builder(parlance_assemble::model(&state.config, "loopback:m").unwrap())
            .name("bench")
            .tool(parlance_agent::Tool::new("lookup", "Look up an order.", |a: serde_json::Value, _c: parlance_agent::ToolContext| async move {
                Ok::<_, parlance_agent::ToolError>(json!({"id": a["id"], "status": "shipped"}))
            }))
            .build()
            .unwrap();
        let mut state = state;
        state.agents.insert("bench".into(), agent);
        let app = parlance_server::router(Arc::new(state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server_url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

        parlance_providers::transport::install_crypto();
        let client = reqwest::Client::builder().pool_max_idle_per_host(concurrency).build().unwrap();
        let body = json!({"agent": "bench", "input": "Where are orders A-0, A-1 and A-2?"}).to_string();
        let cpu0 = cpu_time();
        let t0 = Instant::now();
        let next = Arc::new(AtomicU64::new(0));
        let mut workers = Vec::new();
        for _ in 0..concurrency {
            let (client, url, body, next) = (client.clone(), server_url.clone(), body.clone(), next.clone());
            workers.push(tokio::spawn(async move {
                let mut latencies = Vec::new();
                while (next.fetch_add(1, Ordering::Relaxed) as usize) < runs {
                    let start = Instant::now();
                    let r = client.post(format!("{url}/v1/runs")).header("content-type", "application/json").body(body.clone()).send().await.unwrap();
                    assert_eq!(r.status(), 200);
                    let v: serde_json::Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
                    assert_eq!(v["status"], "completed", "{v}");
                    latencies.push(start.elapsed());
                }
                latencies
            }));
        }
        let mut all = Vec::new();
        for w in workers {
            all.extend(w.await.unwrap());
        }
        let wall = t0.elapsed();
        let cpu = cpu_time() - cpu0;
        all.sort();
        let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
        println!("load: {runs} runs, {concurrency} in flight, model latency {latency:?}, each run = 1 prompt + 3 parallel tool calls + 2 model requests");
        println!("  throughput   {:.0} runs/s", runs as f64 / wall.as_secs_f64());
        println!("  latency      p50 {:?}  p99 {:?}  (floor: 2 x {latency:?})", pct(0.50), pct(0.99));
        println!(
            "  CPU per run  {:.3} ms (whole process: server, store-less stateless runs, the mock provider and the load client)",
            cpu.as_secs_f64() * 1000.0 / runs as f64
        );
        let peak = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.trim_start_matches("VmHWM:").trim().to_string()))
            .unwrap_or_else(|| "unknown".into());
        println!("  peak RSS     {peak} (the same whole process)");
    });
}
