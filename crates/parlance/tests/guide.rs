//! The user guide's Rust examples (`examples/guide_*.rs`, included by the
//! pages of docs/guide), run as a reader runs them: each binary, against a
//! replay server standing in for the OpenAI API (`OPENAI_BASE_URL`) where
//! the example names a provider's model; each one's output is checked, and
//! so is what it sent. `cargo test` builds the examples first; `cargo test
//! --test guide` alone does not (then `cargo build -p parlance-ai --examples`).

use std::path::{Path, PathBuf};
use std::process::Command;

use parlance_testkit::replay::{ReplayServer, Reply, sse_frames};
use serde_json::{Value, json};

/// Every guide example, and whether it needs a feature this build lacks.
const EXAMPLES: &[&str] = &[
    "guide_approval",
    "guide_budgets",
    "guide_context",
    "guide_deploying",
    "guide_get_started",
    "guide_guardrails",
    "guide_local_model",
    "guide_mcp",
    "guide_messages",
    "guide_multi_turn",
    "guide_observability",
    "guide_providers",
    "guide_serving",
    "guide_streaming",
    "guide_structured_output",
    "guide_subagents",
    "guide_testing",
    "guide_threads",
    "guide_tools",
];

fn examples_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join("examples")
}

/// A fresh folder to run an example in (it may write files there).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("parlance-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs an example (with the replay server's URL, if any); its stdout.
async fn run(name: &'static str, server: Option<&ReplayServer>) -> String {
    run_with(name, server, &[]).await
}

/// `run`, with more variables set.
async fn run_with(
    name: &'static str,
    server: Option<&ReplayServer>,
    vars: &[(&str, &str)],
) -> String {
    let path = examples_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is not built: run `cargo build -p parlance-ai --examples` or `cargo test -p parlance-ai`",
        path.display()
    );
    let dir = scratch(name);
    let mut cmd = Command::new(path);
    cmd.current_dir(&dir);
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "PARLANCE_MODEL",
        "PARLANCE_STORE_URL",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    if let Some(server) = server {
        cmd.env("OPENAI_API_KEY", "sk-test")
            .env("OPENAI_BASE_URL", format!("{}/v1", server.url));
    }
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name} failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn chat(message: Value, finish: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}}),
    )
}

fn text(content: &str) -> Reply {
    chat(json!({"role": "assistant", "content": content}), "stop")
}

fn calls(list: &[(&str, &str, Value)]) -> Reply {
    let calls: Vec<Value> = list
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function",
                "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    chat(
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
        "tool_calls",
    )
}

/// Chat Completions chunks, as a stream.
fn stream(deltas: &[Value], finish: &str) -> Reply {
    let chunk = |delta: &Value, finish: Option<&str>| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let mut frames: Vec<(&str, String)> = deltas.iter().map(|d| ("", chunk(d, None))).collect();
    frames.push(("", chunk(&json!({}), Some(finish))));
    frames.push((
        "",
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
            "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}})
        .to_string(),
    ));
    frames.push(("", "[DONE]".to_string()));
    Reply::Sse {
        chunks: sse_frames(&frames),
        cut: false,
    }
}

fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn tool_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn every_guide_example_has_a_test_here() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let stem = name.strip_suffix(".rs")?.to_string();
            stem.starts_with("guide_").then_some(stem)
        })
        .collect();
    found.sort();
    assert_eq!(found, EXAMPLES);
}

#[tokio::test]
async fn get_started() {
    let server = ReplayServer::start(vec![
        calls(&[("c1", "get_order", json!({"order_id": "A-1001"}))]),
        text("Order A-1001 has shipped."),
    ])
    .await;
    let out = run("guide_get_started", Some(&server)).await;
    assert_eq!(out, "Order A-1001 has shipped.\ncompleted 40 20\n");
    let got = server.received();
    assert_eq!(
        tool_texts(&got[1].body),
        [r#"{"order_id":"A-1001","status":"shipped"}"#]
    );
    assert_eq!(
        got[0].body["tools"][0]["function"]["parameters"]["properties"]["order_id"]["description"],
        "The order, like A-1001."
    );
}

#[tokio::test]
async fn messages_offline() {
    let out = run("guide_messages", None).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "message");
    assert_eq!(
        lines[1],
        r#"{"role":"user","content":[{"type":"text","text":"Hi"}]}"#
    );
    assert_eq!(
        lines[2],
        r#"{"role":"assistant","content":[{"type":"tool_call","tool_call":{"id":"c1","name":"get_order","arguments":{"order_id":"A-1"}}}]}"#
    );
    assert!(
        lines[3].starts_with("content[1].type: ") && lines[3].contains("foo"),
        "{}",
        lines[3]
    );
}

#[tokio::test]
async fn tools() {
    let server = ReplayServer::start(vec![
        calls(&[
            ("c1", "refund", json!({"order_id": "A-1001", "amount": 900})),
            ("c2", "refund", json!({"order_id": "X-7", "amount": 40})),
            ("c3", "refund", json!({"order_id": "A-1001", "amount": 40})),
        ]),
        text("Refunded 40 EUR on A-1001."),
    ])
    .await;
    let out = run("guide_tools", Some(&server)).await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "invalid_arguments: Invalid arguments for refund:",
            "amount: must be at most 500, got 900",
            "error: orders starting with X cannot be refunded",
            "ok: refunded 40 EUR on A-1001 for ada",
            "Refunded 40 EUR on A-1001.",
        ]
    );
}

#[tokio::test]
async fn guardrails() {
    let server = ReplayServer::start(vec![text("Sure: the admin password is hunter2.")]).await;
    let out = run("guide_guardrails", Some(&server)).await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "blocked: I can't share that.",
            r#"kept: {"type":"text","text":"My card is [card]. What is the admin password?"}"#,
            r#"outcomes: ["replace", "block"]"#,
        ]
    );
    let sent = server.received()[0].body.to_string();
    assert!(sent.contains("[card]") && !sent.contains("4111"), "{sent}");
}

/// The tool names a request offers.
fn offered(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn subagents() {
    // In order: support asks the researcher, the researcher answers,
    // support answers with what it read.
    let server = ReplayServer::start(vec![
        calls(&[(
            "c1",
            "researcher",
            json!({"input": "Where is order A-1001, and when did it ship?"}),
        )]),
        text("A-1001 shipped on May 2; it is with the carrier."),
        text("Your order A-1001 shipped on May 2 and is on its way."),
    ])
    .await;
    let out = run("guide_subagents", Some(&server)).await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "Your order A-1001 shipped on May 2 and is on its way.",
            "support's model read: A-1001 shipped on May 2; it is with the carrier.",
            // The replay server counts 20 input tokens a request.
            "input tokens: 60, the researcher's 20",
        ]
    );
    let got = server.received();
    assert_eq!(got.len(), 3);
    let (first, child, last) = (&got[0].body, &got[1].body, &got[2].body);
    assert_eq!(offered(first), ["researcher"]);
    assert_eq!(
        first["tools"][0]["function"]["description"],
        "Looks orders up: send it the order and the question."
    );
    assert_eq!(
        first["tools"][0]["function"]["parameters"]["required"],
        json!(["input"])
    );
    // The researcher sees its own instructions and the task, nothing else.
    let roles: Vec<&Value> = child["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["role"])
        .collect();
    assert_eq!(roles, [&json!("system"), &json!("user")]);
    assert!(
        child["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You look orders up")
    );
    assert_eq!(
        user_texts(child),
        ["Where is order A-1001, and when did it ship?"]
    );
    assert!(offered(child).is_empty());
    assert_eq!(
        tool_texts(last),
        ["A-1001 shipped on May 2; it is with the carrier."]
    );
}

#[tokio::test]
async fn budgets() {
    let server = ReplayServer::start(vec![
        calls(&[("c1", "get_order", json!({"order_id": "A-1"}))]),
        calls(&[("c2", "get_order", json!({"order_id": "A-2"}))]),
        text("A-1 and A-2 have shipped; I could not check A-3."),
    ])
    .await;
    let out = run("guide_budgets", Some(&server)).await;
    assert_eq!(
        out,
        "budget_exhausted - the run's budget is exhausted: 2 of 2 tool calls\nlast answer: A-1 and A-2 have shipped; I could not check A-3.\n"
    );
    let got = server.received();
    assert_eq!(got.len(), 3);
    assert!(
        got[2]
            .body
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(Vec::is_empty))
    );
}

#[tokio::test]
async fn context() {
    let summary = "The user asked six questions and settled on plan B.";
    let server = ReplayServer::start(vec![text(summary), text("You settled on plan B.")]).await;
    let out = run("guide_context", Some(&server)).await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            "summarized: the first 10 of 12 messages",
            &format!("summary: {summary}"),
            "answer: You settled on plan B.",
        ]
    );
    let got = server.received();
    let transcript = got[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(transcript.contains("Question 0:") && !transcript.contains("Question 5:"));
    let sent = got[1].body["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 4);
    assert!(sent[0]["content"].as_str().unwrap().ends_with(summary));
    assert!(
        sent[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("Question 5:")
    );
}

/// Against the MCP server of the repository's tests (testdata/mcp, the
/// official Python SDK), over stdio.
#[cfg(feature = "mcp")]
#[tokio::test]
async fn mcp() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var("PARLANCE_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo.join("target/mcp-venv/bin/python"));
    if !python.exists() {
        assert!(
            std::env::var("PARLANCE_REQUIRE_MCP").as_deref() != Ok("1"),
            "PARLANCE_REQUIRE_MCP=1 but there is no MCP test server interpreter at {}",
            python.display()
        );
        eprintln!("skipped: no MCP test server (scripts/mcp-test-server installs it)");
        return;
    }
    let server = ReplayServer::start(vec![
        calls(&[("c1", "calc_add", json!({"a": 2, "b": 3}))]),
        text("2 + 3 = 5."),
    ])
    .await;
    let dir = scratch("mcp");
    let log = dir.join("calls.jsonl");
    let command = format!(
        "{} {} --log {}",
        python.display(),
        repo.join("testdata/mcp/server.py").display(),
        log.display()
    );
    let out = run_with("guide_mcp", Some(&server), &[("MCP_COMMAND", &command)]).await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [r#"called: calc_add {"a":2,"b":3}"#, "2 + 3 = 5."]
    );
    let sent = server.received();
    let offered: Vec<&str> = sent[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["calc_add"]);
    let logged = std::fs::read_to_string(&log).unwrap();
    let logged: Value = serde_json::from_str(logged.trim()).unwrap();
    assert_eq!(logged, json!({"tool": "add", "args": {"a": 2, "b": 3}}));
}

#[tokio::test]
async fn approval() {
    let server = ReplayServer::start(vec![
        calls(&[("c1", "refund", json!({"order_id": "A-1001", "amount": 250}))]),
        text("Refunded 250 EUR."),
    ])
    .await;
    let out = run("guide_approval", Some(&server)).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "requires_approval");
    assert!(lines[1].starts_with("waiting: refund {"), "{}", lines[1]);
    assert!(lines[1].contains(r#""amount":250"#) && lines[1].contains(r#""order_id":"A-1001""#));
    assert_eq!(lines[2], "completed Refunded 250 EUR.");
    let got = server.received();
    assert_eq!(tool_texts(&got[1].body), ["refunded 250 EUR on A-1001"]);
}

#[tokio::test]
async fn multi_turn() {
    let server = ReplayServer::start(vec![text("Hello Ada."), text("You are Ada.")]).await;
    let out = run("guide_multi_turn", Some(&server)).await;
    assert_eq!(
        out,
        "You are Ada.\n2 messages in the first turn, 2 in the second\n"
    );
    assert_eq!(
        user_texts(&server.received()[1].body),
        ["I am Ada.", "Who am I?"]
    );
}

#[cfg(feature = "store")]
#[tokio::test]
async fn threads() {
    let server = ReplayServer::start(vec![text("Hello Ada."), text("You are Ada.")]).await;
    let out = run("guide_threads", Some(&server)).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "You are Ada.");
    assert!(
        lines[1].starts_with("4 messages, 2 runs on "),
        "{}",
        lines[1]
    );
    assert_eq!(
        user_texts(&server.received()[1].body),
        ["I am Ada.", "Who am I?"]
    );
}

/// The spans reach a collector speaking OTLP's JSON (a replay server
/// recording what it receives), under the example's service name.
#[cfg(feature = "otel")]
#[tokio::test]
async fn observability() {
    let provider = ReplayServer::start(vec![
        calls(&[("c1", "get_order", json!({"order_id": "A-1001"}))]),
        text("A-1001 has shipped."),
    ])
    .await;
    let collector = ReplayServer::start(vec![Reply::json(200, &json!({})); 8]).await;
    let out = run_with(
        "guide_observability",
        Some(&provider),
        &[
            ("OTLP_ENDPOINT", collector.url.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
    )
    .await;
    assert_eq!(out, "A-1001 has shipped.\n");
    let mut spans = Vec::new();
    for got in collector.received() {
        assert_eq!(got.path, "/v1/traces");
        for rs in got.body["resourceSpans"].as_array().unwrap() {
            let service = rs["resource"]["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["key"] == "service.name")
                .map(|a| a["value"]["stringValue"].clone());
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for s in ss["spans"].as_array().unwrap() {
                    spans.push((service.clone().unwrap(), s["name"].clone()));
                }
            }
        }
    }
    spans.sort_by_key(|(_, n)| n.to_string());
    spans.dedup();
    assert_eq!(
        spans,
        [
            (json!("orders"), json!("chat gpt-4o-mini")),
            (json!("orders"), json!("execute_tool get_order")),
            (json!("orders"), json!("invoke_agent support")),
        ]
    );
}

/// On SQLite (the default URL), and on PostgreSQL when the tests have one.
#[cfg(feature = "store")]
#[tokio::test]
async fn deploying() {
    let out = run("guide_deploying", None).await;
    assert_eq!(out, "sqlite {\"customer\":\"ada\"} 0\n");
    match std::env::var("PARLANCE_TEST_POSTGRES_URL") {
        Ok(url) => {
            let out = run_with("guide_deploying", None, &[("PARLANCE_STORE_URL", &url)]).await;
            let scheme = url.split(':').next().unwrap();
            assert_eq!(out, format!("{scheme} {{\"customer\":\"ada\"}} 0\n"));
        }
        Err(_) => assert!(
            std::env::var_os("PARLANCE_REQUIRE_POSTGRES").is_none(),
            "PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not"
        ),
    }
}

#[tokio::test]
async fn streaming() {
    let server = ReplayServer::start(vec![
        stream(
            &[
                json!({"role": "assistant"}),
                json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                    "function": {"name": "get_order", "arguments": "{\"order_id\":"}}]}),
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"A-1001\"}"}}]}),
            ],
            "tool_calls",
        ),
        stream(
            &[
                json!({"role": "assistant"}),
                json!({"content": "A-1001 has"}),
                json!({"content": " shipped."}),
            ],
            "stop",
        ),
    ])
    .await;
    let out = run("guide_streaming", Some(&server)).await;
    assert_eq!(
        out,
        "[get_order: ok]\nA-1001 has shipped.\ncompleted, 10 tokens out\n"
    );
    assert!(
        server
            .received()
            .iter()
            .all(|r| r.body["stream"] == json!(true))
    );
}

#[tokio::test]
async fn providers() {
    let server = ReplayServer::start(vec![text("Hello! How can I help?")]).await;
    let out = run("guide_providers", Some(&server)).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Hello! How can I help?");
    assert_eq!(lines[1], r#"["user", "assistant", "user"]"#);
    assert!(lines.len() >= 3, "{out}");
    assert!(
        lines[2..].iter().all(|l| l.starts_with("dropped: ")),
        "{out}"
    );
    assert!(lines[2].contains("thinking"), "{out}");
    assert_eq!(
        server.received()[0].header("authorization"),
        Some("Bearer sk-test")
    );
}

#[tokio::test]
async fn structured_output() {
    let server = ReplayServer::start(vec![text(
        r#"{"order_id": "A-1001", "status": "shipped", "total_eur": 42.5}"#,
    )])
    .await;
    let out = run("guide_structured_output", Some(&server)).await;
    assert_eq!(out, "A-1001 shipped 42.5\n");
    let got = server.received();
    assert_eq!(
        got[0].body["response_format"]["json_schema"]["name"],
        "Order"
    );
}

#[tokio::test]
async fn testing_offline() {
    let out = run("guide_testing", None).await;
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            r#"TestModel: {"weather":"Sunny in a"}"#,
            "FunctionModel: offered: weather",
            "ScriptedModel: Hello! Again. 0",
            "Replay: It is sunny in Oslo.",
            r#"Changed: exchange 1 of 2: the request is not the recorded one: messages[0].content[0].text: recorded "Weather in Oslo?", got "And in Rome?" (re-record the cassette if the change is meant)"#,
        ]
    );
}

/// The embedded model, for real: only where the model file is (scripts/test
/// fetches it and sets PARLANCE_REQUIRE_MODEL).
#[cfg(feature = "local")]
#[tokio::test]
async fn local_model() {
    let path = parlance::local::default_model_path();
    if !path.exists() {
        assert!(
            std::env::var_os("PARLANCE_REQUIRE_MODEL").is_none(),
            "PARLANCE_REQUIRE_MODEL is set but {} is missing",
            path.display()
        );
        eprintln!("skipped: no local model at {}", path.display());
        return;
    }
    let out = run("guide_local_model", None).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("model file: {}", path.display()));
    assert_eq!(lines[1], "completed local true");
    assert!(!lines[2..].concat().trim().is_empty(), "{out}");
}

/// A POST with a JSON body over plain HTTP/1.1; the answer's JSON body.
#[cfg(feature = "server")]
async fn post(base: &str, path: &str, body: &Value) -> Value {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let host = base.trim_start_matches("http://");
    let mut conn = tokio::net::TcpStream::connect(host).await.unwrap();
    let body = body.to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).await.unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 2"), "{answer}");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

/// The embedded server, with the guide's configuration (the one the
/// Python and TypeScript clients of the Serving page talk to).
#[cfg(feature = "server")]
#[tokio::test]
async fn serving() {
    use std::io::{BufRead, BufReader};

    /// Ends the server however the test ends.
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    let model = ReplayServer::start(vec![
        calls(&[("c1", "get_order", json!({"order_id": "A-1001"}))]),
        text("A-1001 has shipped."),
        text("You're welcome."),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::json(
        200,
        &json!({"order_id": "A-1001", "status": "shipped"}),
    )])
    .await;
    let dir = scratch("guide_serving_test");
    let config =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide/examples/parlance.toml");
    let path = examples_dir().join(format!("guide_serving{}", std::env::consts::EXE_SUFFIX));
    let mut server = Command::new(path)
        .arg(config)
        .current_dir(&dir)
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", format!("{}/v1", model.url))
        .env("PARLANCE_LISTEN", "127.0.0.1:0")
        .env(
            "PARLANCE_STORE_URL",
            format!("sqlite://{}/serve.db", dir.display()),
        )
        .env(
            "PARLANCE__TOOLS__GET_ORDER__URL",
            format!("{}/orders", tool.url),
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = server.stdout.take().unwrap();
    let server = Killed(server);
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line.trim_end().to_string()
    })
    .await
    .unwrap();
    let base = line
        .strip_prefix("parlance: listening on ")
        .unwrap_or_else(|| panic!("the server said {line:?}"))
        .to_string();

    let thread = post(
        &base,
        "/v1/threads",
        &json!({"metadata": {"customer": "ada"}}),
    )
    .await;
    let thread = thread["id"].as_str().unwrap().to_string();
    let first = post(
        &base,
        "/v1/runs",
        &json!({"agent": "support", "input": "Where is A-1001?", "thread_id": thread}),
    )
    .await;
    assert_eq!(first["status"], "completed");
    assert_eq!(first["output"], "A-1001 has shipped.");
    let again = post(
        &base,
        "/v1/runs",
        &json!({"agent": "support", "input": "Thanks!", "thread_id": thread}),
    )
    .await;
    assert_eq!(again["output"], "You're welcome.");
    assert_eq!(tool.received()[0].body, json!({"order_id": "A-1001"}));
    assert_eq!(
        user_texts(&model.received()[2].body),
        ["Where is A-1001?", "Thanks!"]
    );
    drop(server);
    let _ = std::fs::remove_dir_all(dir);
}
