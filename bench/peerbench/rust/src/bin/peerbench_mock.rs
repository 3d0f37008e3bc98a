//! peerbench's scripted OpenAI Chat Completions mock, in Rust.
//!
//! The script is peerbench's (`mock_llm.py`): a request with no assistant
//! tool-call turn after the last user message is answered with N parallel
//! `get_order` calls (A-1001, A-1002...); otherwise every call of the last
//! tool turn must have exactly one result, and the answer quotes the
//! `order_id=status` pairs found in them. JSON or SSE (`stream: true`),
//! `--latency-ms` before the first byte. Written in Rust so that one core
//! holds ten thousand connections (the Python mock tops out far earlier).
//!
//! `POST /tools/get_order` answers the task's tool for a server that calls
//! it over HTTP (`parlance serve` with an HTTP tool): `{"order_id"}` in,
//! the order out. `GET /_stats` (counters), `POST /_reset`, `GET /health`. Paths may carry
//! peerbench's tag prefix (`/p/<tag>/v1/...`, `/p/<tag>/s/badargs/v1/...`).
//! HTTP/1.1 or HTTP/2 with prior knowledge (h2c) on the same port; one
//! HTTP/2 connection carries at most `--max-concurrent-streams` requests at
//! once, as a provider's front end would allow.
//! Prints `peerbench-mock listening on http://HOST:PORT` on stdout once ready.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::Response;
use clap::Parser;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "peerbench's scripted Chat Completions mock")]
struct Args {
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// 0 picks a free port (printed once listening).
    #[arg(long, default_value_t = 8011)]
    port: u16,
    /// Delay before every chat answer's first byte.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Tool calls asked for in the first turn.
    #[arg(long, default_value_t = 3)]
    n_tools: usize,
    /// Requests one HTTP/2 connection may carry at once (the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS); 0 for no limit. Real front ends
    /// advertise 100 to a few hundred (nginx 128, hyper 200, Cloudflare
    /// 256): a client with many requests in flight needs several
    /// connections, as it would with a provider. 256 by default.
    #[arg(long, default_value_t = 256)]
    max_concurrent_streams: u32,
}

#[derive(Default)]
struct Stats {
    requests: AtomicU64,
    stream_requests: AtomicU64,
    tool_call_turns: AtomicU64,
    final_turns: AtomicU64,
    tool_results_ok: AtomicU64,
    tool_results_bad: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    tool_calls: AtomicU64,
}

impl Stats {
    fn to_json(&self) -> Value {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        json!({
            "requests": get(&self.requests),
            "stream_requests": get(&self.stream_requests),
            "tool_call_turns": get(&self.tool_call_turns),
            "final_turns": get(&self.final_turns),
            "tool_results_ok": get(&self.tool_results_ok),
            "tool_results_bad": get(&self.tool_results_bad),
            "in_flight": get(&self.in_flight),
            "max_in_flight": get(&self.max_in_flight),
            "tool_calls": get(&self.tool_calls),
        })
    }

    fn reset(&self) {
        for a in [
            &self.requests,
            &self.stream_requests,
            &self.tool_call_turns,
            &self.final_turns,
            &self.tool_results_ok,
            &self.tool_results_bad,
            &self.max_in_flight,
            &self.tool_calls,
        ] {
            a.store(0, Ordering::Relaxed);
        }
    }
}

struct Mock {
    latency: Duration,
    n_tools: usize,
    stats: Stats,
}

/// The scripted answer to one request.
enum Reply {
    ToolCalls(Vec<Value>),
    Final(String),
}

/// `(scenario, route)` of a path: the tag prefix and `/v1` stripped.
fn route(path: &str) -> (String, String) {
    let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let mut scenario = String::new();
    if parts.len() >= 2 && parts[0] == "p" {
        parts.drain(..2);
        if parts.len() >= 2 && parts[0] == "s" {
            scenario = parts[1].to_string();
            parts.drain(..2);
        }
    }
    if parts.first() == Some(&"v1") {
        parts.remove(0);
    }
    (scenario, format!("/{}", parts.join("/")))
}

fn content_text(content: &Value) -> String {
    match content {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p.get("text") {
                Some(Value::String(t)) => t.clone(),
                _ => String::new(),
            })
            .collect(),
        other => other.to_string(),
    }
}

fn plan(mock: &Mock, body: &Value, scenario: &str, reqno: u64) -> Reply {
    let empty = Vec::new();
    let msgs = body["messages"].as_array().unwrap_or(&empty);
    let after_user = msgs
        .iter()
        .rposition(|m| m["role"] == "user")
        .map_or(0, |i| i + 1);
    let last_turn = msgs[after_user..].iter().enumerate().rev().find(|(_, m)| {
        m["role"] == "assistant" && m["tool_calls"].as_array().is_some_and(|a| !a.is_empty())
    });
    let Some((offset, turn)) = last_turn else {
        let calls = (0..mock.n_tools)
            .map(|i| {
                let args = if scenario == "badargs" && i == 0 {
                    json!({"order_id": 12345})
                } else {
                    json!({"order_id": format!("A-{}", 1001 + i)})
                };
                json!({"id": format!("call_{reqno}_{i}"), "type": "function",
                       "function": {"name": "get_order", "arguments": args.to_string()}})
            })
            .collect();
        return Reply::ToolCalls(calls);
    };
    let mut want: Vec<&str> = turn["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["id"].as_str())
        .collect();
    let results: Vec<&Value> = msgs[after_user + offset + 1..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    let mut got: Vec<&str> = results
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    let found: Vec<String> = results
        .iter()
        .map(|m| {
            let text = content_text(&m["content"]);
            match serde_json::from_str::<Value>(&text) {
                Ok(v) if v.get("order_id").is_some() => {
                    let status = v["status"].as_str().unwrap_or("?");
                    format!("{}={status}", content_text(&v["order_id"]))
                }
                _ => text.chars().take(60).collect(),
            }
        })
        .collect();
    want.sort_unstable();
    got.sort_unstable();
    let counter = if want == got {
        &mock.stats.tool_results_ok
    } else {
        &mock.stats.tool_results_bad
    };
    counter.fetch_add(1, Ordering::Relaxed);
    Reply::Final(format!("Order summary: {}.", found.join("; ")))
}

fn usage(body_len: usize, completion: usize) -> Value {
    let prompt = (body_len / 4).max(1);
    json!({"prompt_tokens": prompt, "completion_tokens": completion,
           "total_tokens": prompt + completion})
}

fn json_answer(body: &Value, reply: &Reply, reqno: u64, body_len: usize) -> Value {
    let (message, finish, tokens) = match reply {
        Reply::ToolCalls(calls) => (
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
            "tool_calls",
            20 * calls.len(),
        ),
        Reply::Final(text) => (
            json!({"role": "assistant", "content": text}),
            "stop",
            (text.len() / 4).max(1),
        ),
    };
    json!({
        "id": format!("chatcmpl-mock{reqno}"), "object": "chat.completion", "created": 0,
        "model": body.get("model").cloned().unwrap_or(json!("mock-model")),
        "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
        "usage": usage(body_len, tokens),
    })
}

/// The whole SSE body: role chunk, calls (arguments cut in two) or text in
/// four pieces, finish chunk, usage chunk when asked for, `[DONE]`.
fn sse_answer(body: &Value, reply: &Reply, reqno: u64, body_len: usize) -> String {
    let model = body.get("model").cloned().unwrap_or(json!("mock-model"));
    let chunk = |delta: Value, finish: Value| {
        json!({"id": format!("chatcmpl-mock{reqno}"), "object": "chat.completion.chunk",
               "created": 0, "model": model, "system_fingerprint": "fp_mock",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    };
    let mut events = Vec::new();
    let tokens = match reply {
        Reply::ToolCalls(calls) => {
            events.push(chunk(
                json!({"role": "assistant", "content": null}),
                Value::Null,
            ));
            for (i, call) in calls.iter().enumerate() {
                let args = call["function"]["arguments"].as_str().unwrap_or("");
                let (a, b) = args.split_at(args.len() / 2);
                events.push(chunk(
                    json!({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                            "function": {"name": "get_order", "arguments": ""}}]}),
                    Value::Null,
                ));
                for part in [a, b] {
                    events.push(chunk(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": part}}]}),
                        Value::Null,
                    ));
                }
            }
            events.push(chunk(json!({}), json!("tool_calls")));
            20 * calls.len()
        }
        Reply::Final(text) => {
            events.push(chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
            ));
            let words: Vec<&str> = text.split(' ').collect();
            let step = (words.len() / 4).max(1);
            for (n, piece) in words.chunks(step).enumerate() {
                let mut piece = piece.join(" ");
                if (n + 1) * step < words.len() {
                    piece.push(' ');
                }
                events.push(chunk(json!({"content": piece}), Value::Null));
            }
            events.push(chunk(json!({}), json!("stop")));
            (text.len() / 4).max(1)
        }
    };
    if body["stream_options"]["include_usage"] == true {
        let mut last = chunk(json!({}), Value::Null);
        last["choices"] = json!([]);
        last["usage"] = usage(body_len, tokens);
        events.push(last);
    }
    let mut out = String::new();
    for e in events {
        out.push_str("data: ");
        out.push_str(&e.to_string());
        out.push_str("\n\n");
    }
    out.push_str("data: [DONE]\n\n");
    out
}

/// The task's tool, over HTTP.
fn get_order(raw: &[u8]) -> Response {
    let args: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
    let Some(id) = args["order_id"].as_str() else {
        return error(
            StatusCode::BAD_REQUEST,
            "order_id: a string is required".into(),
        );
    };
    let order = json!({"order_id": id, "status": parlance_peerbench::order_status(id),
                       "total_eur": 42.5, "items": 2});
    respond(StatusCode::OK, "application/json", order.to_string())
}

fn respond(status: StatusCode, content_type: &str, body: impl Into<Body>) -> Response {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    if let Ok(v) = content_type.parse() {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r
}

fn error(status: StatusCode, message: String) -> Response {
    let body = json!({"error": {"message": message, "type": "mock"}}).to_string();
    respond(status, "application/json", body)
}

async fn chat(mock: &Mock, scenario: &str, raw: Bytes) -> Response {
    let reqno = mock.stats.requests.fetch_add(1, Ordering::Relaxed) + 1;
    let body: Value = match serde_json::from_slice(&raw) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => return error(StatusCode::BAD_REQUEST, "the body is not an object".into()),
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the body is not JSON: {e}"),
            );
        }
    };
    let reply = plan(mock, &body, scenario, reqno);
    let turns = match reply {
        Reply::ToolCalls(_) => &mock.stats.tool_call_turns,
        Reply::Final(_) => &mock.stats.final_turns,
    };
    turns.fetch_add(1, Ordering::Relaxed);
    if !mock.latency.is_zero() {
        tokio::time::sleep(mock.latency).await;
    }
    if body["stream"] == true {
        mock.stats.stream_requests.fetch_add(1, Ordering::Relaxed);
        let sse = sse_answer(&body, &reply, reqno, raw.len());
        respond(StatusCode::OK, "text/event-stream", sse)
    } else {
        let answer = json_answer(&body, &reply, reqno, raw.len()).to_string();
        respond(StatusCode::OK, "application/json", answer)
    }
}

async fn handle(mock: Arc<Mock>, method: Method, uri: Uri, raw: Bytes) -> Response {
    let (scenario, route) = route(uri.path());
    match (method, route.as_str()) {
        (Method::POST, "/chat/completions") => {
            let stats = &mock.stats;
            let now = stats.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
            stats.max_in_flight.fetch_max(now, Ordering::Relaxed);
            let answer = chat(&mock, &scenario, raw).await;
            stats.in_flight.fetch_sub(1, Ordering::Relaxed);
            answer
        }
        (Method::POST, "/tools/get_order") => {
            mock.stats.tool_calls.fetch_add(1, Ordering::Relaxed);
            get_order(&raw)
        }
        (Method::GET, "/_stats") => respond(
            StatusCode::OK,
            "application/json",
            mock.stats.to_json().to_string(),
        ),
        (Method::POST, "/_reset") => {
            mock.stats.reset();
            respond(StatusCode::OK, "application/json", r#"{"ok":true}"#)
        }
        (Method::GET, "/health" | "/") => {
            respond(StatusCode::OK, "application/json", r#"{"ok":true}"#)
        }
        (method, _) => error(
            StatusCode::NOT_FOUND,
            format!("mock: no route {method} {}", uri.path()),
        ),
    }
}

async fn serve(args: Args) -> std::io::Result<()> {
    let addr: std::net::SocketAddr = format!("{}:{}", args.host, args.port)
        .parse()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{e}")))?;
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    // A deep accept queue: thousands of runs connect at once.
    let listener = socket.listen(65_535)?;
    let mock = Arc::new(Mock {
        latency: Duration::from_millis(args.latency_ms),
        n_tools: args.n_tools,
        stats: Stats::default(),
    });
    let app = axum::Router::new().fallback(move |method: Method, uri: Uri, raw: Bytes| {
        handle(mock.clone(), method, uri, raw)
    });
    // hyper's server as axum::serve drives it (HTTP/1.1, or HTTP/2 with
    // prior knowledge), with the stream limit set: axum::serve keeps
    // hyper's default of 200.
    let mut http = auto::Builder::new(TokioExecutor::new());
    let streams = args.max_concurrent_streams;
    http.http2()
        .max_concurrent_streams((streams > 0).then_some(streams));
    let http = Arc::new(http);
    println!(
        "peerbench-mock listening on http://{}",
        listener.local_addr()?
    );
    use std::io::Write as _;
    std::io::stdout().flush()?;
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stop => return Ok(()),
        };
        let stream = match stream {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, most likely: wait for some to close.
                eprintln!("peerbench-mock: accept: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let (http, service) = (http.clone(), TowerToHyperService::new(app.clone()));
        tokio::spawn(async move {
            // A connection that fails (the client went away) ends alone.
            let _ = http.serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    parlance_peerbench::raise_open_files_limit();
    parlance_peerbench::serve_main("peerbench-mock", serve(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_lose_their_tag_and_version() {
        assert_eq!(
            route("/v1/chat/completions"),
            (String::new(), "/chat/completions".into())
        );
        assert_eq!(
            route("/p/ours.seq/s/badargs/v1/chat/completions"),
            ("badargs".into(), "/chat/completions".into())
        );
        assert_eq!(route("/p/x/_stats"), (String::new(), "/_stats".into()));
    }
}
