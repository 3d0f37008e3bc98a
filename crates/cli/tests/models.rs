//! `--model provider:model` through the provider registry, with the real
//! binary: a missing key is refused before any request; the registry's
//! names and the base-URL variables reach a provider on 127.0.0.1.

use std::process::Command;

use parlance_testkit::replay::{self, ReplayServer, Reply};
use serde_json::json;

const KEY_VARS: [&str; 26] = [
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
    "HOME",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_BASE_URL",
    "PARLANCE_CONFIG",
    "DEEPSEEK_API_KEY",
    "DEEPSEEK_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
    "AZURE_OPENAI_ENDPOINT",
    "OPENAI_API_VERSION",
    "AZURE_OPENAI_API_VERSION",
];

/// `parlance ARGS` with none of the providers' variables but `vars`.
fn parlance(args: &[&str], vars: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parlance"));
    cmd.args(args);
    for v in KEY_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(vars.iter().copied());
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_missing_key_is_named_before_any_request() {
    for (spec, var) in [
        (
            "anthropic:claude-sonnet-4-5",
            "ANTHROPIC_API_KEY is not set",
        ),
        ("openai:gpt-4o-mini", "OPENAI_API_KEY is not set"),
        ("gemini:gemini-2.5-flash", "GEMINI_API_KEY is not set"),
        ("deepseek:deepseek-reasoner", "DEEPSEEK_API_KEY is not set"),
        ("azure:my-deployment", "AZURE_OPENAI_ENDPOINT is not set"),
    ] {
        let (code, out, err) = parlance(&["run", "--model", spec, "hello"], &[]);
        assert_ne!(code, 0, "{spec}: {out}");
        assert!(err.contains(var), "{spec}: {err}");
        assert!(
            !err.contains("network"),
            "{spec}: no request was made: {err}"
        );
    }
    let (code, _, err) = parlance(&["run", "--model", "nowhere:x", "hello"], &[]);
    assert_ne!(code, 0);
    assert!(
        err.contains(&format!(
            "unknown provider \"nowhere\" (expected one of: {})",
            parlance_providers::registry::provider_names()
        )) && err.contains("openai, openai-responses, anthropic, gemini, "),
        "{err}"
    );
}

#[tokio::test]
async fn openai_from_the_registry_reaches_the_base_url_with_the_key() {
    let answer = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello back."},
        "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}});
    // `parlance run` streams: answer with a one-chunk stream.
    let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello back."},
        "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}});
    let server = ReplayServer::start(vec![
        Reply::Sse {
            chunks: vec![format!("data: {chunk}\n\n"), "data: [DONE]\n\n".into()],
            cut: false,
        },
        Reply::json(200, &answer),
    ])
    .await;
    let base = format!("{}/v1", server.url);
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        let vars = [
            ("OPENAI_API_KEY", "sk-from-env"),
            ("OPENAI_BASE_URL", &base),
        ];
        parlance(&["run", "--model", "openai:gpt-test", "hello"], &vars)
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Hello back."), "{out}");
    let got = server.received();
    assert_eq!(got[0].path, "/v1/chat/completions");
    assert_eq!(got[0].header("authorization"), Some("Bearer sk-from-env"));
    assert_eq!(got[0].body["model"], "gpt-test");
}

#[tokio::test]
async fn model_given_twice_is_a_fallback_past_a_rate_limited_provider() {
    // Anthropic asks for two minutes: longer than any retry waits, so the
    // error comes back at once and the second --model answers.
    let limited = ReplayServer::start(vec![
        Reply::json(
            429,
            &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        )
        .with_header("retry-after", "120"),
    ])
    .await;
    let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-test",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "From the spare."},
        "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}});
    let spare = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![format!("data: {chunk}\n\n"), "data: [DONE]\n\n".into()],
        cut: false,
    }])
    .await;
    let (anthropic, openai) = (limited.url.clone(), format!("{}/v1", spare.url));
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        let vars = [
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", anthropic.as_str()),
            ("OPENAI_API_KEY", "sk-oai"),
            ("OPENAI_BASE_URL", openai.as_str()),
        ];
        parlance(
            &[
                "run",
                "--model",
                "anthropic:claude-test",
                "--model",
                "openai:gpt-test",
                "hello",
            ],
            &vars,
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("From the spare."), "{out}");
    assert_eq!(limited.received().len(), 1, "no retry of a two-minute wait");
    assert_eq!(spare.received()[0].body["model"], "gpt-test");
}

/// One AWS event-stream event message.
fn aws_event(name: &str, payload: serde_json::Value) -> Vec<u8> {
    use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
    let msg = Message::new(payload.to_string().into_bytes())
        .add_header(Header::new(
            ":message-type",
            HeaderValue::String("event".into()),
        ))
        .add_header(Header::new(
            ":event-type",
            HeaderValue::String(name.to_string().into()),
        ));
    let mut out = Vec::new();
    aws_smithy_eventstream::frame::write_message_to(&msg, &mut out).unwrap();
    out
}

#[test]
fn bedrock_without_credentials_or_region_is_refused_before_any_request() {
    let spec = "bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0";
    let (code, _, err) = parlance(
        &["run", "--model", spec, "hello"],
        &[("AWS_REGION", "us-east-1"), ("HOME", "/nonexistent-home")],
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("AWS_BEARER_TOKEN_BEDROCK is not set") && err.contains("AWS_ACCESS_KEY_ID"),
        "{err}"
    );
    let (code, _, err) = parlance(
        &["run", "--model", spec, "hello"],
        &[
            ("AWS_BEARER_TOKEN_BEDROCK", "k"),
            ("HOME", "/nonexistent-home"),
        ],
    );
    assert_ne!(code, 0);
    assert!(err.contains("AWS_REGION"), "{err}");
}

#[tokio::test]
async fn bedrock_from_the_registry_is_signed_and_streams_event_frames() {
    let mut frames = aws_event("messageStart", json!({"role": "assistant"}));
    frames.extend(aws_event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "Hello from Bedrock."}}),
    ));
    frames.extend(aws_event(
        "contentBlockStop",
        json!({"contentBlockIndex": 0}),
    ));
    frames.extend(aws_event("messageStop", json!({"stopReason": "end_turn"})));
    frames.extend(aws_event(
        "metadata",
        json!({"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}, "metrics": {"latencyMs": 5}}),
    ));
    let server = ReplayServer::start(vec![Reply::Binary {
        chunks: frames.chunks(50).map(<[u8]>::to_vec).collect(),
        cut: false,
    }])
    .await;
    let url = server.url.clone();
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        let vars = [
            ("AWS_ACCESS_KEY_ID", "AKIDCLITEST"),
            ("AWS_SECRET_ACCESS_KEY", "cli-secret"),
            ("AWS_REGION", "us-west-2"),
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", url.as_str()),
            ("HOME", "/nonexistent-home"),
        ];
        parlance(
            &[
                "run",
                "--model",
                "bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0",
                "hello",
            ],
            &vars,
        )
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Hello from Bedrock."), "{out}");
    let got = server.received();
    assert_eq!(
        got[0].path,
        "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    let auth = got[0].header("authorization").unwrap();
    assert!(
        auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDCLITEST/")
            && auth.contains("/us-west-2/bedrock/aws4_request"),
        "{auth}"
    );
    assert!(!out.contains("cli-secret") && !err.contains("cli-secret"));
    assert_eq!(got[0].body["messages"][0]["content"][0]["text"], "hello");
}

/// `parlance run --model SPEC hello` against a replay server streaming
/// `chunks`, with `vars` (the server's URL put in by `vars_for`).
async fn run_against(
    spec: &'static str,
    chunks: Vec<serde_json::Value>,
    vars_for: impl FnOnce(&str) -> Vec<(&'static str, String)> + Send + 'static,
) -> (i32, String, String, Vec<replay::Received>) {
    let mut frames: Vec<String> = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    frames.push("data: [DONE]\n\n".into());
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: frames,
        cut: false,
    }])
    .await;
    let url = server.url.clone();
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        let vars = vars_for(&url);
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        parlance(&["run", "--model", spec, "hello"], &vars)
    })
    .await
    .unwrap();
    (code, out, err, server.received())
}

#[tokio::test]
async fn deepseek_and_azure_from_the_registry_reach_their_urls_with_their_auth() {
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let chunks = vec![
        chunk(
            json!({"role": "assistant", "reasoning_content": "Say hello back."}),
            json!(null),
        ),
        chunk(json!({"content": "Hello back."}), json!("stop")),
    ];
    let (code, out, err, got) = run_against("deepseek:deepseek-reasoner", chunks.clone(), |url| {
        vec![
            ("DEEPSEEK_API_KEY", "sk-deepseek".to_string()),
            ("DEEPSEEK_BASE_URL", url.to_string()),
        ]
    })
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Hello back."), "{out}");
    assert_eq!(got[0].path, "/chat/completions");
    assert_eq!(got[0].header("authorization"), Some("Bearer sk-deepseek"));
    assert_eq!(got[0].body["model"], "deepseek-reasoner");

    let (code, out, err, got) = run_against("azure:my-gpt4o", chunks, |url| {
        vec![
            ("AZURE_OPENAI_API_KEY", "azure-key".to_string()),
            ("AZURE_OPENAI_ENDPOINT", url.to_string()),
            ("OPENAI_API_VERSION", "2024-10-21".to_string()),
        ]
    })
    .await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("Hello back."), "{out}");
    assert_eq!(
        got[0].path,
        "/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(got[0].header("api-key"), Some("azure-key"));
    assert_eq!(got[0].header("authorization"), None);
}
