//! Budgets through `parlance serve`: the server's `[budget]` holds for
//! each owner (the token's subject) across threads and agents; an agent's
//! run at its limit answers once without tools, streamed, then ends
//! `budget_exhausted`, all of it stored; bad settings stop the server
//! naming the setting.

mod common;

use std::process::{Command, Stdio};

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::json;

const ALICE_AND_BOB: &str = "[[auth.tokens]]\ntoken = \"tok-alice-0123456789\"\nsubject = \"alice\"\n[[auth.tokens]]\ntoken = \"tok-bob-01234567890\"\nsubject = \"bob\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owners_daily_budget_holds_across_threads_and_other_owners_are_not_touched() {
    // Every answer reports 10 + 5 tokens.
    let provider = ReplayServer::start(vec![
        chat(text("One.")),
        chat(text("Two.")),
        chat(text("Bob's.")),
    ])
    .await;
    let dir = temp_dir();
    let cfg = config_with(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        ALICE_AND_BOB,
        &Extra {
            top: "[budget.owner_day]\ntokens = 30\n",
            ..Extra::default()
        },
    );
    let server = start(&cfg);
    let alice = Some("tok-alice-0123456789");
    let bob = Some("tok-bob-01234567890");
    let mut outcomes = Vec::new();
    for who in [alice, alice, alice, bob] {
        let (status, t) = post(&server.url, "/v1/threads", &json!({}), who).await;
        assert_eq!(status, 201, "{t}");
        let body = json!({"agent": "support", "input": "Hi", "thread_id": t["id"]});
        let (status, r) = post(&server.url, "/v1/runs", &body, who).await;
        assert_eq!(status, 200, "{r}");
        outcomes.push(r);
    }
    let codes: Vec<_> = outcomes
        .iter()
        .map(|r| {
            r["error"]["code"]
                .as_str()
                .unwrap_or(r["status"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        codes,
        ["completed", "completed", "budget_exhausted", "completed"]
    );
    assert_eq!(
        outcomes[2]["error"]["message"],
        "the owner's budget for today (UTC) is exhausted: 30 of 30 tokens"
    );
    assert_eq!(outcomes[2]["status"], "failed");
    // Alice's third run asked no model.
    assert_eq!(provider.received().len(), 3);
    // Stored: the run reads back failed with its code.
    let (_, run) = get(
        &server.url,
        &format!("/v1/runs/{}", outcomes[2]["id"].as_str().unwrap()),
        alice,
    )
    .await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["error"]["code"], "budget_exhausted", "{run}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_at_its_limit_answers_once_without_tools_streamed_and_stored() {
    let provider = ReplayServer::start(vec![
        chat_stream(call("c1", "lookup_order", json!({"id": "A-17"}))),
        chat_stream(call("c2", "lookup_order", json!({"id": "A-18"}))),
        chat_stream(text(
            "A-17 has shipped; I could not check A-18 within the budget.",
        )),
    ])
    .await;
    let tool = ReplayServer::start(vec![
        Reply::json(200, &json!({"id": "A-17", "status": "shipped"})),
        Reply::json(200, &json!({"id": "A-18", "status": "packed"})),
    ])
    .await;
    let dir = temp_dir();
    let cfg = config_with(
        &dir,
        &provider.url,
        &tool.url,
        "",
        &Extra {
            agent: "[agents.support.budget.run]\ntool_calls = 2\n",
            ..Extra::default()
        },
    );
    let server = start(&cfg);
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let body = json!({"agent": "support", "input": "Where are A-17 and A-18?", "thread_id": t["id"], "stream": true});
    let events = post_stream(&server.url, "/v1/runs", &body, None).await;
    let text: String = events
        .iter()
        .filter(|(e, _)| e == "text_delta")
        .map(|(_, d)| d["text"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        text,
        "A-17 has shipped; I could not check A-18 within the budget."
    );
    let (last, done) = events.last().unwrap();
    assert_eq!(last, "run_completed");
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(
        done["error"]["message"],
        "the run's budget is exhausted: 2 of 2 tool calls"
    );
    // The closing request offered no tool and said why.
    let sent = provider.received();
    assert_eq!(sent.len(), 3);
    assert!(sent[1].body["tools"].is_array());
    assert!(
        sent[2]
            .body
            .get("tools")
            .is_none_or(|t| t.as_array().is_some_and(|a| a.is_empty())),
        "{}",
        sent[2].body
    );
    let note = sent[2].body["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(note.contains("No tool can be called any more"), "{note}");
    // Stored: the closing answer is the thread's last message, the note is not.
    let (_, thread) = get(
        &server.url,
        &format!("/v1/threads/{}", t["id"].as_str().unwrap()),
        None,
    )
    .await;
    let messages = thread["messages"].as_array().unwrap();
    let last = &messages.last().unwrap()["message"];
    assert_eq!(last["role"], "assistant", "{last}");
    assert_eq!(
        messages.len(),
        6,
        "input, two calls, two results, the answer"
    );
    assert!(thread.to_string().contains("within the budget"));
    assert!(!thread.to_string().contains("No tool can be called"));
}

#[test]
fn bad_budgets_stop_the_server_naming_the_setting() {
    for (top, agent, want) in [
        (
            "",
            "[agents.support.budget.run]\ncost = -1\n",
            "agents.support.budget.run.cost: expected a number of US dollars, 0 or more, got -1",
        ),
        (
            "[budget.owner_month]\ncost = -0.5\n",
            "",
            "budget.owner_month.cost: expected a number of US dollars, 0 or more, got -0.5",
        ),
        (
            "",
            "[agents.support.budget]\non_exhausted = \"explain\"\n",
            "agents.support.budget.on_exhausted: expected \"answer\" or \"stop\", got \"explain\"",
        ),
        (
            "",
            "[agents.support.budget.day]\ntokens = 5\n",
            "unknown field `day`",
        ),
        // Serde's error: the line, the column and the key under the caret.
        ("[budget.run]\ntokens = -5\n", "", "expected u64"),
    ] {
        let dir = temp_dir();
        let cfg = config_with(
            &dir,
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            "",
            &Extra {
                top,
                agent,
                ..Extra::default()
            },
        );
        let out = Command::new(env!("CARGO_BIN_EXE_parlance"))
            .args(["serve", "--config", cfg.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains(want), "{want}\n{err}");
    }
}

/// An answer of gpt-4o-mini ($0.15 and $0.60 per million tokens in and
/// out): 1000 in, 100 out, $0.00021.
fn priced(t: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_threads_totals_are_in_the_api_and_on_the_inbox_page() {
    let provider = ReplayServer::start(vec![priced("One."), priced("Two.")]).await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, "http://127.0.0.1:9", "");
    let server = start(&cfg);
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let id = t["id"].as_str().unwrap();
    for input in ["Hi", "Again"] {
        let body = json!({"agent": "support", "input": input, "thread_id": id});
        let (status, r) = post(&server.url, "/v1/runs", &body, None).await;
        assert_eq!((status, r["cost"].as_f64()), (200, Some(0.00021)), "{r}");
    }
    let (_, thread) = get(&server.url, &format!("/v1/threads/{id}"), None).await;
    let totals = &thread["totals"];
    assert_eq!(totals["tokens"], 2200, "{totals}");
    assert_eq!(totals["model_calls"], 2);
    assert_eq!(totals["tool_calls"], 0);
    assert!(
        (totals["cost"].as_f64().unwrap() - 0.00042).abs() < 1e-12,
        "{totals}"
    );

    let page = anonymous_page(&server.url, &format!("/ui/threads/{id}")).await;
    assert!(page.contains("This thread: 2200 tokens"), "{page}");
    assert!(page.contains("$0.0004200"), "{page}");
    assert_eq!(page.matches("$0.0002100").count(), 2, "each run's cost");
}

/// Two `parlance serve` on one PostgreSQL, eight runs of one owner at once
/// (four on each), each a loop of tool calls of 15 tokens a step, against
/// the owner's 300-token day: every run ends `budget_exhausted`, and the
/// owner spent at least the limit and less than one step per run past it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_postgresql_pass_an_owners_budget_by_at_most_a_step_per_run() {
    let Ok(url) = std::env::var("PARLANCE_TEST_POSTGRES_URL") else {
        assert!(
            std::env::var("PARLANCE_REQUIRE_POSTGRES").is_err(),
            "PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not"
        );
        return;
    };
    const RUNS: usize = 8;
    const LIMIT: u64 = 300;
    const STEP: u64 = 15;
    let provider = ReplayServer::start(
        (0..100)
            .map(|i| {
                chat(call(
                    &format!("c{i}"),
                    "lookup_order",
                    json!({"id": "A-17"}),
                ))
            })
            .collect(),
    )
    .await;
    let tool = ReplayServer::start(
        (0..100)
            .map(|_| Reply::json(200, &json!({"id": "A-17", "status": "shipped"})))
            .collect(),
    )
    .await;
    let owner = format!("owner-{}", rand::random::<u32>());
    let tokens =
        format!("[[auth.tokens]]\ntoken = \"tok-owner-0123456789\"\nsubject = \"{owner}\"\n");
    let dir = temp_dir();
    let cfg = config_with(
        &dir,
        &provider.url,
        &tool.url,
        &tokens,
        &Extra {
            top: "[budget]\non_exhausted = \"stop\"\n[budget.owner_day]\ntokens = 300\n",
            agent: "max_model_calls = 100\n",
            ..Extra::default()
        },
    );
    let env = [("PARLANCE_STORE_URL", url.as_str())];
    let servers = [start_with_env(&cfg, &env), start_with_env(&cfg, &env)];
    let who = Some("tok-owner-0123456789");
    let mut threads = Vec::new();
    for _ in 0..RUNS {
        let (_, t) = post(&servers[0].url, "/v1/threads", &json!({}), who).await;
        threads.push(t["id"].as_str().unwrap().to_string());
    }
    let runs = threads.iter().enumerate().map(|(i, id)| {
        let base = servers[i % 2].url.clone();
        let body = json!({"agent": "support", "input": "Where is A-17?", "thread_id": id});
        async move { post(&base, "/v1/runs", &body, who).await }
    });
    let outcomes = futures::future::join_all(runs).await;
    for (status, r) in &outcomes {
        assert_eq!(*status, 200, "{r}");
        assert_eq!(r["error"]["code"], "budget_exhausted", "{r}");
    }
    let mut spent = 0;
    for id in &threads {
        let (_, t) = get(&servers[1].url, &format!("/v1/threads/{id}"), who).await;
        spent += t["totals"]["tokens"].as_u64().unwrap();
    }
    assert!(spent >= LIMIT, "{spent}");
    assert!(
        spent < LIMIT + RUNS as u64 * STEP,
        "the owner spent {spent}: past {LIMIT} by a step per run or more"
    );
    eprintln!("two servers: the owner spent {spent} tokens of {LIMIT}");
}
