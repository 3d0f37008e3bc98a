//! Ollama's native API end to end over real HTTP on 127.0.0.1: a replay
//! server answers with Ollama's documented answers and NDJSON streams and
//! its `{"error"}` bodies, and records what Parlance sent (checked against
//! Ollama's OpenAPI document).

mod common;

use common::http::{collect, quick_retries};
use common::{OLLAMA, fixture, json_file, read};
use parlance_format::{FinishReason, Message};
use parlance_model::{Model, ModelError, ModelRequest};
use parlance_providers::{HttpModel, Provider};
use parlance_testkit::replay::{ReplayServer, Reply};
use serde_json::json;

/// Built from the environment as a user would: `OLLAMA_HOST` as
/// `host:port`, a key only when one is given.
fn model(server: &ReplayServer, key: Option<&str>) -> HttpModel {
    let host = server.url.trim_start_matches("http://").to_string();
    let key = key.map(str::to_string);
    Provider::OLLAMA
        .model("llama3.2")
        .http_config(quick_retries())
        .build_with_env(move |var| match var {
            "OLLAMA_HOST" => Some(host.clone()),
            "OLLAMA_API_KEY" => key.clone(),
            _ => None,
        })
        .unwrap()
}

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("what is the weather in tokyo?")],
        tools: vec![parlance_format::ToolSpec::new(
            "get_weather",
            "Get the weather in a given city",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        )].into(),
        ..Default::default()
    }
}

fn stream_lines() -> Vec<String> {
    read(&fixture(
        "ollama",
        "ollamadocs__chat-request-streaming-with-tools__stream.ndjson",
    ))
    .lines()
    .map(|l| format!("{l}\n"))
    .collect()
}

#[tokio::test]
async fn generate_with_no_key_sends_a_valid_request_to_api_chat() {
    let recorded = json_file(&fixture(
        "ollama",
        "ollamadocs__chat-request-no-streaming-with-tools__response.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(200, &recorded)]).await;
    let m = model(&server, None).generate(&request()).await.unwrap();
    assert_eq!(m, (OLLAMA.decode_response)(&recorded).unwrap());
    assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, "/api/chat");
    assert_eq!(
        got[0].header("authorization"),
        None,
        "a local server takes no key"
    );
    assert_eq!(got[0].body["stream"], false);
    OLLAMA.assert_valid(&got[0].body);
}

#[tokio::test]
async fn an_ndjson_stream_decodes_like_the_recording_and_the_cloud_key_is_sent() {
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: stream_lines(),
        cut: false,
    }])
    .await;
    let (events, m) = collect(&model(&server, Some("ollama-cloud-KEY")), &request()).await;
    let m = m.unwrap();
    assert!(!events.is_empty());
    let (_, want) = OLLAMA
        .decode_stream(&parlance_providers::transport::parse_ndjson(
            &stream_lines().concat(),
        ))
        .unwrap();
    assert_eq!(m, want);
    assert_eq!(
        m.tool_calls().next().unwrap().arguments,
        json!({"city": "Tokyo"})
    );
    let got = &server.received()[0];
    assert_eq!(got.body["stream"], true);
    assert_eq!(got.header("authorization"), Some("Bearer ollama-cloud-KEY"));
    OLLAMA.assert_valid(&got.body);
}

#[tokio::test]
async fn a_stream_failing_mid_way_is_an_error_after_output_and_retried_before() {
    // Ollama's mid-stream error line, after output: typed, not retried.
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![
            "{\"model\":\"llama3.2\",\"created_at\":\"t\",\"message\":{\"role\":\"assistant\",\"content\":\" Yes\"},\"done\":false}\n".into(),
            "{\"error\":\"an error was encountered while running the model\"}\n".into(),
        ],
        cut: false,
    }])
    .await;
    let (events, m) = collect(&model(&server, None), &request()).await;
    assert!(!events.is_empty());
    assert!(
        matches!(&m, Err(ModelError::Server { message, .. }) if message.contains("while running the model")),
        "{m:?}"
    );
    assert_eq!(server.received().len(), 1);

    // Cut after output: a network error, not retried.
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![stream_lines()[0].clone(), "{\"model\":\"ll".into()],
        cut: true,
    }])
    .await;
    let (_, m) = collect(&model(&server, None), &request()).await;
    assert!(matches!(m, Err(ModelError::Network { .. })), "{m:?}");
    assert_eq!(server.received().len(), 1);

    // The same error before any output: retried, and the retry answers.
    let server = ReplayServer::start(vec![
        Reply::Sse {
            chunks: vec![
                "{\"error\":\"an error was encountered while running the model\"}\n".into(),
            ],
            cut: false,
        },
        Reply::Sse {
            chunks: stream_lines(),
            cut: false,
        },
    ])
    .await;
    let (_, m) = collect(&model(&server, None), &request()).await;
    assert!(m.is_ok(), "{m:?}");
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn rate_limits_are_retried_and_a_missing_model_is_not() {
    let recorded = json_file(&fixture(
        "ollama",
        "ollamadocs__chat-request-no-streaming__response.json",
    ));
    let server = ReplayServer::start(vec![
        Reply::json(429, &json!({"error": "too many requests"})).with_header("retry-after", "0"),
        Reply::json(200, &recorded),
    ])
    .await;
    let m = model(&server, None).generate(&request()).await.unwrap();
    assert_eq!(m.text(), "Hello! How are you today?");
    assert_eq!(server.received().len(), 2);

    let server = ReplayServer::start(vec![Reply::json(
        404,
        &json!({"error": "model \"llama3.2\" not found, try pulling it first"}),
    )])
    .await;
    let e = model(&server, None).generate(&request()).await.unwrap_err();
    assert!(
        matches!(&e, ModelError::InvalidRequest { message } if message.contains("try pulling it first")),
        "{e:?}"
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_bad_cloud_key_is_an_authentication_error_never_echoed() {
    let server =
        ReplayServer::start(vec![Reply::json(401, &json!({"error": "unauthorized"}))]).await;
    let e = model(&server, Some("bad-KEY-123"))
        .generate(&request())
        .await
        .unwrap_err();
    assert!(matches!(e, ModelError::Authentication { .. }), "{e:?}");
    assert!(!format!("{e:?} {e}").contains("bad-KEY-123"));
    assert_eq!(server.received().len(), 1);
    let server =
        ReplayServer::start(vec![Reply::json(401, &json!({"error": "unauthorized"}))]).await;
    let (_, m) = collect(&model(&server, Some("bad-KEY-123")), &request()).await;
    assert!(matches!(m, Err(ModelError::Authentication { .. })), "{m:?}");
}
