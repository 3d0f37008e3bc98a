//! What the MCP tests share: the test server (testdata/mcp/server.py, on
//! the official Python SDK, installed by scripts/mcp-test-server), run
//! over stdio or streamable HTTP, the log of the calls it received, and a
//! scripted model's messages.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use parlance_format::{Block, FinishReason, Message, Response, Role, ToolResult};
use parlance_mcp::{McpServer, McpServerBuilder};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The test server's script.
pub fn script() -> String {
    repo().join("testdata/mcp/server.py").display().to_string()
}

/// The Python with the MCP SDK, or `None` (the test then passes, saying
/// why, unless `PARLANCE_REQUIRE_MCP=1`).
pub fn python() -> Option<String> {
    let path = std::env::var("PARLANCE_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo().join("target/mcp-venv/bin/python"));
    if path.exists() {
        return Some(path.display().to_string());
    }
    assert!(
        std::env::var("PARLANCE_REQUIRE_MCP").as_deref() != Ok("1"),
        "PARLANCE_REQUIRE_MCP=1 but {} is missing: run scripts/mcp-test-server",
        path.display()
    );
    eprintln!(
        "skipped: {} is missing (run scripts/mcp-test-server)",
        path.display()
    );
    None
}

/// The calls a server received, one JSON object per line.
pub struct CallLog {
    pub path: PathBuf,
}

impl CallLog {
    /// A new, empty log under cargo's scratch folder for tests.
    pub fn new() -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("mcp-calls-{}-{n}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        CallLog { path }
    }

    /// The calls, as `{"tool": ..., "args": {...}}`.
    pub fn calls(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub fn tools(&self) -> Vec<String> {
        self.calls()
            .iter()
            .map(|c| c["tool"].as_str().unwrap().to_string())
            .collect()
    }
}

/// How the test reaches the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http,
}

/// A server over HTTP, run by the test (killed on drop).
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the server on streamable HTTP and waits until it answers.
pub fn http_server(python: &str, log: &CallLog, token: Option<&str>) -> HttpServer {
    let port = free_port();
    let mut cmd = Command::new(python);
    cmd.arg(script())
        .arg("--log")
        .arg(&log.path)
        .arg("--http")
        .arg(port.to_string())
        .stdin(Stdio::null());
    if let Some(t) = token {
        cmd.arg("--token").arg(t);
    }
    let child = cmd.spawn().expect("start the HTTP test server");
    let server = HttpServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the HTTP test server did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// The test server as an [`McpServer`] builder, and for HTTP the process
/// behind it (keep it alive for the test).
pub fn server(
    name: &str,
    transport: Transport,
    python: &str,
    log: &CallLog,
) -> (McpServerBuilder, Option<HttpServer>) {
    match transport {
        Transport::Stdio => (
            McpServer::stdio(name, python).args([
                script(),
                "--log".into(),
                log.path.display().to_string(),
            ]),
            None,
        ),
        Transport::Http => {
            let http = http_server(python, log, Some("s3cret"));
            (
                McpServer::http(name, http.url.clone()).bearer("s3cret"),
                Some(http),
            )
        }
    }
}

/// The model asks for these calls (id, tool, arguments).
pub fn calls(list: &[(&str, &str, Value)]) -> Message {
    let mut m = Message::new(
        Role::Assistant,
        list.iter()
            .map(|(id, name, args)| Block::tool_call(*id, *name, args.clone()))
            .collect(),
    );
    m.finish_reason = Some(FinishReason::ToolCalls);
    m
}

/// The model's final answer.
pub fn says(text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.finish_reason = Some(FinishReason::Stop);
    m
}

/// The tool results of a response, in order.
pub fn results(r: &Response) -> Vec<ToolResult> {
    r.messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| b.as_tool_result().cloned())
        .collect()
}

impl Drop for CallLog {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
