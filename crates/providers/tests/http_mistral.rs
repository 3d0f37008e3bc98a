//! Mistral end to end over real HTTP on 127.0.0.1: a replay server answers
//! with the recorded payloads and Mistral's error bodies, and records what
//! Parlance sent (checked against Mistral's official schema).

mod common;

use common::http::{collect, quick_retries};
use common::{MISTRAL, chunk_lines, fixture, json_file, read};
use parlance_format::{FinishReason, Message, ToolCall, ToolResult, ToolStatus};
use parlance_model::{Model, ModelError, ModelRequest};
use parlance_providers::{HttpModel, Provider};
use parlance_testkit::replay::{ReplayServer, Reply, sse_frames};
use serde_json::json;

const KEY: &str = "mistral-test-SECRET-42";

fn model(server: &ReplayServer) -> HttpModel {
    Provider::MISTRAL
        .model("mistral-small-latest")
        .base_url(format!("{}/v1", server.url))
        .api_key(KEY)
        .http_config(quick_retries())
        .build()
        .unwrap()
}

/// A conversation with a foreign (OpenAI) call id, so the id mapping
/// travels over the wire.
fn request() -> ModelRequest {
    let mut answer = Message::assistant("");
    answer.content = vec![parlance_format::Block::ToolCall {
        tool_call: ToolCall::new("call_XYZ_1", "weather", json!({"location": "Paris"})),
    }];
    ModelRequest {
        messages: vec![
            Message::system("Be brief."),
            Message::user("Weather in Paris?"),
            answer,
            Message::new(
                parlance_format::Role::Tool,
                vec![parlance_format::Block::tool_result(ToolResult::text(
                    "call_XYZ_1",
                    ToolStatus::Ok,
                    "12 °C",
                ))],
            ),
        ],
        tools: vec![parlance_format::ToolSpec::new(
            "weather",
            "Weather",
            json!({"type": "object", "properties": {"location": {"type": "string"}}}),
        )]
        .into(),
        ..Default::default()
    }
}

fn stream_chunks() -> Vec<String> {
    let text = read(&fixture("mistral", "vercel__mistral-tool-call.chunks.txt"));
    let mut frames: Vec<(&str, String)> = chunk_lines(&text)
        .into_iter()
        .map(|(_, d)| ("", d))
        .collect();
    frames.push(("", "[DONE]".into()));
    sse_frames(&frames)
}

#[tokio::test]
async fn generate_sends_a_valid_mistral_request_and_decodes_the_answer() {
    let recorded = json_file(&fixture("mistral", "vercel__mistral-tool-call.json"));
    let server = ReplayServer::start(vec![Reply::json(200, &recorded)]).await;
    let m = model(&server).generate(&request()).await.unwrap();
    assert_eq!(m, (MISTRAL.decode_response)(&recorded).unwrap());
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, "/v1/chat/completions");
    assert_eq!(
        got[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    MISTRAL.assert_valid(&got[0].body);
    let body = &got[0].body;
    let id = body["messages"][2]["tool_calls"][0]["id"].as_str().unwrap();
    assert_eq!(id.len(), 9);
    assert_eq!(body["messages"][3]["tool_call_id"], json!(id));
}

#[tokio::test]
async fn a_stream_decodes_like_the_recording() {
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: stream_chunks(),
        cut: false,
    }])
    .await;
    let (events, m) = collect(&model(&server), &request()).await;
    let m = m.unwrap();
    assert!(!events.is_empty());
    assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(m.tool_calls().next().unwrap().id, "gSIMJiOkT");
    let sent = &server.received()[0].body;
    assert_eq!(sent["stream"], true);
    MISTRAL.assert_valid(sent);
}

#[tokio::test]
async fn a_stream_failing_mid_way_is_an_error_after_output_and_retried_before() {
    // Cut after the first chunk (output reached the caller): not retried.
    let chunks = stream_chunks();
    let first = chunks[0].clone();
    let text_chunk = sse_frames(&[(
        "",
        json!({"id": "x", "model": "m", "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": null}]}).to_string(),
    )]);
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: text_chunk,
        cut: true,
    }])
    .await;
    let (events, m) = collect(&model(&server), &request()).await;
    assert!(!events.is_empty());
    assert!(matches!(m, Err(ModelError::Network { .. })), "{m:?}");
    assert_eq!(server.received().len(), 1);

    // Cut before any output (the role-only first chunk): retried.
    let server = ReplayServer::start(vec![
        Reply::Sse {
            chunks: vec![first],
            cut: true,
        },
        Reply::Sse {
            chunks: stream_chunks(),
            cut: false,
        },
    ])
    .await;
    let (_, m) = collect(&model(&server), &request()).await;
    assert!(m.is_ok(), "{m:?}");
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_wait_asked_for() {
    let recorded = json_file(&fixture("mistral", "vercel__mistral-tool-call.json"));
    let server = ReplayServer::start(vec![
        Reply::json(429, &json!({"message": "Requests rate limit exceeded"}))
            .with_header("retry-after", "0"),
        Reply::json(200, &recorded),
    ])
    .await;
    let m = model(&server).generate(&request()).await.unwrap();
    assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(server.received().len(), 2);

    // Always limited: the typed error, after the retries.
    let limited = || {
        Reply::json(429, &json!({"message": "Requests rate limit exceeded"}))
            .with_header("retry-after", "0")
    };
    let server = ReplayServer::start(vec![limited(), limited(), limited()]).await;
    let e = model(&server).generate(&request()).await.unwrap_err();
    assert!(matches!(e, ModelError::RateLimited { .. }), "{e:?}");
    assert_eq!(server.received().len(), 3);
}

#[tokio::test]
async fn a_bad_key_is_an_authentication_error_not_retried_and_never_echoed() {
    let server =
        ReplayServer::start(vec![Reply::json(401, &json!({"detail": "Unauthorized"}))]).await;
    let e = model(&server).generate(&request()).await.unwrap_err();
    assert!(
        matches!(&e, ModelError::Authentication { message } if message == "Unauthorized"),
        "{e:?}"
    );
    assert_eq!(server.received().len(), 1);
    assert!(!format!("{e:?} {e}").contains(KEY));
    // Streamed too.
    let server =
        ReplayServer::start(vec![Reply::json(401, &json!({"detail": "Unauthorized"}))]).await;
    let (_, m) = collect(&model(&server), &request()).await;
    assert!(matches!(m, Err(ModelError::Authentication { .. })), "{m:?}");
}
