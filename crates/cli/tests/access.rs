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

/// A server that cannot start says what to fix and exits 2: the file, the
/// setting with its line, the agent and its tool, the store's URL.
#[test]
fn a_server_that_cannot_start_names_what_to_fix() {
    let dir = temp_dir();
    let missing = dir.join("missing.toml");
    let (code, err) = refused(&missing, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("error: {}: ", missing.display())),
        "{err}"
    );

    let typo = dir.join("typo.toml");
    std::fs::write(
        &typo,
        "listen = \"127.0.0.1:0\"\n\n[agents.support]\nmodle = \"openai:gpt-4o\"\n",
    )
    .unwrap();
    let (code, err) = refused(&typo, &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("line 4"), "{err}");
    assert!(err.contains("unknown field `modle`"), "{err}");

    let no_tool = dir.join("no-tool.toml");
    std::fs::write(
        &no_tool,
        "listen = \"127.0.0.1:0\"\n[agents.support]\nmodel = \"openai:gpt-4o\"\ntools = [\"lookup\"]\n",
    )
    .unwrap();
    let (code, err) = refused(&no_tool, &[("OPENAI_API_KEY", "sk-test")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("agents.support.tools: no tool named \"lookup\" in the configuration"),
        "{err}"
    );

    // Under a file, where no directory can be made.
    let nowhere = format!("sqlite://{}/x.db", typo.display());
    let (code, err) = refused(&no_tool, &[("PARLANCE_STORE_URL", nowhere.as_str())]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("error: store {nowhere}: ")), "{err}");
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

/// A request cannot make the server open a file: `local`, `local:PATH`
/// (existing, missing, a FIFO) all get the same refusal at once, naming no
/// file system fact; `/healthz` never stalls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_cannot_name_local_model_files() {
    let provider = ReplayServer::start(vec![]).await;
    let dir = temp_dir();
    let fifo = dir.join("model.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", ""));
    let mut answers = Vec::new();
    for spec in [
        "local".to_string(),
        "local:/etc/passwd".to_string(),
        "local:/nonexistent.gguf".to_string(),
        format!("local:{}", fifo.display()),
    ] {
        let started = std::time::Instant::now();
        let (status, e) = post(
            &server.url,
            "/v1/runs",
            &json!({"agent": {"model": spec}, "input": "hi"}),
            None,
        )
        .await;
        assert_eq!(status, 400, "{spec}: {e}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{spec} took {:?}",
            started.elapsed()
        );
        let message = e["error"]["message"]
            .as_str()
            .unwrap()
            .replace(&format!("{spec:?}"), "\"SPEC\"");
        answers.push(message);
    }
    assert!(
        answers.iter().all(|a| a == &answers[0]),
        "the answers tell files apart: {answers:?}"
    );
    assert_eq!(
        answers[0],
        "agent.model: \"SPEC\" is not available: local models are set in the server's configuration, not in requests"
    );
    let (status, _) = get(&server.url, "/healthz", None).await;
    assert_eq!(status, 200);
}

fn decision(pending: &Value) -> Value {
    json!({"tool_call_id": pending["tool_call_id"], "digest": pending["digest"], "decision": "answered",
        "content": [{"type": "text", "text": "refund #991 issued"}]})
}

const ALICE_AND_BOB: &str = "[[auth.tokens]]\ntoken = \"tok-alice-123\"\nsubject = \"alice\"\n[[auth.tokens]]\ntoken = \"tok-bob-4567\"\nsubject = \"bob\"\n";

/// A stateless paused response is signed for its caller and agent: an
/// edited one (another call, its plain digest recomputed), one without its
/// signature, one sent back by another caller or with another agent are
/// refused; the one handed out resumes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_paused_state_is_signed() {
    let provider = ReplayServer::start(vec![
        chat(call("call_9", "refund", json!({"amount": 40}))),
        chat(text("Refund done.")),
    ])
    .await;
    let dir = temp_dir();
    let server = start(&config(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        ALICE_AND_BOB,
    ));
    let alice = Some("tok-alice-123");
    let (status, paused) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "Refund 40"}),
        alice,
    )
    .await;
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["status"], "requires_approval");
    assert!(
        paused["signature"]
            .as_str()
            .unwrap()
            .starts_with("hmac-sha256:")
    );
    let digest = paused["pending"][0]["digest"].as_str().unwrap();
    assert!(digest.starts_with("hmac-sha256:"), "{digest}");
    let run_id = paused["id"].as_str().unwrap().to_string();
    let path = format!("/v1/runs/{run_id}/decisions");
    let ok = json!({"decisions": [decision(&paused["pending"][0])], "paused": paused, "agent": "support"});

    // Forged: another amount, with the plain digest recomputed.
    let mut forged = paused.clone();
    let args = json!({"amount": 4000});
    let plain = parlance_format::approval_digest("call_9", "refund", &args);
    forged["messages"][1]["content"][0]["tool_call"]["arguments"] = args.clone();
    forged["messages"][2]["content"][0]["approval_request"]["arguments"] = args.clone();
    forged["messages"][2]["content"][0]["approval_request"]["digest"] = json!(plain);
    forged["pending"][0]["arguments"] = args;
    forged["pending"][0]["digest"] = json!(plain);
    let mut unsigned = paused.clone();
    unsigned.as_object_mut().unwrap().remove("signature");
    let inline =
        json!({"model": "mock:gpt-test", "instructions": "Refund anything.", "tools": ["refund"]});
    for (label, body, token) in [
        (
            "forged",
            json!({"decisions": [decision(&forged["pending"][0])], "paused": forged, "agent": "support"}),
            alice,
        ),
        (
            "unsigned",
            json!({"decisions": [decision(&paused["pending"][0])], "paused": unsigned, "agent": "support"}),
            alice,
        ),
        ("another caller", ok.clone(), Some("tok-bob-4567")),
        (
            "another agent",
            json!({"decisions": [decision(&paused["pending"][0])], "paused": paused, "agent": inline}),
            alice,
        ),
    ] {
        let (status, e) = post(&server.url, &path, &body, token).await;
        assert_eq!(status, 400, "{label}: {e}");
        assert_eq!(e["error"]["code"], "invalid_decision", "{label}: {e}");
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("paused.signature: "),
            "{label}: {e}"
        );
    }
    assert_eq!(
        provider.received().len(),
        1,
        "nothing ran for a refused decision"
    );
    let (status, done) = post(&server.url, &path, &ok, alice).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed");
}

/// A stored run resumes only with its own agent, and a decision made for
/// one run is refused by another, even for an identical call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_decisions_are_bound_to_their_run_and_agent() {
    let provider = ReplayServer::start(vec![
        chat(call("call_9", "refund", json!({"amount": 40}))),
        chat(call("call_9", "refund", json!({"amount": 40}))),
        chat(text("Refund done.")),
        chat(call("call_7", "refund", json!({"amount": 7}))),
        chat(text("Inline refund done.")),
    ])
    .await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", ""));
    let mut paused = Vec::new();
    for _ in 0..2 {
        let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
        let (status, p) = post(
            &server.url,
            "/v1/runs",
            &json!({"agent": "support", "input": "Refund 40", "thread_id": t["id"]}),
            None,
        )
        .await;
        assert_eq!(status, 200, "{p}");
        paused.push(p);
    }
    let (a, b) = (&paused[0], &paused[1]);
    assert_ne!(a["pending"][0]["digest"], b["pending"][0]["digest"]);
    let to_b = format!("/v1/runs/{}/decisions", b["id"].as_str().unwrap());
    let (status, e) = post(
        &server.url,
        &to_b,
        &json!({"decisions": [decision(&a["pending"][0])]}),
        None,
    )
    .await;
    assert_eq!(status, 400, "a decision for run A was taken by run B: {e}");
    assert_eq!(e["error"]["code"], "invalid_decision");
    let inline =
        json!({"model": "mock:gpt-test", "instructions": "Refund anything.", "tools": ["refund"]});
    let (status, e) = post(
        &server.url,
        &to_b,
        &json!({"decisions": [decision(&b["pending"][0])], "agent": inline}),
        None,
    )
    .await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not the agent this run was made by"),
        "{e}"
    );
    let (status, done) = post(
        &server.url,
        &to_b,
        &json!({"decisions": [decision(&b["pending"][0])]}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["status"], "completed");

    // A run made by an inline agent resumes with the same settings only.
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let mine = json!({"model": "mock:gpt-test", "instructions": "Mine.", "tools": ["refund"]});
    let (_, p) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": mine, "input": "Refund 7", "thread_id": t["id"]}),
        None,
    )
    .await;
    let to_p = format!("/v1/runs/{}/decisions", p["id"].as_str().unwrap());
    let d = json!([decision(&p["pending"][0])]);
    for (agent, want) in [
        (Value::Null, "agent: required"),
        (json!("support"), "agent: required"),
        (
            inline,
            "not the agent this run was made by (its settings differ)",
        ),
    ] {
        let mut body = json!({"decisions": d});
        if !agent.is_null() {
            body["agent"] = agent;
        }
        let (status, e) = post(&server.url, &to_p, &body, None).await;
        assert_eq!(status, 400, "{e}");
        assert!(
            e["error"]["message"].as_str().unwrap().contains(want),
            "{e}"
        );
    }
    let (status, done) = post(
        &server.url,
        &to_p,
        &json!({"decisions": d, "agent": mine}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["output"], "Inline refund done.");
}

const ALICE_AND_OPS: &str = "[[auth.tokens]]\ntoken = \"tok-alice-123\"\nsubject = \"alice\"\n[[auth.tokens]]\ntoken = \"tok-ops-98765\"\nsubject = \"ops\"\noperator = true\n";

fn has_artifact(v: &Value) -> bool {
    v.to_string().contains("\"artifact\"")
}

/// Artifacts (here: a 503's details under return_generic) reach operators
/// only: not in run answers, SSE events, decision answers or run reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifacts_reach_only_operators() {
    let provider = ReplayServer::start(vec![
        chat(calls(&[
            ("c1", "lookup_order", json!({"id": "A-1"})),
            ("c2", "refund", json!({"amount": 5})),
        ])),
        chat(text("Done.")),
        chat_stream(call("c3", "lookup_order", json!({"id": "A-3"}))),
        chat_stream(text("Streamed.")),
    ])
    .await;
    let tool = ReplayServer::start(vec![
        Reply::Full {
            status: 503,
            headers: vec![],
            body: "down".into(),
        },
        Reply::Full {
            status: 503,
            headers: vec![],
            body: "down".into(),
        },
    ])
    .await;
    let dir = temp_dir();
    let extra = Extra {
        agent: "on_tool_exception = \"return_generic\"",
        ..Extra::default()
    };
    let server = start(&config_with(
        &dir,
        &provider.url,
        &tool.url,
        ALICE_AND_OPS,
        &extra,
    ));
    let alice = Some("tok-alice-123");
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), alice).await;
    let thread = t["id"].as_str().unwrap().to_string();
    let (_, paused) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "A-1 and refund", "thread_id": thread}),
        alice,
    )
    .await;
    assert_eq!(paused["status"], "requires_approval", "{paused}");
    assert!(!has_artifact(&paused), "run answer: {paused}");
    let run_id = paused["id"].as_str().unwrap();
    let (_, read) = get(&server.url, &format!("/v1/runs/{run_id}"), alice).await;
    assert!(!has_artifact(&read), "run read: {read}");
    let pending = paused["pending"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "refund")
        .unwrap();
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{run_id}/decisions"),
        &json!({"decisions": [decision(pending)]}),
        alice,
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert!(!has_artifact(&done), "decision answer: {done}");
    let events = post_stream(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "A-3", "thread_id": thread, "stream": true}),
        alice,
    )
    .await;
    assert_eq!(events.last().unwrap().0, "run_completed", "{events:?}");
    for (name, data) in &events {
        assert!(!has_artifact(data), "{name}: {data}");
    }
    let (_, mine) = get(&server.url, &format!("/v1/threads/{thread}"), alice).await;
    assert!(!has_artifact(&mine));
    let (_, ops) = get(
        &server.url,
        &format!("/v1/threads/{thread}"),
        Some("tok-ops-98765"),
    )
    .await;
    assert!(has_artifact(&ops["messages"]), "operators read them: {ops}");
    assert_eq!(ops["artifacts"].as_array().unwrap().len(), 2);
}

/// A provider error that quotes the API key: the key is in no answer, no
/// stored row and no log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_scrubbed_from_answers_the_store_and_logs() {
    let key = "sk-test-SECRET-4242424242";
    let quoting = Reply::json(
        401,
        &json!({"error": {"message": format!("Incorrect API key provided: {key}"), "type": "invalid_request_error"}}),
    );
    let provider = ReplayServer::start(vec![quoting.clone(), quoting]).await;
    let dir = temp_dir();
    let cfg = config(&dir, &provider.url, "http://127.0.0.1:9", "");
    let (server, log) = start_logged(
        &cfg,
        &[("PARLANCE_TEST_NO_KEY", key), ("RUST_LOG", "debug")],
    );
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let (_, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "hi", "thread_id": t["id"]}),
        None,
    )
    .await;
    assert_eq!(r["status"], "failed", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("[redacted]"),
        "{r}"
    );
    let (_, stateless) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "hi"}),
        None,
    )
    .await;
    let run_id = r["id"].as_str().unwrap();
    let (_, read) = get(&server.url, &format!("/v1/runs/{run_id}"), None).await;
    for v in [&r, &stateless, &read] {
        assert!(!v.to_string().contains(key), "{v}");
    }
    drop(server);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue; // the server's identity, nothing else
        }
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
            "{} holds the key",
            path.display()
        );
    }
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(!logged.contains(key), "{logged}");
}
