//! End to end over real HTTP on 127.0.0.1: the adapters against a local
//! server that replays recorded responses and error bodies and records the
//! requests. Retries, typed errors, streams cut or failing mid-way.

mod common;

use std::time::{Duration, Instant};

use common::http::{collect, quick_retries};
use common::{ANTHROPIC, OPENAI_CHAT, json_file, yaml_file};
use futures::StreamExt;
use parlance_format::{FinishReason, Message};
use parlance_model::{Model, ModelError, ModelRequest, StreamEvent};
use parlance_providers::transport::parse_sse;
use parlance_providers::{HttpModel, Provider};
use parlance_testkit::replay::{ReplayServer, Reply, sse_frames};
use serde_json::{Value, json};

const KEY: &str = "sk-test-SECRET-0123456789";

fn build(provider: Provider, model: &str, base_url: String) -> HttpModel {
    provider
        .model(model)
        .base_url(base_url)
        .api_key(KEY)
        .http_config(quick_retries())
        .build()
        .unwrap()
}

fn openai(server: &ReplayServer) -> HttpModel {
    build(Provider::OPENAI, "gpt-test", format!("{}/v1", server.url))
}

fn anthropic(server: &ReplayServer) -> HttpModel {
    build(Provider::ANTHROPIC, "claude-test", server.url.clone())
}

fn fixture(dir: &str, name: &str) -> std::path::PathBuf {
    common::fixture(dir, name)
}

fn request() -> ModelRequest {
    ModelRequest {
        messages: vec![
            Message::system("Be brief."),
            Message::user("What's the weather like in San Francisco?"),
        ],
        tools: vec![parlance_format::ToolSpec::new(
            "get_weather",
            "Get the current weather for a location",
            json!({"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}),
        )].into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn openai_generate_sends_a_valid_request_and_decodes_the_answer() {
    let recorded = json_file(&fixture(
        "openai-chat",
        "lingua__toolCallRequest__chat-completions__response.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(200, &recorded)]).await;
    let m = openai(&server).generate(&request()).await.unwrap();
    assert_eq!(m, (OPENAI_CHAT.decode_response)(&recorded).unwrap());
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].path, "/v1/chat/completions");
    assert_eq!(
        got[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    OPENAI_CHAT.assert_valid(&got[0].body);
    assert_eq!(
        got[0].body["messages"][0],
        json!({"role": "system", "content": "Be brief."})
    );
}

#[tokio::test]
async fn several_http_clients_are_taken_in_turn() {
    // Over HTTP/2 each client is a connection of its own; taking them in
    // turn spreads requests past one connection's stream limit. Each
    // client here marks its requests, so the server sees which one sent.
    let recorded = json_file(&fixture(
        "openai-chat",
        "lingua__toolCallRequest__chat-completions__response.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(200, &recorded); 6]).await;
    // A client of one's own needs rustls' crypto provider installed first.
    parlance_providers::transport::install_crypto();
    let client = |name: &str| {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("x-client", name.parse().unwrap());
        reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .unwrap()
    };
    let model = Provider::OPENAI
        .model("gpt-test")
        .base_url(format!("{}/v1", server.url))
        .api_key(KEY)
        .http_config(quick_retries())
        .http_clients([client("a"), client("b"), client("c")])
        .build()
        .unwrap();
    for _ in 0..5 {
        model.generate(&request()).await.unwrap();
    }
    let order: Vec<_> = server
        .received()
        .iter()
        .map(|r| r.header("x-client").unwrap_or("none").to_string())
        .collect();
    assert_eq!(order, ["a", "b", "c", "a", "b"]);
    // No clients at all: the process's shared one (built in the
    // background), not an error.
    let model = Provider::OPENAI
        .model("gpt-test")
        .base_url(format!("{}/v1", server.url))
        .api_key(KEY)
        .http_clients([])
        .build()
        .unwrap();
    model.generate(&request()).await.unwrap();
    assert_eq!(server.received()[5].header("x-client"), None);
}

#[tokio::test]
async fn anthropic_generate_sends_headers_and_a_valid_request() {
    let recorded = json_file(&fixture(
        "anthropic",
        "lingua__toolCallRequest__anthropic__response.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(200, &recorded)]).await;
    let m = anthropic(&server).generate(&request()).await.unwrap();
    assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
    let got = &server.received()[0];
    assert_eq!(got.path, "/v1/messages");
    assert_eq!(got.header("x-api-key"), Some(KEY));
    assert_eq!(got.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(got.body["system"], json!("Be brief."));
    ANTHROPIC.assert_valid(&got.body);
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_wait_the_provider_asks_for() {
    let ok = json_file(&fixture("openai-chat", "vercel__openai-text.json"));
    let limited = json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
    let server = ReplayServer::start(vec![
        Reply::json(429, &limited).with_header("retry-after", "0.3"),
        Reply::json(200, &ok),
    ])
    .await;
    let t0 = Instant::now();
    let m = openai(&server).generate(&request()).await.unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(300),
        "waited for retry-after"
    );
    assert_eq!(m.finish_reason, Some(FinishReason::Stop));
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_up_to_the_limit() {
    let boom = json!({"error": {"message": "The server had an error", "type": "server_error"}});
    let server = ReplayServer::start(vec![
        Reply::json(500, &boom),
        Reply::json(500, &boom),
        Reply::json(500, &boom),
    ])
    .await;
    let e = openai(&server).generate(&request()).await.unwrap_err();
    assert_eq!(
        e,
        ModelError::Server {
            status: 500,
            message: "The server had an error".into()
        }
    );
    assert_eq!(server.received().len(), 3, "one try and two retries");
}

#[tokio::test]
async fn anthropic_overloaded_529_is_retried_then_typed() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let ok = json_file(&fixture(
        "anthropic",
        "lingua__stopSequencesParam__anthropic__response.json",
    ));
    let server =
        ReplayServer::start(vec![Reply::json(529, &overloaded), Reply::json(200, &ok)]).await;
    assert!(anthropic(&server).generate(&request()).await.is_ok());
    assert_eq!(server.received().len(), 2);

    let server = ReplayServer::start(vec![Reply::json(529, &overloaded); 3]).await;
    let e = anthropic(&server).generate(&request()).await.unwrap_err();
    assert!(matches!(e, ModelError::Overloaded { .. }), "{e:?}");
}

#[tokio::test]
async fn client_errors_and_quota_are_not_retried() {
    let doc = yaml_file(&fixture(
        "openai-chat",
        "pydantic__test_openai_web_search_tool_model_not_supported.yaml",
    ));
    let recorded = &doc["interactions"][0]["response"]["parsed_body"];
    let server = ReplayServer::start(vec![Reply::json(400, recorded)]).await;
    let e = openai(&server).generate(&request()).await.unwrap_err();
    assert!(
        matches!(&e, ModelError::InvalidRequest { message } if message == recorded["error"]["message"].as_str().unwrap()),
        "{e:?}"
    );
    assert_eq!(server.received().len(), 1);

    let quota = json_file(&common::fixture(
        "openai-responses",
        "vercel__openai-error.1.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(429, &quota)]).await;
    let e = openai(&server).generate(&request()).await.unwrap_err();
    assert!(matches!(e, ModelError::QuotaExceeded { .. }), "{e:?}");
    assert_eq!(
        server.received().len(),
        1,
        "insufficient_quota is never retried"
    );

    let auth = json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}});
    let server = ReplayServer::start(vec![Reply::json(401, &auth)]).await;
    let model = anthropic(&server);
    let e = model.generate(&request()).await.unwrap_err();
    assert!(matches!(e, ModelError::Authentication { .. }), "{e:?}");
    // The key appears nowhere a person or a log would see it.
    assert!(!format!("{e} {e:?} {model:?}").contains("SECRET"));
}

#[tokio::test]
async fn malformed_json_is_a_typed_error() {
    let server = ReplayServer::start(vec![Reply::Full {
        status: 200,
        headers: vec![],
        body: "{\"choices\": [".into(),
    }])
    .await;
    let e = openai(&server).generate(&request()).await.unwrap_err();
    assert!(matches!(e, ModelError::MalformedResponse { .. }), "{e:?}");
    assert_eq!(server.received().len(), 1);
}

fn anthropic_stream_text() -> String {
    let doc = yaml_file(&fixture(
        "anthropic",
        "pydantic__test_anthropic_model_thinking_part_stream.yaml",
    ));
    doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn streams_replayed_over_http_decode_like_the_recording() {
    let text = anthropic_stream_text();
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![text.clone()],
        cut: false,
    }])
    .await;
    let (events, m) = collect(&anthropic(&server), &request()).await;
    let (_, expected) = ANTHROPIC.decode_stream(&parse_sse(&text)).unwrap();
    assert_eq!(m.unwrap(), expected);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ThinkingDelta { .. }))
    );
    assert_eq!(server.received()[0].body["stream"], json!(true));

    let doc = yaml_file(&fixture(
        "openai-chat",
        "pydantic__test_run_stream_sync_streams_real_model.yaml",
    ));
    let text = doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_string();
    // Split mid-frame: the SSE framing must not care where chunks end.
    let (a, b) = text.split_at(text.len() / 2);
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![a.into(), b.into()],
        cut: false,
    }])
    .await;
    let (_, m) = collect(&openai(&server), &request()).await;
    let (_, expected) = OPENAI_CHAT.decode_stream(&parse_sse(&text)).unwrap();
    assert_eq!(m.unwrap(), expected);
    assert_eq!(
        server.received()[0].body["stream_options"],
        json!({"include_usage": true})
    );
}

fn anthropic_events() -> Vec<(String, String)> {
    parse_sse(&anthropic_stream_text())
}

#[tokio::test]
async fn an_error_event_before_any_output_is_retried() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let first = sse_frames(&[("error", overloaded.to_string())]);
    let second = vec![anthropic_stream_text()];
    let server = ReplayServer::start(vec![
        Reply::Sse {
            chunks: first,
            cut: false,
        },
        Reply::Sse {
            chunks: second,
            cut: false,
        },
    ])
    .await;
    let (_, m) = collect(&anthropic(&server), &request()).await;
    assert!(m.is_ok(), "{m:?}");
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn an_error_event_after_output_ends_the_stream_without_retry() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let events = anthropic_events();
    let mut frames: Vec<(&str, String)> = events
        .iter()
        .take(6)
        .map(|(n, d)| (n.as_str(), d.clone()))
        .collect();
    frames.push(("error", overloaded.to_string()));
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: sse_frames(&frames),
        cut: false,
    }])
    .await;
    let (seen, m) = collect(&anthropic(&server), &request()).await;
    assert!(!seen.is_empty(), "output reached the caller first");
    assert!(matches!(m, Err(ModelError::Overloaded { .. })), "{m:?}");
    assert_eq!(
        server.received().len(),
        1,
        "no retry once output was emitted"
    );
}

#[tokio::test]
async fn a_connection_cut_mid_stream() {
    let events = anthropic_events();
    let frames: Vec<(&str, String)> = events
        .iter()
        .take(6)
        .map(|(n, d)| (n.as_str(), d.clone()))
        .collect();
    // After output: a network error, not retried.
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: sse_frames(&frames),
        cut: true,
    }])
    .await;
    let (seen, m) = collect(&anthropic(&server), &request()).await;
    assert!(!seen.is_empty());
    assert!(matches!(m, Err(ModelError::Network { .. })), "{m:?}");
    assert_eq!(server.received().len(), 1);

    // Before output (only message_start arrived): retried.
    let start: Vec<(&str, String)> = events
        .iter()
        .take(1)
        .map(|(n, d)| (n.as_str(), d.clone()))
        .collect();
    let server = ReplayServer::start(vec![
        Reply::Sse {
            chunks: sse_frames(&start),
            cut: true,
        },
        Reply::Sse {
            chunks: vec![anthropic_stream_text()],
            cut: false,
        },
    ])
    .await;
    let (_, m) = collect(&anthropic(&server), &request()).await;
    assert!(m.is_ok(), "{m:?}");
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn streamed_http_errors_are_typed_and_retried_like_plain_ones() {
    let limited = json!({"error": {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}});
    let doc = yaml_file(&fixture(
        "openai-chat",
        "pydantic__test_run_stream_sync_streams_real_model.yaml",
    ));
    let text = doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_string();
    let server = ReplayServer::start(vec![
        Reply::json(429, &limited).with_header("retry-after-ms", "20"),
        Reply::Sse {
            chunks: vec![text],
            cut: false,
        },
    ])
    .await;
    let (_, m) = collect(&openai(&server), &request()).await;
    assert!(m.is_ok());
    assert_eq!(server.received().len(), 2);

    let bad: Value = json!({"error": {"message": "bad tool", "type": "invalid_request_error"}});
    let server = ReplayServer::start(vec![Reply::json(400, &bad)]).await;
    let (_, m) = collect(&openai(&server), &request()).await;
    assert_eq!(
        m,
        Err(ModelError::InvalidRequest {
            message: "bad tool".into()
        })
    );
}

fn responses(server: &ReplayServer) -> HttpModel {
    build(
        Provider::OPENAI_RESPONSES,
        "gpt-5",
        format!("{}/v1", server.url),
    )
}

fn gemini(server: &ReplayServer) -> HttpModel {
    build(
        Provider::GEMINI,
        "gemini-3-flash",
        format!("{}/v1beta", server.url),
    )
}

#[tokio::test]
async fn responses_requests_are_stateless_and_valid() {
    let recorded = json_file(&fixture(
        "openai-responses",
        "lingua__toolCallRequest__responses__response.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(200, &recorded)]).await;
    let m = responses(&server).generate(&request()).await.unwrap();
    assert_eq!(
        m.finish_reason,
        Some(FinishReason::ToolCalls),
        "inferred from the function_call item"
    );
    let got = &server.received()[0];
    assert_eq!(got.path, "/v1/responses");
    assert_eq!(got.body["store"], json!(false));
    assert_eq!(got.body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(got.body["instructions"], json!("Be brief."));
    common::RESPONSES.assert_valid(&got.body);
}

#[tokio::test]
async fn responses_in_stream_failures_are_typed_and_not_retried() {
    // Recorded: an `error` event (nested shape) then response.failed.
    let text: String = common::read(&fixture(
        "openai-responses",
        "vercel__openai-error.1.chunks.txt",
    ))
    .lines()
    .map(|l| format!("data: {l}\n\n"))
    .collect();
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![text],
        cut: false,
    }])
    .await;
    let (_, m) = collect(&responses(&server), &request()).await;
    assert!(matches!(m, Err(ModelError::QuotaExceeded { .. })), "{m:?}");
    assert_eq!(server.received().len(), 1);

    let doc = yaml_file(&fixture(
        "openai-responses",
        "pydantic__test_openai_responses_streaming_usage.yaml",
    ));
    let text = doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_string();
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![text.clone()],
        cut: false,
    }])
    .await;
    let (events, m) = collect(&responses(&server), &request()).await;
    let (_, expected) = common::RESPONSES.decode_stream(&parse_sse(&text)).unwrap();
    assert_eq!(m.unwrap(), expected);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolArgumentsDelta { .. }))
    );
}

#[tokio::test]
async fn gemini_retry_info_is_honoured_and_long_waits_go_to_the_caller() {
    let short = json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "slow down",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.25s"}]}});
    let ok = json_file(&fixture(
        "gemini",
        "lingua__toolCallRequest__google__response.json",
    ));
    let server = ReplayServer::start(vec![Reply::json(429, &short), Reply::json(200, &ok)]).await;
    let t0 = Instant::now();
    let m = gemini(&server).generate(&request()).await.unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(250),
        "waited for RetryInfo.retryDelay"
    );
    assert_eq!(
        m.finish_reason,
        Some(FinishReason::ToolCalls),
        "STOP with a function call"
    );
    let got = server.received();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].path, "/v1beta/models/gemini-3-flash:generateContent");
    assert_eq!(got[0].header("x-goog-api-key"), Some(KEY));
    common::GEMINI.assert_valid(&got[0].body);

    // The recorded 34.4 s wait is longer than this client accepts (5 s).
    let recorded = json_file(&fixture("gemini", "vercel__google-429-retry-info.json"));
    let server = ReplayServer::start(vec![Reply::json(429, &recorded)]).await;
    let e = gemini(&server).generate(&request()).await.unwrap_err();
    assert_eq!(e.retry_after(), Some(Duration::from_secs_f64(34.4)));
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn gemini_streams_over_http_with_crlf_framing() {
    let doc = yaml_file(&fixture(
        "gemini",
        "pydantic__test_google_streaming_tool_call_thought_signature.yaml",
    ));
    let text = doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("\r\n\r\n"));
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![text.clone()],
        cut: false,
    }])
    .await;
    let (_, m) = collect(&gemini(&server), &request()).await;
    let (_, expected) = common::GEMINI.decode_stream(&parse_sse(&text)).unwrap();
    let m = m.unwrap();
    assert_eq!(m, expected);
    assert!(m.tool_calls().next().unwrap().signature.is_some());
    assert_eq!(
        server.received()[0].path,
        "/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse"
    );
}

#[tokio::test]
async fn a_json_answer_to_a_stream_request_is_not_retried() {
    let recorded = json_file(&fixture("openai-chat", "vercel__openai-text.json"));
    let server = ReplayServer::start(vec![Reply::json(200, &recorded)]).await;
    let (_, m) = collect(&openai(&server), &request()).await;
    assert!(
        matches!(&m, Err(ModelError::MalformedResponse { message }) if message.starts_with("expected an event stream")),
        "{m:?}"
    );
    assert_eq!(server.received().len(), 1);
}

fn gemini_429(retry_delay: &str) -> Value {
    json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Resource has been exhausted",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}]}})
}

/// Issue 39: a wait no `Duration` holds, from a body or a header, is a
/// rate-limit error for the caller naming the wait, not a panic (which
/// over a stream used to end it as "no Done") and not a retry.
#[tokio::test]
async fn waits_beyond_any_duration_are_the_callers_rate_limit_error() {
    let huge = gemini_429("1844674407370955161534.4s");
    let server = ReplayServer::start(vec![Reply::json(429, &huge), Reply::json(429, &huge)]).await;
    let model = gemini(&server);
    let e = model.generate(&request()).await.unwrap_err();
    assert!(matches!(e, ModelError::RateLimited { .. }), "{e:?}");
    assert!(
        e.to_string()
            .contains("asked to wait more than 18446744073709551615s, longer than the longest wait retried, 5s"),
        "{e}"
    );
    let (_, streamed) = collect(&model, &request()).await;
    assert_eq!(streamed, Err(e), "the same error over a stream");
    assert_eq!(server.received().len(), 2, "neither was retried");

    let limited = json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
    for (name, value) in [("retry-after", "1e30"), ("retry-after-ms", "inf")] {
        let reply = Reply::json(429, &limited).with_header(name, value);
        let server = ReplayServer::start(vec![reply.clone(), reply]).await;
        let model = openai(&server);
        let e = model.generate(&request()).await.unwrap_err();
        assert!(
            matches!(e, ModelError::RateLimited { retry_after: Some(d), .. } if d == Duration::MAX),
            "{name}: {value}: {e:?}"
        );
        assert!(e.to_string().contains("asked to wait"), "{e}");
        let (_, streamed) = collect(&model, &request()).await;
        assert_eq!(streamed, Err(e), "{name}: {value}");
        assert_eq!(server.received().len(), 2, "{name}: {value}: not retried");
    }
}

/// Issue 39: a wait that is no wait (negative, NaN) is ignored: the error
/// is retried after the policy's own backoff.
#[tokio::test]
async fn waits_that_are_not_waits_fall_back_to_the_backoff() {
    let ok = json_file(&fixture(
        "gemini",
        "lingua__toolCallRequest__google__response.json",
    ));
    let server = ReplayServer::start(vec![
        Reply::json(429, &gemini_429("-1s")),
        Reply::json(200, &ok),
    ])
    .await;
    gemini(&server).generate(&request()).await.unwrap();
    assert_eq!(server.received().len(), 2);

    let ok = json_file(&fixture("openai-chat", "vercel__openai-text.json"));
    let limited = json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}});
    for (name, value) in [("retry-after-ms", "NaN"), ("retry-after", "-1")] {
        let server = ReplayServer::start(vec![
            Reply::json(429, &limited).with_header(name, value),
            Reply::json(200, &ok),
        ])
        .await;
        let t0 = Instant::now();
        openai(&server).generate(&request()).await.unwrap();
        assert!(
            t0.elapsed() < Duration::from_secs(2),
            "{name}: {value}: the backoff's few ms"
        );
        assert_eq!(server.received().len(), 2, "{name}: {value}");
    }
}

/// Issue 39: a panic while a stream is read (a decoder's bug) ends the
/// stream with an error holding the panic's message; it used to end the
/// stream silently ("stream ended before the message was complete").
#[tokio::test]
async fn a_panicking_stream_decoder_ends_the_stream_with_its_message() {
    use parlance_providers::transport::{HttpRequest, StreamDecoder};
    struct Panics;
    impl StreamDecoder for Panics {
        fn event(&mut self, _: &str, _: &str) -> Result<Vec<StreamEvent>, ModelError> {
            panic!("decoder bug")
        }
        fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
            Ok(Vec::new())
        }
    }
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![anthropic_stream_text()],
        cut: false,
    }])
    .await;
    let transport = parlance_providers::Transport::new(quick_retries()).unwrap();
    let classify = parlance_providers::wire_format("anthropic")
        .unwrap()
        .classify;
    let events: Vec<_> = transport
        .post_sse(
            HttpRequest::new(server.url.clone(), b"{}".to_vec()),
            classify,
            || Panics,
        )
        .collect()
        .await;
    assert_eq!(
        events,
        [Err(ModelError::MalformedResponse {
            message: "reading the answer panicked: decoder bug".into()
        })]
    );
}

/// Captured log lines (a `MakeWriter` over a shared buffer).
#[derive(Clone, Default)]
struct Logs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;
    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}

/// Issue 37, item 8: what a request leaves out (here Anthropic's signed
/// thinking, which OpenAI cannot take) is a warning the user sees, once
/// per model and drop: a conversation sends its history on every turn.
#[tokio::test]
async fn a_drop_is_a_warning_once_per_model() {
    let logs = Logs::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(logs.clone())
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let answer = json_file(&fixture("openai-chat", "vercel__openai-text.json"));
    let server = ReplayServer::start(vec![Reply::json(200, &answer); 3]).await;
    let model = openai(&server);
    let mut req = request();
    let mut thought = Message::assistant("Sunny.");
    thought.content.insert(
        0,
        parlance_format::Block::Thinking(parlance_format::Thinking {
            thinking: "Look it up.".into(),
            signature: Some("sig".into()),
            provider: Some("anthropic".into()),
            ..Default::default()
        }),
    );
    req.messages.push(thought);
    req.messages.push(Message::user("And tomorrow?"));
    model.generate(&req).await.unwrap();
    model.generate(&req).await.unwrap();
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    let warned: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("thinking dropped"))
        .collect();
    assert_eq!(warned.len(), 1, "{text}");
    assert!(
        warned[0].contains("WARN") && warned[0].contains("messages[2]"),
        "{text}"
    );
    // Another model (a new conversation's, or another server's) says it again.
    openai(&server).generate(&req).await.unwrap();
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("thinking dropped"))
            .count(),
        2,
        "{text}"
    );
}
