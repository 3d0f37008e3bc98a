//! What the tests of the real `parlance serve` binary share: a server
//! process on 127.0.0.1, its configuration, HTTP helpers, a replay server
//! standing in for model providers and tools.
#![allow(dead_code)]

pub mod run;

pub use parlance_testkit::replay;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use std::time::{Duration, Instant};

use replay::{ReplayServer, Reply, sse_frames};
use serde_json::{Value, json};

pub struct Server {
    pub child: Child,
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn temp_dir() -> std::path::PathBuf {
    // Every test builds reqwest clients: one TLS provider for the process.
    parlance_providers::transport::install_crypto();
    let d = std::env::temp_dir().join(format!(
        "parlance-serve-{}-{}",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn config(
    dir: &std::path::Path,
    provider_url: &str,
    tool_url: &str,
    tokens: &str,
) -> std::path::PathBuf {
    config_with(dir, provider_url, tool_url, tokens, &Extra::default())
}

/// Settings added to the test configuration: at the top level, in
/// `[store]`, in `[agents.support]`, and whole tables at the end.
#[derive(Default)]
pub struct Extra<'a> {
    pub top: &'a str,
    pub store: &'a str,
    pub agent: &'a str,
    pub tables: &'a str,
}

pub fn config_with(
    dir: &std::path::Path,
    provider_url: &str,
    tool_url: &str,
    tokens: &str,
    extra: &Extra,
) -> std::path::PathBuf {
    let Extra {
        top,
        store,
        agent,
        tables,
    } = extra;
    let text = format!(
        r#"
listen = "127.0.0.1:0"
{top}
[store]
url = "sqlite://{db}"
identity_dir = "{identity}"
{store}
{tokens}
[providers.mock]
format = "openai-chat"
base_url = "{provider_url}/v1"
api_key_env = "PARLANCE_TEST_NO_KEY"

[agents.support]
model = "mock:gpt-test"
instructions = "You help with orders."
tools = ["lookup_order", "refund"]
{agent}

[tools.lookup_order]
kind = "http"
url = "{tool_url}/lookup"
description = "Look up an order."
input_schema = '{{"type": "object", "properties": {{"id": {{"type": "string", "pattern": "^A-[0-9]+$"}}}}, "required": ["id"], "additionalProperties": false}}'

[tools.refund]
kind = "external"
description = "Refund an order (a person answers)."
input_schema = '{{"type": "object", "properties": {{"amount": {{"type": "number"}}}}, "required": ["amount"]}}'

{tables}
"#,
        db = dir.join("threads.db").display(),
        identity = dir.join("identity").display(),
    );
    let path = dir.join("parlance.toml");
    std::fs::write(&path, text).unwrap();
    path
}

pub fn start(config: &std::path::Path) -> Server {
    start_with_env(config, &[])
}

/// `parlance serve` with extra environment variables.
pub fn start_with_env(config: &std::path::Path, env: &[(&str, &str)]) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parlance"));
    cmd.args(["serve", "--config", config.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env("RUST_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    spawned(cmd)
}

pub fn chat(content: Value) -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
        "choices": [{"index": 0, "message": content, "finish_reason": if content["tool_calls"].is_array() { "tool_calls" } else { "stop" }}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
    )
}

pub fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
}

pub fn text(t: &str) -> Value {
    json!({"role": "assistant", "content": t})
}

pub async fn post(url: &str, path: &str, body: &Value, token: Option<&str>) -> (u16, Value) {
    let mut req = reqwest::Client::new()
        .post(format!("{url}{path}"))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

pub async fn get(url: &str, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut req = reqwest::Client::new().get(format!("{url}{path}"));
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (
        status,
        serde_json::from_str(&resp.text().await.unwrap()).unwrap_or(Value::Null),
    )
}

/// The same answer as a Chat Completions stream.
pub fn chat_stream(message: Value) -> Reply {
    let finish = if message["tool_calls"].is_array() {
        "tool_calls"
    } else {
        "stop"
    };
    let mut delta = message.clone();
    if let Some(calls) = delta["tool_calls"].as_array_mut() {
        for (i, c) in calls.iter_mut().enumerate() {
            c["index"] = json!(i);
        }
    }
    let chunk = |d: Value, f: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [{"index": 0, "delta": d, "finish_reason": f}]}).to_string()
    };
    let chunks = sse_frames(&[
        ("", chunk(delta, Value::Null)),
        ("", chunk(json!({}), json!(finish))),
        ("", "[DONE]".into()),
    ]);
    Reply::Sse { chunks, cut: false }
}

/// An assistant message calling several tools at once.
pub fn calls(list: &[(&str, &str, Value)]) -> Value {
    let calls: Vec<Value> = list
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": calls})
}

/// `parlance serve` with its standard error in a file (the logs), and
/// extra environment variables.
pub fn start_logged(
    config: &std::path::Path,
    env: &[(&str, &str)],
) -> (Server, std::path::PathBuf) {
    let log = config.with_extension(format!("{}.log", rand::random::<u32>()));
    let file = std::fs::File::create(&log).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parlance"));
    cmd.args(["serve", "--config", config.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::from(file));
    for (k, v) in env {
        cmd.env(k, v);
    }
    (spawned(cmd), log)
}

/// Reads the "listening on" line of a started server.
pub fn spawned(mut cmd: Command) -> Server {
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("parlance: listening on ")
        .unwrap_or_else(|| panic!("unexpected: {line}"))
        .to_string();
    Server { child, url }
}

/// Every (event, data) of an SSE body.
pub fn events(body: &str) -> Vec<(String, Value)> {
    parlance_providers::transport::parse_sse(body)
        .into_iter()
        .map(|(e, d)| (e, serde_json::from_str(&d).unwrap_or(Value::String(d))))
        .collect()
}

/// POSTs and reads the whole SSE answer.
pub async fn post_stream(
    url: &str,
    path: &str,
    body: &Value,
    token: Option<&str>,
) -> Vec<(String, Value)> {
    let mut req = reqwest::Client::new()
        .post(format!("{url}{path}"))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    events(&req.send().await.unwrap().text().await.unwrap())
}

/// Form-encodes `s` (what a browser sends in a form body).
pub fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The value of the hidden field `name` in a page.
pub fn hidden(html: &str, name: &str) -> String {
    let at = format!("name=\"{name}\" value=\"");
    let start = html.find(&at).unwrap_or_else(|| panic!("{name} in {html}")) + at.len();
    html[start..][..html[start..].find('"').unwrap()].to_string()
}

/// An anonymous inbox session (a server with no token configured hands
/// one out at `/ui/session`): a client that does not follow redirects,
/// and the session's cookie.
pub async fn anonymous_session(url: &str) -> (reqwest::Client, String) {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let session = client
        .get(format!("{url}/ui/session"))
        .send()
        .await
        .unwrap();
    let cookie = session.headers()["set-cookie"].to_str().unwrap();
    (client, cookie.split(';').next().unwrap().to_string())
}

/// An inbox page read in an anonymous session: its HTML, after a `200`.
pub async fn anonymous_page(url: &str, path: &str) -> String {
    let (client, cookie) = anonymous_session(url).await;
    let page = client
        .get(format!("{url}{path}"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200, "{path}");
    page.text().await.unwrap()
}

// ---- runs that must finish by themselves (resume.rs, temporal.rs) ----

pub async fn new_thread(url: &str) -> String {
    let (status, t) = post(url, "/v1/threads", &json!({}), None).await;
    assert_eq!(status, 201, "{t}");
    t["id"].as_str().unwrap().to_string()
}

/// Starts a run on `thread` and leaves it (its client is not needed).
pub fn start_run(url: &str, thread: &str) {
    let (url, body) = (
        url.to_string(),
        json!({"agent": "support", "input": "Where is A-17?", "thread_id": thread}),
    );
    // Its connection dies with the server: the error is expected.
    tokio::spawn(async move {
        let _ = reqwest::Client::new()
            .post(format!("{url}/v1/runs"))
            .json(&body)
            .send()
            .await;
    });
}

/// Kills the server (SIGKILL: no shutdown, no last write).
pub fn kill(mut server: Server) {
    server.child.kill().unwrap();
    server.child.wait().unwrap();
}

/// The thread once its only run is no longer running, and how long that
/// took; `within` at most.
pub async fn ended(url: &str, thread: &str, within: Duration) -> (Value, Duration) {
    let start = Instant::now();
    while start.elapsed() < within {
        let (_, t) = get(url, &format!("/v1/threads/{thread}"), None).await;
        if let Some(run) = t["runs"].as_array().and_then(|r| r.last())
            && run["status"] != "running"
        {
            return (t, start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the run on {thread} did not end within {within:?}")
}

/// Waits until the mock has received `n` requests.
pub async fn received(mock: &ReplayServer, n: usize) {
    for _ in 0..400 {
        if mock.received().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "the mock received {} requests, not {n}",
        mock.received().len()
    );
}
