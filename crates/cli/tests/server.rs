//! The real `parlance serve` binary on 127.0.0.1, driven over HTTP, with
//! its model provider pointed at a local replay server.

mod common;

use std::process::Command;

use common::replay::{ReplayServer, Reply, sse_frames};
use common::*;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_an_http_tool_and_stateless_turns() {
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        chat(text("Order A-17 has shipped.")),
        chat(text("You're welcome.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::json(
        200,
        &json!({"id": "A-17", "status": "shipped"}),
    )])
    .await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, &tool.url, ""));

    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Where is order A-17?"}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "completed");
    assert_eq!(r["output"], "Order A-17 has shipped.");
    assert_eq!(r["messages"].as_array().unwrap().len(), 4);
    assert_eq!(
        r["messages"][2]["content"][0]["tool_result"]["content"][0]["json"],
        json!({"id": "A-17", "status": "shipped"})
    );
    // The tool server got the validated arguments.
    assert_eq!(tool.received()[0].body, json!({"id": "A-17"}));

    // Stateless multi-turn: the whole previous response as a turn.
    let (status, r2) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Thanks!", "turns": [r]}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r2}");
    let sent = &provider.received()[2].body["messages"];
    assert_eq!(
        sent.as_array().unwrap().len(),
        1 + 4 + 1,
        "system + the first turn + the new input"
    );
    assert_eq!(sent[5], json!({"role": "user", "content": "Thanks!"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_paused_on_one_server_is_resumed_by_another() {
    let provider = ReplayServer::start(vec![
        chat(call("call_9", "refund", json!({"amount": 40}))),
        chat(text("Refund done.")),
    ])
    .await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, "http://127.0.0.1:9", "");
    let first = start(&cfg);
    let (status, thread) = post(
        &first.url,
        "/v1/threads",
        &json!({"metadata": {"customer": 7}}),
        None,
    )
    .await;
    assert_eq!(status, 201, "{thread}");
    let thread_id = thread["id"].as_str().unwrap();
    let (status, paused) = post(
        &first.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 40", "thread_id": thread_id}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["status"], "requires_approval");
    let pending = &paused["pending"][0];
    // A second server process sharing the store answers the external tool.
    let second = start(&cfg);
    drop(first);
    let decision = json!({"decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"], "decision": "answered",
        "content": [{"type": "text", "text": "refund #991 issued"}]}]});
    let run_id = paused["id"].as_str().unwrap();
    let (status, done) = post(
        &second.url,
        &format!("/v1/runs/{run_id}/decisions"),
        &decision,
        None,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed");
    let (_, t) = get(&second.url, &format!("/v1/threads/{thread_id}"), None).await;
    let messages = t["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(
        messages[2]["message"]["content"][0]["tool_result"]["approval"]["decision"],
        "answered"
    );
    // Decided once: a second time is refused with the path.
    let (status, e) = post(
        &second.url,
        &format!("/v1/runs/{run_id}/decisions"),
        &decision,
        None,
    )
    .await;
    assert_eq!(status, 409, "{e}");
    assert_eq!(e["error"]["code"], "conflict");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_answers_with_server_sent_events() {
    let chunks = sse_frames(&[
        ("", json!({"id": "c1", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]}).to_string()),
        ("", json!({"id": "c1", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [{"index": 0, "delta": {"content": "lo!"}, "finish_reason": "stop"}]}).to_string()),
        ("", "[DONE]".to_string()),
    ]);
    let provider = ReplayServer::start(vec![Reply::Sse { chunks, cut: false }]).await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", ""));
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/runs", server.url))
        .header("content-type", "application/json")
        .body(json!({"agent": "support", "input": "Hi", "stream": true}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let body = resp.text().await.unwrap();
    let events: Vec<(String, Value)> = parlance_providers::transport::parse_sse(&body)
        .into_iter()
        .map(|(e, d)| (e, serde_json::from_str(&d).unwrap()))
        .collect();
    let text: String = events
        .iter()
        .filter(|(e, _)| e == "text_delta")
        .map(|(_, d)| d["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, "Hello!");
    let (last, response) = events.last().unwrap();
    assert_eq!(last, "run_completed");
    assert_eq!(response["output"], "Hello!");
    assert_eq!(provider.received()[0].body["stream"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_a_run_on_a_thread_stores_it_too() {
    let chunks = sse_frames(&[
        ("", json!({"id": "c1", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Stored and streamed."}, "finish_reason": "stop"}]}).to_string()),
        ("", "[DONE]".to_string()),
    ]);
    let provider = ReplayServer::start(vec![Reply::Sse { chunks, cut: false }]).await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", ""));
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let id = t["id"].as_str().unwrap();
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/runs", server.url))
        .header("content-type", "application/json")
        .body(
            json!({"agent": "support", "input": "Hi", "thread_id": id, "stream": true}).to_string(),
        )
        .send()
        .await
        .unwrap();
    let body = resp.text().await.unwrap();
    let events = parlance_providers::transport::parse_sse(&body);
    assert_eq!(events.last().unwrap().0, "run_completed");
    let (_, thread) = get(&server.url, &format!("/v1/threads/{id}"), None).await;
    assert_eq!(thread["messages"].as_array().unwrap().len(), 2);
    assert_eq!(
        thread["runs"][0]["status"], "completed",
        "the outcome is stored before run_completed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_invalid_requests_and_the_openapi_document() {
    let provider = ReplayServer::start(vec![]).await;
    let dir = temp_dir();
    let tokens = r#"
[[auth.tokens]]
token = "tok-a"
subject = "alice"
[[auth.tokens]]
token = "tok-b"
subject = "bob"
"#;
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", tokens));
    let (status, e) = post(&server.url, "/v1/threads", &json!({}), None).await;
    assert_eq!(
        (status, e["error"]["code"].as_str()),
        (401, Some("unauthorized"))
    );
    let (status, _) = post(&server.url, "/v1/threads", &json!({}), Some("wrong")).await;
    assert_eq!(status, 401);
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), Some("tok-a")).await;
    let id = t["id"].as_str().unwrap();
    let (status, _) = get(&server.url, &format!("/v1/threads/{id}"), Some("tok-b")).await;
    assert_eq!(status, 404, "a token sees only its own threads");
    let (_, page) = get(&server.url, "/v1/threads", Some("tok-b")).await;
    assert_eq!(page["items"], json!([]));
    let (status, _) = get(&server.url, &format!("/v1/threads/{id}"), Some("tok-a")).await;
    assert_eq!(status, 200);

    for (body, expected) in [
        (
            json!({"agent": "support", "input": [{"role": "robot", "content": "hi"}]}),
            "input[0].role: unknown role \"robot\"",
        ),
        (
            json!({"agent": "support", "input": [{"role": "user", "content": [{"type": "txt"}]}]}),
            "input[0].content[0].type: unknown block type \"txt\"",
        ),
        (
            json!({"agent": "nobody", "input": "hi"}),
            "agent: no agent named \"nobody\"",
        ),
        (
            json!({"agent": "support", "input": "hi", "turns": [{"messages": [{"role": "user"}]}]}),
            "turns[0].messages[0].content: required field missing",
        ),
        (
            json!({"agent": "support", "input": "hi", "colour": 1}),
            "unknown field `colour`",
        ),
        (json!({"agent": "support"}), "missing field `input`"),
    ] {
        let (status, e) = post(&server.url, "/v1/runs", &body, Some("tok-a")).await;
        assert_eq!(status, 400, "{body}: {e}");
        assert_eq!(e["error"]["code"], "invalid_request");
        assert!(
            e["error"]["message"].as_str().unwrap().contains(expected),
            "{body}: {e}"
        );
    }
    let big = "x".repeat(3 * 1024 * 1024);
    let (status, e) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": big}),
        Some("tok-a"),
    )
    .await;
    assert_eq!(status, 413, "{e}");

    let (status, served) = get(&server.url, "/openapi.json", None).await;
    assert_eq!(status, 200);
    let checked_in: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../schema/openapi.json"
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(
        served, checked_in,
        "schema/openapi.json is stale: run `parlance serve --openapi > schema/openapi.json`"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_bodies_never_get_a_5xx() {
    let provider = ReplayServer::start(vec![]).await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", ""));
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let id = t["id"].as_str().unwrap().to_string();
    let seeds = [
        json!({"agent": "support", "input": "hi", "thread_id": id}),
        json!({"decisions": [{"tool_call_id": "c", "digest": "d", "decision": "approved"}]}),
        json!({"metadata": {"a": 1}}),
    ];
    let paths = [
        "/v1/runs".to_string(),
        "/v1/runs/run_x/decisions".to_string(),
        "/v1/threads".to_string(),
    ];
    let client = reqwest::Client::new();
    let mut sent = 0;
    for round in 0..150u64 {
        for (path, seed) in paths.iter().zip(&seeds) {
            let text = seed.to_string();
            let bytes = text.as_bytes();
            // Mutations: cut, flip a byte, splice in junk, wrong types.
            let body: Vec<u8> = match round % 5 {
                0 => bytes[..(round as usize * 7) % bytes.len()].to_vec(),
                1 => {
                    let mut b = bytes.to_vec();
                    let i = (round as usize * 13) % b.len();
                    let junk = b"{}[]\":,x0\\\xff";
                    b[i] = junk[round as usize % junk.len()];
                    b
                }
                2 => json!({"agent": round, "input": [null, 1, "x"], "turns": "no", "decisions": {"a": 1}}).to_string().into_bytes(),
                3 => format!("[{text}, {text}]").into_bytes(),
                _ => vec![b'{'; (round as usize % 50) + 1],
            };
            let resp = client
                .post(format!("{}{path}", server.url))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            let status = resp.status().as_u16();
            assert!(status < 500, "{path} answered {status} to round {round}");
            let e: Value = serde_json::from_str(&resp.text().await.unwrap()).unwrap_or(Value::Null);
            if status >= 400 {
                assert!(
                    e["error"]["code"].is_string(),
                    "{path}: errors are JSON with a code: {e}"
                );
            }
            sent += 1;
        }
    }
    assert_eq!(sent, 450);
    // Query strings, paths and methods too.
    for (method, path) in [
        ("GET", "/v1/threads?limit=abc"),
        ("GET", "/v1/threads?limit=-1&after=%ff"),
        ("GET", "/v1/threads/nope"),
        ("DELETE", "/v1/threads/nope"),
        ("GET", "/v1/nothing"),
        ("PUT", "/v1/runs"),
        ("POST", "/v1/runs/x/decisions/y"),
    ] {
        let resp = client
            .request(method.parse().unwrap(), format!("{}{path}", server.url))
            .send()
            .await
            .unwrap();
        let status = resp.status().as_u16();
        assert!((400..500).contains(&status), "{method} {path}: {status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parlance_run_streams_the_answer_and_shows_tool_activity() {
    let provider = ReplayServer::start(vec![
        chat_stream(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        chat_stream(text("Order A-17 has shipped.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::json(200, &json!({"status": "shipped"}))]).await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, &tool.url, "");
    let cfg = cfg.to_str().unwrap().to_string();
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        common::run::parlance(
            &[
                "run",
                "--config",
                &cfg,
                "--agent",
                "support",
                "Where is order A-17?",
            ],
            "",
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "Order A-17 has shipped.");
    assert!(err.contains("call lookup_order {\"id\":\"A-17\"}"), "{err}");
    assert!(err.contains("← lookup_order ok"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parlance_chat_asks_for_approval_at_the_prompt() {
    let provider = ReplayServer::start(vec![
        chat(call("call_9", "refund", json!({"amount": 40}))),
        chat(text("Refund sent.")),
    ])
    .await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, "http://127.0.0.1:9", "");
    let cfg = cfg.to_str().unwrap().to_string();
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        common::run::parlance(
            &["chat", "--config", &cfg, "--agent", "support"],
            "Refund my 40 EUR\nn\nrefund #77 issued\n\n",
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("refund {\"amount\":40} — [a]pprove, [r]eject, [e]dit, a[n]swer?"),
        "{err}"
    );
    assert_eq!(out.trim(), "Refund sent.");
    // The reviewer's answer reached the model as the tool's result.
    let sent = &provider.received()[1].body["messages"];
    assert_eq!(
        sent.as_array().unwrap().last().unwrap()["content"],
        "refund #77 issued"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_runs_in_flight_finish() {
    let provider = ReplayServer::start(vec![Reply::Delayed(
        800,
        Box::new(chat(text("Finished despite the shutdown."))),
    )])
    .await;
    let dir = temp_dir();
    let mut server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", ""));
    let url = server.url.clone();
    let in_flight = tokio::spawn(async move {
        post(
            &url,
            "/v1/runs",
            &json!({"agent": "support", "input": "Hi"}),
            None,
        )
        .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let (status, r) = in_flight.await.unwrap();
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["output"], "Finished despite the shutdown.");
    let exit = tokio::task::spawn_blocking(move || server.child.wait().unwrap())
        .await
        .unwrap();
    assert!(exit.success(), "the server exits cleanly: {exit:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_pull_from_a_url() {
    let files = ReplayServer::start(vec![
        Reply::Full {
            status: 200,
            headers: vec![],
            body: "GGUF\u{3}tiny model".into(),
        },
        Reply::Full {
            status: 200,
            headers: vec![],
            body: "<html>not a model</html>".into(),
        },
    ])
    .await;
    let cache = temp_dir().join("models");
    let url = format!("{}/files/tiny.gguf", files.url);
    let (cache2, url2) = (cache.clone(), url);
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_parlance"))
            .args(["model", "pull", "--url", &url2])
            .env("PARLANCE_MODELS", &cache2)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(cache.join("tiny.gguf")).unwrap(),
        b"GGUF\x03tiny model"
    );
    let page = format!("{}/files/page.gguf", files.url);
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_parlance"))
            .args(["model", "pull", "--url", &page])
            .env("PARLANCE_MODELS", &cache)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a GGUF model file"));
    assert_eq!(files.received()[0].path, "/files/tiny.gguf");
}

/// An agent's own price table (`prices` in its TOML) prices its messages
/// before the built-in table; a request cannot name a file on the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_price_table_prices_its_runs() {
    let provider = ReplayServer::start(vec![chat(text("Hi."))]).await;
    let dir = temp_dir();
    let prices = dir.join("prices.json");
    // The mock answers as OpenAI's Chat (10 tokens in, 5 out).
    std::fs::write(
        &prices,
        r#"{"providers": [{"id": "openai", "models": [{"id": "gpt-test", "input": "1", "output": "2"}]}]}"#,
    )
    .unwrap();
    let agent = format!("prices = \"{}\"", prices.display());
    let cfg = config_with(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        "",
        &Extra {
            agent: &agent,
            ..Extra::default()
        },
    );
    let server = start(&cfg);
    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Hello"}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let want = 10.0 * 1.0 / 1e6 + 5.0 * 2.0 / 1e6;
    assert!((r["cost"].as_f64().unwrap() - want).abs() < 1e-12, "{r}");
    assert_eq!(r["messages"][1]["cost"], r["cost"]);

    let (status, e) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": {"model": "mock:gpt-test", "prices": prices.display().to_string()}, "input": "Hello"}),
        None,
    )
    .await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e.to_string()
            .contains("prices: set in the server's configuration"),
        "{e}"
    );

    // A table that does not read is named before anything runs.
    std::fs::write(
        &prices,
        r#"{"providers": [{"id": "openai", "models": [{"id": "m", "in": "1"}]}]}"#,
    )
    .unwrap();
    let (code, _, err) = common::run::parlance(
        &[
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--agent",
            "support",
            "Hello",
        ],
        "",
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("prices: ") && err.contains("prices.json") && err.contains("in"),
        "{err}"
    );
}

/// Issue 32 through `parlance serve` and its TOML: an agent's
/// `output_schema` makes the response's `output` the JSON value, and an
/// answer that misses it twice goes back to the model (`output_retries`),
/// stored on the thread, until one fits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toml_agents_output_retries_until_the_answer_fits_its_schema() {
    let provider = ReplayServer::start(vec![
        chat(text(r#"{"order_id": "A-1"}"#)),
        chat(text("A-1 was shipped")),
        chat(text(r#"{"order_id": "A-1", "status": "shipped"}"#)),
    ])
    .await;
    let dir = temp_dir();
    let agent = r#"output_retries = 2
[agents.support.output_schema]
name = "order"
schema = { type = "object", required = ["order_id", "status"], properties = { order_id = { type = "string" }, status = { type = "string" } } }
"#;
    let cfg = config_with(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        "",
        &Extra {
            agent,
            ..Extra::default()
        },
    );
    let server = start(&cfg);
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let id = t["id"].as_str().unwrap();
    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Where is A-1?", "thread_id": id}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(r["output"], json!({"order_id": "A-1", "status": "shipped"}));
    let sent = provider.received();
    assert_eq!(sent.len(), 3);
    assert_eq!(
        sent[0].body["response_format"]["json_schema"]["name"],
        "order"
    );
    let last_user = |i: usize| {
        let msgs = sent[i].body["messages"].as_array().unwrap().clone();
        msgs.into_iter()
            .rev()
            .find(|m| m["role"] == "user")
            .unwrap()["content"]
            .clone()
    };
    assert!(
        last_user(1).as_str().unwrap().starts_with(
            "the final answer does not match the output schema: status: required property missing"
        ),
        "{}",
        last_user(1)
    );
    assert!(
        last_user(2)
            .as_str()
            .unwrap()
            .starts_with("the final answer is not JSON")
    );
    let (_, thread) = get(&server.url, &format!("/v1/threads/{id}"), None).await;
    let roles: Vec<&str> = thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"]["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ],
        "the retries are stored with the thread"
    );
}
