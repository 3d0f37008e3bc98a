//! Runs that finish on their own after `parlance serve` is killed with
//! SIGKILL: during a model step, during a tool step, while waiting for
//! approval; restarted on a SQLite file, and two servers on PostgreSQL.
//! No client calls anything after the kill: the runs end by themselves
//! (or wait for their decisions), a model step that did not commit is
//! asked again, a tool call that did not commit runs again with the same
//! `Idempotency-Key`, and nothing that committed runs twice (counted by
//! the mock provider and the mock tool).

mod common;

use std::time::{Duration, Instant};

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::json;

fn slow(ms: u64, reply: Reply) -> Reply {
    Reply::Delayed(ms, Box::new(reply))
}

/// Killed while the model answers, restarted: the run is taken over at
/// start-up (its lease, 30 s, has far to go) and the model asked again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_model_step_the_run_finishes_after_the_restart() {
    let provider = ReplayServer::start(vec![
        slow(60_000, chat(text("never heard"))),
        chat(text("It has shipped.")),
    ])
    .await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, "http://127.0.0.1:9", "");
    let server = start(&cfg);
    let thread = new_thread(&server.url).await;
    start_run(&server.url, &thread);
    received(&provider, 1).await;
    kill(server);

    let server = start(&cfg);
    let (t, took) = ended(&server.url, &thread, Duration::from_secs(10)).await;
    let runs = t["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "the same run went on: {t}");
    assert_eq!(runs[0]["status"], "completed", "{t}");
    assert_eq!(runs[0]["output"], "It has shipped.");
    // Within the 10 s waited for: its lease (30 s) had far to go, so only
    // the restarted server's own takeover can have carried it on.
    assert_eq!(provider.received().len(), 2);
    eprintln!("a run killed mid model step finished {took:?} after the restart");
}

/// Killed while an HTTP tool runs: the model's committed step is not asked
/// again; the tool call runs again with the same idempotency key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_during_a_tool_step_the_call_runs_again_with_its_key() {
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        chat(text("It has shipped.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![
        slow(60_000, Reply::json(200, &json!({"status": "lost"}))),
        Reply::json(200, &json!({"status": "shipped"})),
    ])
    .await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, &tool.url, "");
    let server = start(&cfg);
    let thread = new_thread(&server.url).await;
    start_run(&server.url, &thread);
    received(&tool, 1).await;
    kill(server);

    let server = start(&cfg);
    let (t, _) = ended(&server.url, &thread, Duration::from_secs(10)).await;
    assert_eq!(t["runs"][0]["status"], "completed", "{t}");
    assert_eq!(t["runs"][0]["output"], "It has shipped.");
    // The model was asked twice in all: once for the call, once after.
    assert_eq!(provider.received().len(), 2);
    let calls = tool.received();
    assert_eq!(calls.len(), 2);
    let key = format!("{thread}/call_1");
    for c in &calls {
        assert_eq!(c.header("idempotency-key"), Some(key.as_str()));
    }
    let messages = t["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "{t}");
    let result = &messages[2]["message"]["content"][0]["tool_result"];
    assert!(result.get("status").is_none(), "ok (left out): {result}");
    assert!(
        result["content"].to_string().contains("shipped"),
        "{result}"
    );
}

/// Killed while a run waits for approval: after the restart it still
/// waits (nothing is asked again), and a decision finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_while_waiting_for_approval_the_run_still_waits() {
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "refund", json!({"amount": 40}))),
        chat(text("Refunded.")),
    ])
    .await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, "http://127.0.0.1:9", "");
    let server = start(&cfg);
    let thread = new_thread(&server.url).await;
    let (status, paused) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 40", "thread_id": thread}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["status"], "requires_approval");
    kill(server);

    let server = start(&cfg);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let run_id = paused["id"].as_str().unwrap();
    let (_, run) = get(&server.url, &format!("/v1/runs/{run_id}"), None).await;
    assert_eq!(run["status"], "requires_approval", "{run}");
    assert_eq!(provider.received().len(), 1);
    let pending = &paused["pending"][0];
    let decision = json!({"decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"], "decision": "answered",
        "content": [{"type": "text", "text": "refund #991 issued"}]}]});
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{run_id}/decisions"),
        &decision,
        None,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
}

/// With `resume = "off"` the run is not carried on: marked interrupted,
/// its thread free, as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_with_resume_off_is_interrupted_instead() {
    let provider = ReplayServer::start(vec![slow(60_000, chat(text("never heard")))]).await;
    let dir = temp_dir();
    let extra = Extra {
        agent: "resume = \"off\"",
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider.url, "http://127.0.0.1:9", "", &extra);
    let server = start(&cfg);
    let thread = new_thread(&server.url).await;
    start_run(&server.url, &thread);
    received(&provider, 1).await;
    kill(server);
    let server = start(&cfg);
    let (t, _) = ended(&server.url, &thread, Duration::from_secs(5)).await;
    assert_eq!(t["runs"][0]["status"], "failed", "{t}");
    assert_eq!(t["runs"][0]["error"]["code"], "interrupted");
    assert_eq!(provider.received().len(), 1, "nothing was asked again");
}

/// A bad `resume` stops the server with the setting named; a request
/// cannot set it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_is_checked_and_belongs_to_the_configuration() {
    let dir = temp_dir();
    let extra = Extra {
        agent: "resume = \"sometimes\"",
        ..Extra::default()
    };
    let cfg = config_with(&dir, "http://127.0.0.1:9", "http://127.0.0.1:9", "", &extra);
    let (code, _, err) = run::parlance(&["serve", "--config", cfg.to_str().unwrap()], "");
    assert_ne!(code, 0);
    assert!(
        err.contains("agents.support")
            && err.contains("resume: expected \"auto\" or \"off\", not \"sometimes\""),
        "{err}"
    );
    let cfg = config(&dir, "http://127.0.0.1:9", "http://127.0.0.1:9", "");
    let server = start(&cfg);
    let (status, e) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": {"model": "openai:gpt-4o", "resume": "auto"}, "input": "hi"}),
        None,
    )
    .await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("resume: set in the server's configuration"),
        "{e}"
    );
}

/// Two servers on one PostgreSQL: the one killed does not come back; the
/// other takes its runs over once their lease has run out — one killed
/// mid model step, one mid tool step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgresql_another_server_carries_the_dead_servers_runs_on() {
    let Ok(url) = std::env::var("PARLANCE_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("PARLANCE_REQUIRE_POSTGRES").is_err(),
            "PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not"
        );
        return;
    };
    // A model of its own: the servers of other tests on this database
    // take over only the runs of agents they have.
    let name = format!("support_{}", rand::random::<u32>());
    let provider = ReplayServer::start(vec![
        chat(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        slow(60_000, chat(text("never heard"))),
        chat(text("It has shipped.")),
        chat(text("Answered by the other server.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![
        slow(60_000, Reply::json(200, &json!({"status": "lost"}))),
        Reply::json(200, &json!({"status": "shipped"})),
    ])
    .await;
    let dir = temp_dir();
    let extra = Extra {
        store: "lease_ms = 2000",
        tables: &format!(
            "[agents.{name}]\nmodel = \"mock:gpt-test\"\ntools = [\"lookup_order\"]\n"
        ),
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider.url, &tool.url, "", &extra);
    let env = [("PARLANCE_STORE_URL", url.as_str())];
    let doomed = start_with_env(&cfg, &env);
    let other = start_with_env(&cfg, &env);
    let (tool_thread, model_thread) =
        (new_thread(&doomed.url).await, new_thread(&doomed.url).await);
    let run = |thread: &str| {
        let (base, body) = (
            doomed.url.clone(),
            json!({"agent": name, "input": "Where is A-17?", "thread_id": thread}),
        );
        tokio::spawn(async move {
            let _ = reqwest::Client::new()
                .post(format!("{base}/v1/runs"))
                .json(&body)
                .send()
                .await;
        });
    };
    run(&tool_thread);
    received(&tool, 1).await;
    run(&model_thread);
    received(&provider, 2).await;
    let killed = Instant::now();
    kill(doomed);
    let (a, _) = ended(&other.url, &tool_thread, Duration::from_secs(15)).await;
    let (b, _) = ended(&other.url, &model_thread, Duration::from_secs(15)).await;
    let took = killed.elapsed();
    for t in [&a, &b] {
        assert_eq!(t["runs"].as_array().unwrap().len(), 1, "{t}");
        assert_eq!(t["runs"][0]["status"], "completed", "{t}");
    }
    let mut outputs = [
        a["runs"][0]["output"].clone(),
        b["runs"][0]["output"].clone(),
    ];
    outputs.sort_by_key(|v| v.to_string());
    assert_eq!(
        outputs,
        [
            json!("Answered by the other server."),
            json!("It has shipped.")
        ]
    );
    assert_eq!(provider.received().len(), 4);
    let key = format!("{tool_thread}/call_1");
    let calls = tool.received();
    assert_eq!(calls.len(), 2);
    assert!(
        calls
            .iter()
            .all(|c| c.header("idempotency-key") == Some(key.as_str()))
    );
    eprintln!("the other server finished both runs {took:?} after the kill (lease 2 s)");
}
