//! The floor `parlance serve` is measured against: a hand-written axum +
//! reqwest server that answers `POST /v1/runs` with the benchmark's task
//! and nothing else (no store, no configuration, no validation library, no
//! canonical format): the chat request, the three `get_order` calls over
//! HTTP at once, the second chat request, the conversation back as JSON.
//! The same six HTTP exchanges a stateless run of `parlance serve` makes
//! (the client's request, two model requests, three tool requests), so
//! its CPU per run is what those exchanges cost on the machine.
//!
//! `peerbench-raw-server --port 0 --mock URL`; prints `peerbench-raw-server
//! listening on http://HOST:PORT` once ready. `bench/peerbench/server
//! --raw` runs it beside `parlance serve`.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use clap::Parser;
use parlance_peerbench as bench;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "A hand-written server of the benchmark's task, for comparison")]
struct Args {
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// 0 picks a free port (printed once listening).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The mock's base URL (the model at /v1/chat/completions, the tool at
    /// /tools/get_order).
    #[arg(long)]
    mock: String,
}

struct Raw {
    http: reqwest::Client,
    chat_url: String,
    tool_url: String,
    tools: Value,
}

/// The allocator `parlance` uses (crates/cli/src/main.rs): the comparison
/// is of the code.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

type Failure = (StatusCode, String);

fn bad(status: StatusCode, what: impl std::fmt::Display) -> Failure {
    (status, json!({"error": what.to_string()}).to_string())
}

impl Raw {
    async fn post(&self, url: &str, body: Vec<u8>) -> Result<Value, Failure> {
        let response = self
            .http
            .post(url)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| bad(StatusCode::BAD_GATEWAY, e))?;
        if !response.status().is_success() {
            return Err(bad(StatusCode::BAD_GATEWAY, response.status()));
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|e| bad(StatusCode::BAD_GATEWAY, e))?;
        serde_json::from_slice(&bytes).map_err(|e| bad(StatusCode::BAD_GATEWAY, e))
    }

    async fn chat(&self, messages: &[Value]) -> Result<Value, Failure> {
        let body = serde_json::to_vec(&json!({
            "model": bench::MODEL, "messages": messages, "tools": self.tools,
        }))
        .map_err(|e| bad(StatusCode::INTERNAL_SERVER_ERROR, e))?;
        let mut answer = self.post(&self.chat_url, body).await?;
        Ok(answer["choices"][0]["message"].take())
    }

    /// One tool call: its arguments checked, then sent to the tool.
    async fn call(&self, call: &Value) -> Result<Value, Failure> {
        let args: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or_default())
                .map_err(|e| bad(StatusCode::BAD_GATEWAY, e))?;
        if !args["order_id"].is_string() || args.as_object().is_none_or(|o| o.len() != 1) {
            return Err(bad(StatusCode::BAD_GATEWAY, "arguments: order_id"));
        }
        let body = serde_json::to_vec(&args).map_err(|e| bad(StatusCode::BAD_GATEWAY, e))?;
        let result = self.post(&self.tool_url, body).await?;
        Ok(json!({"role": "tool", "tool_call_id": call["id"], "content": result.to_string()}))
    }
}

async fn run(State(raw): State<Arc<Raw>>, body: Bytes) -> Result<String, Failure> {
    let request: Value =
        serde_json::from_slice(&body).map_err(|e| bad(StatusCode::BAD_REQUEST, e))?;
    let Some(input) = request["input"].as_str() else {
        return Err(bad(StatusCode::BAD_REQUEST, "input: a string is required"));
    };
    let mut messages = vec![
        json!({"role": "system", "content": bench::SYSTEM}),
        json!({"role": "user", "content": input}),
    ];
    loop {
        let message = raw.chat(&messages).await?;
        let calls = message["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        messages.push(message);
        if calls.is_empty() {
            break;
        }
        let results = futures::future::try_join_all(calls.iter().map(|c| raw.call(c))).await?;
        messages.extend(results);
    }
    Ok(json!({"status": "completed", "messages": &messages[1..]}).to_string())
}

async fn serve(args: Args) -> std::io::Result<()> {
    let mock = args.mock.trim_end_matches('/');
    let raw = Arc::new(Raw {
        http: reqwest::Client::new(),
        chat_url: format!("{mock}/v1/chat/completions"),
        tool_url: format!("{mock}/tools/get_order"),
        tools: json!([{"type": "function", "function": {
            "name": "get_order", "description": bench::TOOL_DESCRIPTION,
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                           "required": ["order_id"], "additionalProperties": false}}}]),
    });
    let app = Router::new()
        .route("/v1/runs", post(run))
        .route("/healthz", get(|| async { "ok" }))
        .with_state(raw);
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port)).await?;
    println!(
        "peerbench-raw-server listening on http://{}",
        listener.local_addr()?
    );
    axum::serve(listener, app).await
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    bench::raise_open_files_limit();
    parlance::providers::transport::install_crypto();
    bench::serve_main("peerbench-raw-server", serve(args))
}
