//! Azure OpenAI over real HTTP on 127.0.0.1: the v1 and deployment URLs
//! (with `api-version`), the `api-key` header and Entra ID bearer tokens,
//! Azure's stream (a first chunk with no choices, choices with no delta),
//! its 429 (retried), 401 and content-filter answers, and the errors of a
//! model that cannot be built. The payloads are Azure's documented shapes
//! (see testdata/providers/openai-compatible/README.md).

mod common;

use common::http::{collect, env, quick_retries};
use common::{OPENAI_CHAT, RESPONSES, fixture, json_file, read};
use parlance_format::{FinishReason, Message};
use parlance_model::{Model, ModelError, ModelRequest, StreamEvent};
use parlance_providers::{BuildError, HttpModel, ModelBuilder, Provider};
use parlance_testkit::replay::{ReplayServer, Reply};
use serde_json::json;

const KEY: &str = "azure-key-SECRET-0123";
const TOKEN: &str = "eyJ0eXAiOiJKV1Q.entra.SECRET";

fn build(spec: &str, vars: &[(&str, &str)]) -> Result<HttpModel, BuildError> {
    ModelBuilder::from_spec(spec)?
        .http_config(quick_retries())
        .build_with_env(env(vars))
}

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::system("Be brief."), Message::user("Say hello.")],
        ..Default::default()
    }
}

fn chat_answer() -> serde_json::Value {
    json!({"id": "chatcmpl-az1", "object": "chat.completion", "created": 1, "model": "gpt-4o-2024-08-06",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
        "choices": [{"index": 0, "finish_reason": "stop", "content_filter_results": {},
            "message": {"role": "assistant", "content": "Hello there!", "refusal": null}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}})
}

fn azure_file(name: &str) -> std::path::PathBuf {
    fixture("openai-compatible", name)
}

#[tokio::test]
async fn v1_api_sends_the_key_in_api_key_and_the_deployment_as_model() {
    let server = ReplayServer::start(vec![Reply::json(200, &chat_answer())]).await;
    let m = build(
        "azure:my-gpt4o",
        &[
            ("AZURE_OPENAI_ENDPOINT", &server.url),
            ("AZURE_OPENAI_API_KEY", KEY),
        ],
    )
    .unwrap();
    let msg = m.generate(&request()).await.unwrap();
    assert_eq!(msg.text(), "Hello there!");
    let got = server.received();
    assert_eq!(got[0].path, "/openai/v1/chat/completions");
    assert_eq!(got[0].header("api-key"), Some(KEY));
    assert_eq!(got[0].header("authorization"), None);
    assert_eq!(got[0].body["model"], "my-gpt4o");
    OPENAI_CHAT.assert_valid(&got[0].body);
    assert!(!format!("{m:?}").contains(KEY), "the key never shows");
}

#[tokio::test]
async fn an_api_version_routes_chat_by_deployment() {
    let server = ReplayServer::start(vec![Reply::json(200, &chat_answer())]).await;
    let m = build(
        "azure:my-gpt4o",
        &[
            // An `/openai/v1` tail on the endpoint is not repeated.
            (
                "AZURE_OPENAI_ENDPOINT",
                &format!("{}/openai/v1/", server.url),
            ),
            ("AZURE_OPENAI_API_KEY", KEY),
            ("AZURE_OPENAI_API_VERSION", "2024-10-21"),
        ],
    )
    .unwrap();
    m.generate(&request()).await.unwrap();
    assert_eq!(
        server.received()[0].path,
        "/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21"
    );
    // OPENAI_API_VERSION (the SDKs' name) comes first; the builder's wins.
    let vars = [
        ("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com"),
        ("AZURE_OPENAI_API_KEY", KEY),
        ("OPENAI_API_VERSION", "2025-04-01-preview"),
        ("AZURE_OPENAI_API_VERSION", "2024-10-21"),
    ];
    let m = build("azure:d1", &vars).unwrap();
    assert_eq!(
        m.url(true),
        "https://res.openai.azure.com/openai/deployments/d1/chat/completions?api-version=2025-04-01-preview"
    );
    let m = ModelBuilder::from_spec("azure:d1")
        .unwrap()
        .api_version("2024-06-01")
        .build_with_env(env(&vars))
        .unwrap();
    assert!(
        m.url(false).ends_with("?api-version=2024-06-01"),
        "{}",
        m.url(false)
    );
}

#[tokio::test]
async fn responses_go_to_the_v1_api_or_the_versioned_responses_url() {
    let answer = json!({"id": "resp_1", "object": "response", "model": "gpt-5", "status": "completed",
        "output": [{"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Hello there!", "annotations": []}]}],
        "usage": {"input_tokens": 9, "output_tokens": 3, "total_tokens": 12}});
    let server =
        ReplayServer::start(vec![Reply::json(200, &answer), Reply::json(200, &answer)]).await;
    let base = [
        ("AZURE_OPENAI_ENDPOINT", server.url.as_str()),
        ("AZURE_OPENAI_API_KEY", KEY),
    ];
    let m = build("azure-responses:my-gpt5", &base).unwrap();
    assert_eq!(m.generate(&request()).await.unwrap().text(), "Hello there!");
    let mut versioned = base.to_vec();
    versioned.push(("OPENAI_API_VERSION", "2025-04-01-preview"));
    let m = build("azure-responses:my-gpt5", &versioned).unwrap();
    m.generate(&request()).await.unwrap();
    let got = server.received();
    assert_eq!(got[0].path, "/openai/v1/responses");
    assert_eq!(
        got[1].path,
        "/openai/responses?api-version=2025-04-01-preview"
    );
    for r in &got {
        assert_eq!(r.body["model"], "my-gpt5");
        assert_eq!(r.header("api-key"), Some(KEY));
        RESPONSES.assert_valid(&r.body);
    }
}

#[tokio::test]
async fn an_entra_id_token_is_sent_as_a_bearer_token() {
    let server = ReplayServer::start(vec![
        Reply::json(200, &chat_answer()),
        Reply::json(200, &chat_answer()),
    ])
    .await;
    let m = build(
        "azure:my-gpt4o",
        &[
            ("AZURE_OPENAI_ENDPOINT", &server.url),
            ("AZURE_OPENAI_AD_TOKEN", TOKEN),
        ],
    )
    .unwrap();
    m.generate(&request()).await.unwrap();
    // The builder's token, with no variable set.
    let m = ModelBuilder::from_spec("azure:my-gpt4o")
        .unwrap()
        .azure_ad_token("builder-token")
        .build_with_env(env(&[("AZURE_OPENAI_ENDPOINT", &server.url)]))
        .unwrap();
    m.generate(&request()).await.unwrap();
    let got = server.received();
    assert_eq!(
        got[0].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    assert_eq!(got[0].header("api-key"), None);
    assert_eq!(got[1].header("authorization"), Some("Bearer builder-token"));
}

#[tokio::test]
async fn the_stream_skips_the_prompt_filter_chunk_and_choices_without_delta() {
    let sse = read(&azure_file("azure__chat-stream.sse"));
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![sse],
        cut: false,
    }])
    .await;
    let (text, msg) = stream_text(&server).await;
    let msg = msg.expect("a final message");
    assert_eq!(text, "Hello there!");
    assert_eq!(msg.text(), "Hello there!");
    // The empty id and model of the filter chunks are not the answer's.
    assert_eq!(
        msg.id.as_deref(),
        Some("chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j")
    );
    assert_eq!(msg.model.as_deref(), Some("gpt-4o-2024-08-06"));
    assert_eq!(msg.finish_reason, Some(FinishReason::Stop));
    let usage = msg.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (9, 3));
    assert_eq!(server.received()[0].body["stream"], true);
}

/// The recorded stream's SSE events, each its own chunk on the wire.
fn azure_stream_events() -> Vec<String> {
    read(&azure_file("azure__chat-stream.sse"))
        .split_inclusive("\n\n")
        .map(str::to_string)
        .collect()
}

/// Streams `request()` from `server` to its end: the text that reached
/// the caller and the outcome.
async fn stream_text(server: &ReplayServer) -> (String, Result<Message, ModelError>) {
    let m = build(
        "azure:my-gpt4o",
        &[
            ("AZURE_OPENAI_ENDPOINT", &server.url),
            ("AZURE_OPENAI_API_KEY", KEY),
        ],
    )
    .unwrap();
    let (events, outcome) = collect(&m, &request()).await;
    let text = events
        .into_iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    (text, outcome)
}

#[tokio::test]
async fn a_stream_cut_mid_way_is_an_error_after_output_and_retried_before() {
    let events = azure_stream_events();
    // Cut after "Hello" reached the caller: an error, not retried (the
    // caller has seen part of an answer).
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: events[..3].to_vec(),
        cut: true,
    }])
    .await;
    let (text, m) = stream_text(&server).await;
    assert_eq!(text, "Hello");
    assert!(matches!(m, Err(ModelError::Network { .. })), "{m:?}");
    assert_eq!(server.received().len(), 1);

    // Cut after the prompt-filter chunk only (nothing reached the
    // caller): retried, and the second answer is whole.
    let server = ReplayServer::start(vec![
        Reply::Sse {
            chunks: events[..1].to_vec(),
            cut: true,
        },
        Reply::Sse {
            chunks: events.clone(),
            cut: false,
        },
    ])
    .await;
    let (text, m) = stream_text(&server).await;
    assert_eq!(text, "Hello there!");
    assert_eq!(m.unwrap().text(), "Hello there!");
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn a_429_is_retried_after_its_wait_and_a_401_is_not() {
    let limited = json_file(&azure_file("azure__rate-limit-error.json"));
    let server = ReplayServer::start(vec![
        Reply::json(429, &limited).with_header("retry-after", "0"),
        Reply::json(200, &chat_answer()),
        Reply::json(401, &json!({"error": {"code": "401", "message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}})),
    ])
    .await;
    let vars = [
        ("AZURE_OPENAI_ENDPOINT", server.url.as_str()),
        ("AZURE_OPENAI_API_KEY", KEY),
    ];
    let m = build("azure:my-gpt4o", &vars).unwrap();
    assert_eq!(m.generate(&request()).await.unwrap().text(), "Hello there!");
    assert_eq!(server.received().len(), 2, "one retry");
    let e = m.generate(&request()).await.unwrap_err();
    assert!(
        matches!(&e, ModelError::Authentication { message } if message.contains("invalid subscription key")),
        "{e:?}"
    );
    assert_eq!(server.received().len(), 3, "a 401 is not retried");
}

#[tokio::test]
async fn a_content_filter_refusal_is_an_invalid_request_naming_the_policy() {
    let body = json_file(&azure_file("azure__content-filter-error.json"));
    let server = ReplayServer::start(vec![Reply::json(400, &body)]).await;
    let vars = [
        ("AZURE_OPENAI_ENDPOINT", server.url.as_str()),
        ("AZURE_OPENAI_API_KEY", KEY),
    ];
    let e = build("azure:my-gpt4o", &vars)
        .unwrap()
        .generate(&request())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ModelError::InvalidRequest { message } if message.contains("content management policy")),
        "{e:?}"
    );
    assert_eq!(server.received().len(), 1, "not retried");
}

#[tokio::test]
async fn a_filtered_answer_finishes_with_content_filter() {
    let mut answer = chat_answer();
    answer["choices"][0]["finish_reason"] = json!("content_filter");
    answer["choices"][0]["message"]["content"] = json!(null);
    let server = ReplayServer::start(vec![Reply::json(200, &answer)]).await;
    let vars = [
        ("AZURE_OPENAI_ENDPOINT", server.url.as_str()),
        ("AZURE_OPENAI_API_KEY", KEY),
    ];
    let msg = build("azure:my-gpt4o", &vars)
        .unwrap()
        .generate(&request())
        .await
        .unwrap();
    assert_eq!(msg.finish_reason, Some(FinishReason::ContentFilter));
}

#[test]
fn what_is_missing_or_wrong_is_named_before_any_request() {
    let endpoint = ("AZURE_OPENAI_ENDPOINT", "https://res.openai.azure.com");
    let e = build("azure:d1", &[endpoint]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "AZURE_OPENAI_API_KEY is not set (nor AZURE_OPENAI_AD_TOKEN)"
    );
    // Even with a base URL given: Azure has no anonymous access.
    let e = ModelBuilder::from_spec("azure-responses:d1")
        .unwrap()
        .base_url("http://127.0.0.1:9")
        .build_with_env(env(&[]))
        .unwrap_err();
    assert!(matches!(e, BuildError::MissingKey { .. }), "{e}");
    let e = build("azure:d1", &[("AZURE_OPENAI_API_KEY", KEY)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "AZURE_OPENAI_ENDPOINT is not set: azure has no public base URL (set it, or give one with .base_url())"
    );
    let e = build(
        "azure:d1",
        &[
            endpoint,
            ("AZURE_OPENAI_API_KEY", KEY),
            ("OPENAI_API_VERSION", "2024 10 21"),
        ],
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Azure OpenAI api-version \"2024 10 21\""),
        "{e}"
    );
    let e = build(
        "azure:my/deployment",
        &[endpoint, ("AZURE_OPENAI_API_KEY", KEY)],
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Azure OpenAI deployment name \"my/deployment\""),
        "{e}"
    );
    // Azure's settings are refused by the other providers.
    let e = Provider::OPENAI
        .model("gpt-4o")
        .api_key("k")
        .api_version("2024-10-21")
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("only Azure OpenAI providers"), "{e}");
    let m = build(
        "azure-openai:d1",
        &[endpoint, ("AZURE_OPENAI_API_KEY", KEY)],
    )
    .unwrap();
    assert_eq!(
        m.url(false),
        "https://res.openai.azure.com/openai/v1/chat/completions"
    );
}
