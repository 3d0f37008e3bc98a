//! A fallback over real HTTP on 127.0.0.1: Anthropic's adapter against one
//! replay server, OpenAI's against another. A 429 and a 503 move on, a 400
//! does not; a thread holding Anthropic's signed thinking reaches OpenAI
//! as a request valid against OpenAI's specification, the signatures
//! dropped; a stream moves on only before its first event; a 429 with a
//! `retry-after` keeps the first model out until then.

mod common;

use common::http::{collect, quick_retries};
use common::{ANTHROPIC, OPENAI_CHAT, json_file, yaml_file};
use parlance_format::{Block, Message, Role};
use parlance_model::{Fallback, IntoModel, Model, ModelError, ModelRequest};
use parlance_providers::transport::parse_sse;
use parlance_providers::{Provider, RetryPolicy};
use parlance_testkit::replay::{ReplayServer, Reply, sse_frames};
use serde_json::{Value, json};

const KEY: &str = "sk-test-SECRET-0123456789";

/// Anthropic first, OpenAI second, each without retries of its own (a
/// fallback moves on at once).
fn fallback(anthropic: &ReplayServer, openai: &ReplayServer) -> Fallback {
    let a = Provider::ANTHROPIC
        .model("claude-test")
        .base_url(anthropic.url.clone())
        .api_key(KEY)
        .http_config(quick_retries())
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let o = Provider::OPENAI
        .model("gpt-test")
        .base_url(format!("{}/v1", openai.url))
        .api_key(KEY)
        .http_config(quick_retries())
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    Fallback::new([a.into_model(), o.into_model()]).unwrap()
}

fn openai_answer() -> Value {
    json_file(&common::fixture("openai-chat", "vercel__openai-text.json"))
}

fn anthropic_error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::system("Be brief."), Message::user("Hello?")],
        ..Default::default()
    }
}

/// Anthropic's whole conversation with signed thinking and tool calls,
/// as canonical messages (its answer decoded by Parlance, with its
/// provider tags), then one more question.
fn signed_thread() -> ModelRequest {
    let doc = yaml_file(&common::fixture(
        "anthropic",
        "pydantic__test_anthropic_tool_with_thinking.yaml",
    ));
    let followup = &doc["interactions"][1]["request"]["parsed_body"];
    let mut req = (ANTHROPIC.decode_request)(followup).unwrap().request;
    let answer =
        (ANTHROPIC.decode_response)(&doc["interactions"][0]["response"]["parsed_body"]).unwrap();
    let i = req
        .messages
        .iter()
        .position(|m| m.role == Role::Assistant)
        .unwrap();
    req.messages[i] = answer;
    assert!(req.messages.iter().any(|m| {
        m.content
            .iter()
            .any(|b| matches!(b, Block::Thinking(t) if t.signature.is_some()))
    }));
    req
}

#[tokio::test]
async fn a_429_falls_back_and_the_signed_thread_is_a_valid_openai_request() {
    let anthropic = ReplayServer::start(vec![Reply::json(
        429,
        &anthropic_error(
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        ),
    )])
    .await;
    let openai = ReplayServer::start(vec![Reply::json(200, &openai_answer())]).await;
    let f = fallback(&anthropic, &openai);
    let thread = signed_thread();
    let m = f.generate(&thread).await.unwrap();
    assert_eq!(m.provider.as_deref(), Some("openai"));
    assert_eq!(m, {
        let mut expected = (OPENAI_CHAT.decode_response)(&openai_answer()).unwrap();
        expected.metadata = m.metadata.clone();
        expected
    });
    assert_eq!(
        m.metadata.as_ref().unwrap()["parlance_fallback"][0]["reason"],
        "rate_limited"
    );
    // Anthropic got its own signatures back; OpenAI a valid request
    // without them.
    let sent_anthropic = &anthropic.received()[0].body;
    ANTHROPIC.assert_valid(sent_anthropic);
    assert!(sent_anthropic.to_string().contains("\"signature\""));
    let got = openai.received();
    assert_eq!(got.len(), 1);
    OPENAI_CHAT.assert_valid(&got[0].body);
    let body = got[0].body.to_string();
    assert!(!body.contains("signature"), "{body}");
    assert!(body.contains("gpt-test"));
}

#[tokio::test]
async fn a_503_falls_back() {
    let anthropic = ReplayServer::start(vec![Reply::json(
        503,
        &anthropic_error("api_error", "Service unavailable"),
    )])
    .await;
    let openai = ReplayServer::start(vec![Reply::json(200, &openai_answer())]).await;
    let m = fallback(&anthropic, &openai)
        .generate(&request())
        .await
        .unwrap();
    assert_eq!(m.provider.as_deref(), Some("openai"));
    assert_eq!(anthropic.received().len(), 1);
    assert_eq!(openai.received().len(), 1);
}

#[tokio::test]
async fn a_400_does_not_fall_back() {
    let anthropic = ReplayServer::start(vec![Reply::json(
        400,
        &anthropic_error("invalid_request_error", "messages: roles must alternate"),
    )])
    .await;
    let openai = ReplayServer::start(vec![Reply::json(200, &openai_answer())]).await;
    let e = fallback(&anthropic, &openai)
        .generate(&request())
        .await
        .unwrap_err();
    assert_eq!(
        e,
        ModelError::InvalidRequest {
            message: "model[0] anthropic:claude-test: messages: roles must alternate".into()
        }
    );
    assert!(openai.received().is_empty(), "OpenAI is never asked");
}

#[tokio::test]
async fn when_both_fail_the_error_names_each() {
    let anthropic = ReplayServer::start(vec![Reply::json(
        529,
        &anthropic_error("overloaded_error", "Overloaded"),
    )])
    .await;
    let boom = json!({"error": {"message": "The server had an error", "type": "server_error"}});
    let openai = ReplayServer::start(vec![Reply::json(500, &boom)]).await;
    let e = fallback(&anthropic, &openai)
        .generate(&request())
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "provider error (HTTP 500): model[1] openai:gpt-test: The server had an error \
         (before it: model[0] anthropic:claude-test: provider overloaded: Overloaded)"
    );
}

#[tokio::test]
async fn a_429_with_retry_after_keeps_the_model_out_until_then() {
    let anthropic = ReplayServer::start(vec![
        Reply::json(429, &anthropic_error("rate_limit_error", "slow down"))
            .with_header("retry-after", "30"),
    ])
    .await;
    let openai = ReplayServer::start(vec![
        Reply::json(200, &openai_answer()),
        Reply::json(200, &openai_answer()),
    ])
    .await;
    let f = fallback(&anthropic, &openai);
    f.generate(&request()).await.unwrap();
    let m = f.generate(&request()).await.unwrap();
    assert_eq!(anthropic.received().len(), 1, "skipped while cooling down");
    assert_eq!(openai.received().len(), 2);
    assert_eq!(
        m.metadata.as_ref().unwrap()["parlance_fallback"][0]["reason"],
        "cooling_down"
    );
}

fn openai_stream() -> String {
    let doc = yaml_file(&common::fixture(
        "openai-chat",
        "pydantic__test_run_stream_sync_streams_real_model.yaml",
    ));
    doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_string()
}

fn anthropic_stream() -> String {
    let doc = yaml_file(&common::fixture(
        "anthropic",
        "pydantic__test_anthropic_model_thinking_part_stream.yaml",
    ));
    doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn a_stream_falls_back_before_its_first_event() {
    // Anthropic's stream opens with an overloaded error event, then the
    // HTTP 503 of a stream request: both before any event.
    for first in [
        Reply::Sse {
            chunks: sse_frames(&[(
                "error",
                anthropic_error("overloaded_error", "Overloaded").to_string(),
            )]),
            cut: false,
        },
        Reply::json(503, &anthropic_error("api_error", "Service unavailable")),
    ] {
        let anthropic = ReplayServer::start(vec![first]).await;
        let text = openai_stream();
        let openai = ReplayServer::start(vec![Reply::Sse {
            chunks: vec![text.clone()],
            cut: false,
        }])
        .await;
        let (events, m) = collect(&fallback(&anthropic, &openai), &request()).await;
        let m = m.unwrap();
        let (expected_events, expected) = OPENAI_CHAT.decode_stream(&parse_sse(&text)).unwrap();
        assert_eq!(events.len() + 1, expected_events.len());
        assert_eq!(m.content, expected.content);
        assert_eq!(m.provider.as_deref(), Some("openai"));
        assert!(m.metadata.as_ref().unwrap()["parlance_fallback"][0].is_object());
        assert_eq!(openai.received()[0].body["stream"], json!(true));
        OPENAI_CHAT.assert_valid(&openai.received()[0].body);
    }
}

#[tokio::test]
async fn after_its_first_event_a_stream_does_not_fall_back() {
    // Anthropic's stream, cut after a few events.
    let frames = parse_sse(&anthropic_stream());
    let start: Vec<(&str, String)> = frames[..6]
        .iter()
        .map(|(e, d)| (e.as_str(), d.clone()))
        .collect();
    let anthropic = ReplayServer::start(vec![Reply::Sse {
        chunks: sse_frames(&start),
        cut: true,
    }])
    .await;
    let openai = ReplayServer::start(vec![Reply::json(200, &openai_answer())]).await;
    let (events, m) = collect(&fallback(&anthropic, &openai), &request()).await;
    assert!(!events.is_empty(), "events reached the caller");
    let e = m.unwrap_err();
    assert!(matches!(e, ModelError::Network { .. }), "{e:?}");
    assert!(openai.received().is_empty(), "OpenAI is never asked");
}
