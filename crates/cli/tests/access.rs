//! Who may do what, through the real `parlance serve`: open only on
//! loopback unless told, local model files only from the configuration,
//! signed paused state, artifacts and secrets kept from those who should
//! not read them.

mod common;

use std::process::{Command, Stdio};

use common::replay::{ReplayServer, Reply};
use common::*;
use serde_json::{Value, json};

/// `parlance serve` that is expected to refuse to start: its exit status
/// and standard error.
fn refused(config: &std::path::Path, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parlance"));
    cmd.args(["serve", "--config", config.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_api_only_on_loopback_and_anonymous_callers_are_not_operators() {
    let provider = ReplayServer::start(vec![]).await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, "http://127.0.0.1:9", "");
    let (code, err) = refused(&cfg, &[("PARLANCE_LISTEN", "0.0.0.0:0")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("refusing to listen on 0.0.0.0:0 without API tokens"),
        "{err}"
    );
    // Said explicitly, it starts (and warns).
    let open = start_with_env(
        &cfg,
        &[("PARLANCE_LISTEN", "0.0.0.0:0"), ("PARLANCE__AUTH", "none")],
    );
    let port = open.url.rsplit(':').next().unwrap();
    let (status, _) = get(&format!("http://127.0.0.1:{port}"), "/healthz", None).await;
    assert_eq!(status, 200);
    drop(open);
    // `auth = "none"` and tokens at once is a contradiction.
    let (code, err) = refused(
        &cfg,
        &[
            ("PARLANCE__AUTH", "none"),
            ("PARLANCE_API_TOKENS", "a=tok-aaaaaaaa"),
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("choose one"), "{err}");

    // On loopback without tokens, callers are anonymous, never operators:
    // no artifacts, no other subject's threads.
    let server = start(&cfg);
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let id = t["id"].as_str().unwrap();
    let (status, thread) = get(&server.url, &format!("/v1/threads/{id}"), None).await;
    assert_eq!(status, 200);
    assert!(thread.get("artifacts").is_none(), "{thread}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_is_read_in_any_case() {
    let provider = ReplayServer::start(vec![]).await;
    let dir = temp_dir();
    let tokens = "[[auth.tokens]]\ntoken = \"tok-alice-123\"\nsubject = \"alice\"\n";
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", tokens));
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let resp = reqwest::Client::new()
            .get(format!("{}/v1/threads", server.url))
            .header("authorization", format!("{scheme} tok-alice-123"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{scheme}");
    }
    let resp = reqwest::Client::new()
        .get(format!("{}/v1/threads", server.url))
        .header("authorization", "Basic tok-alice-123")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    let _ = Value::Null;
    let _ = Reply::json(200, &json!({}));
}
