//! `GET /metrics` of the real `parlance serve`: operators only, the
//! Prometheus text format (checked by `promtool check metrics`, Debian's
//! `prometheus` package), and counters that match a known sequence of
//! runs.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::json;

const TOKENS: &str = "[[auth.tokens]]\ntoken = \"tok-alice-123\"\nsubject = \"alice\"\n[[auth.tokens]]\ntoken = \"tok-ops-98765\"\nsubject = \"ops\"\noperator = true\n";
const ALICE: Option<&str> = Some("tok-alice-123");
const OPS: Option<&str> = Some("tok-ops-98765");

async fn scrape(url: &str, token: Option<&str>) -> (u16, String) {
    let mut req = reqwest::Client::new().get(format!("{url}/metrics"));
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.text().await.unwrap())
}

/// Every sample: `name{labels}` -> value (labels as written).
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

/// The sample whose name is `name` and whose labels include all of `labels`.
fn value(all: &BTreeMap<String, f64>, name: &str, labels: &[&str]) -> f64 {
    let hits: Vec<f64> = all
        .iter()
        .filter(|(k, _)| {
            (k.as_str() == name || k.starts_with(&format!("{name}{{")))
                && labels.iter().all(|l| k.contains(l))
        })
        .map(|(_, v)| *v)
        .collect();
    assert_eq!(hits.len(), 1, "{name} {labels:?}: {hits:?} in {all:#?}");
    hits[0]
}

fn promtool_check(text: &str) {
    let Ok(mut child) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        assert!(
            std::env::var("PARLANCE_REQUIRE_PROMTOOL").as_deref() != Ok("1"),
            "PARLANCE_REQUIRE_PROMTOOL=1 but promtool is missing (Debian package prometheus)"
        );
        eprintln!("skipped promtool check: promtool is missing (Debian package prometheus)");
        return;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_a_known_sequence_of_runs_for_operators() {
    let provider = ReplayServer::start(vec![
        // 1: a tool call that runs, an invalid one, an unknown tool; then an answer.
        chat(calls(&[
            ("c1", "lookup_order", json!({"id": "A-1"})),
            ("c2", "lookup_order", json!({"id": "nope"})),
            ("c3", "made_up", json!({})),
        ])),
        chat(text("A-1 shipped.")),
        // 2: a call that waits for a decision, on a thread.
        chat(call("c4", "refund", json!({"amount": 7}))),
        // 3: the provider refuses the request.
        Reply::json(
            400,
            &json!({"error": {"message": "bad request", "type": "invalid_request_error"}}),
        ),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::json(200, &json!({"status": "shipped"}))]).await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, &tool.url, TOKENS));

    // Protected: no token, a tenant's token, an operator's.
    assert_eq!(scrape(&server.url, None).await.0, 401);
    assert_eq!(scrape(&server.url, ALICE).await.0, 403);
    let (status, before) = scrape(&server.url, OPS).await;
    assert_eq!(status, 200, "{before}");
    assert_eq!(
        value(&samples(&before), "parlance_runs_in_flight", &[]),
        0.0
    );
    assert_eq!(
        value(&samples(&before), "parlance_pending_approvals", &[]),
        0.0
    );

    let (_, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "A-1?"}),
        ALICE,
    )
    .await;
    assert_eq!(r["status"], "completed", "{r}");
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), ALICE).await;
    let (_, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 7", "thread_id": t["id"]}),
        ALICE,
    )
    .await;
    assert_eq!(r["status"], "requires_approval", "{r}");
    let (_, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "?"}),
        ALICE,
    )
    .await;
    assert_eq!(r["status"], "failed", "{r}");

    let (status, text) = scrape(&server.url, OPS).await;
    assert_eq!(status, 200);
    promtool_check(&text);
    let m = samples(&text);
    let v = |name: &str, labels: &[&str]| value(&m, name, labels);
    assert_eq!(v("parlance_runs_total", &["status=\"completed\""]), 1.0);
    assert_eq!(
        v("parlance_runs_total", &["status=\"requires_approval\""]),
        1.0
    );
    assert_eq!(v("parlance_runs_total", &["status=\"failed\""]), 1.0);
    assert_eq!(
        v(
            "parlance_run_duration_seconds_count",
            &["status=\"completed\""]
        ),
        1.0
    );
    assert_eq!(v("parlance_runs_in_flight", &[]), 0.0);
    assert_eq!(v("parlance_pending_approvals", &[]), 1.0);
    let gpt = ["provider=\"openai\"", "model=\"gpt-test\""];
    assert_eq!(
        v(
            "parlance_model_calls_total",
            &[gpt[0], gpt[1], "outcome=\"ok\""]
        ),
        3.0
    );
    assert_eq!(
        v(
            "parlance_model_calls_total",
            &[gpt[0], gpt[1], "outcome=\"error\""]
        ),
        1.0
    );
    assert_eq!(
        v(
            "parlance_model_call_duration_seconds_count",
            &[gpt[0], "outcome=\"ok\""]
        ),
        3.0
    );
    assert_eq!(
        v(
            "parlance_model_tokens_total",
            &[gpt[0], gpt[1], "type=\"input\""]
        ),
        30.0
    );
    assert_eq!(
        v(
            "parlance_model_tokens_total",
            &[gpt[0], gpt[1], "type=\"output\""]
        ),
        15.0
    );
    assert_eq!(
        v(
            "parlance_tool_calls_total",
            &["tool=\"lookup_order\"", "status=\"ok\""]
        ),
        1.0
    );
    assert_eq!(
        v(
            "parlance_tool_calls_total",
            &["tool=\"lookup_order\"", "status=\"invalid_arguments\""]
        ),
        1.0
    );
    assert_eq!(
        v(
            "parlance_tool_calls_total",
            &["tool=\"(unknown)\"", "status=\"error\""]
        ),
        1.0
    );
    assert_eq!(
        v(
            "parlance_tool_call_duration_seconds_count",
            &["tool=\"lookup_order\"", "status=\"ok\""]
        ),
        1.0
    );
    // The stored run wrote its steps; the scrape read the store.
    assert!(
        v(
            "parlance_store_write_duration_seconds_count",
            &["outcome=\"ok\""]
        ) >= 2.0
    );
    assert!(v("parlance_store_read_duration_seconds_count", &[]) >= 2.0);
    assert!(
        text.contains("# TYPE parlance_run_duration_seconds histogram"),
        "{text}"
    );
    assert!(
        text.contains("# HELP parlance_runs_total Runs finished"),
        "{text}"
    );
}
