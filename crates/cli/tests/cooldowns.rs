//! A fallback's cooldown shared through the store: a provider that
//! answered one server `429` with a long `retry-after` is skipped by
//! another server of the same store, without a request.

mod common;

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_seen_by_one_server_is_skipped_by_another_of_the_store() {
    // Two minutes: past any retry's wait, so the error comes back at once.
    let limited = ReplayServer::start(vec![
        Reply::json(
            429,
            &json!({"error": {"message": "slow down", "type": "rate_limit_error"}}),
        )
        .with_header("retry-after", "120"),
    ])
    .await;
    let spare = ReplayServer::start(vec![
        chat(text("From the spare.")),
        chat(text("Spare again.")),
    ])
    .await;
    let dir = temp_dir();
    let tables = format!(
        r#"
[providers.spare]
format = "openai-chat"
base_url = "{}/v1"
api_key_env = "PARLANCE_TEST_NO_KEY"

[agents.fallback]
model = ["mock:gpt-test", "spare:gpt-test"]
"#,
        spare.url
    );
    let cfg = config_with(
        &dir,
        &limited.url,
        "http://127.0.0.1:9",
        "",
        &Extra {
            tables: &tables,
            ..Extra::default()
        },
    );
    // Two servers, one store (the same SQLite file).
    let (a, b) = (start(&cfg), start(&cfg));
    let body = json!({"agent": "fallback", "input": "Hi"});
    let (status, r) = post(&a.url, "/v1/runs", &body, None).await;
    assert_eq!(
        (status, r["status"].as_str()),
        (200, Some("completed")),
        "{r}"
    );
    let why = &r["messages"][1]["metadata"]["parlance_fallback"][0];
    assert_eq!(why["reason"], "rate_limited", "{r}");

    let (status, r) = post(&b.url, "/v1/runs", &body, None).await;
    assert_eq!(
        (status, r["status"].as_str()),
        (200, Some("completed")),
        "{r}"
    );
    let why = &r["messages"][1]["metadata"]["parlance_fallback"][0];
    assert_eq!(why["reason"], "cooling_down", "{r}");
    assert!(
        why["error"]
            .as_str()
            .unwrap()
            .starts_with("skipped: rate limited, cooling down for 1"),
        "{why}"
    );
    assert_eq!(
        limited.received().len(),
        1,
        "the second server sent it nothing"
    );
    assert_eq!(spare.received().len(), 2);
}
