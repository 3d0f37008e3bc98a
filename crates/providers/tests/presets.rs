//! The OpenAI-compatible presets: each one's registry entry, its reasoning
//! fields read from responses and streams, and — over real HTTP on
//! 127.0.0.1 — reasoning going back to the host that produced it (DeepSeek's
//! `reasoning_content`, OpenRouter's `reasoning_details`, Ollama's
//! `reasoning`) and never to another. Payloads: the hosts' documented
//! shapes (testdata/providers/openai-compatible/README.md) and Ollama's
//! recorded cassette.

mod common;

use std::time::Duration;

use common::http::env;
use common::{fixture, json_file, read, thinking, yaml_file};
use parlance_format::{Block, Message, Role, ToolResult, ToolStatus};
use parlance_model::{Effort, Model, ModelOptions, ModelRequest, Reasoning, StreamEvent};
use parlance_providers::{
    BuildError, HttpConfig, HttpModel, ModelBuilder, PROVIDERS, Provider, RetryPolicy,
    decode_stream, openai_chat, transport::parse_sse,
};
use parlance_testkit::replay::{ReplayServer, Reply};
use serde_json::{Value, json};

fn file(name: &str) -> std::path::PathBuf {
    fixture("openai-compatible", name)
}

fn at(provider: Provider, model: &str, server: &ReplayServer) -> HttpModel {
    provider
        .model(model)
        .base_url(format!("{}/v1", server.url))
        .api_key("sk-test")
        .http_config(HttpConfig {
            retry: RetryPolicy {
                max_retries: 0,
                ..RetryPolicy::default()
            },
            idle_timeout: Duration::from_secs(5),
            ..HttpConfig::default()
        })
        .build()
        .unwrap()
}

#[test]
fn every_preset_has_its_base_url_key_variable_and_dialect() {
    // (spec, format provider, default chat URL, key variable)
    let cases = [
        (
            "deepseek:deepseek-reasoner",
            "deepseek",
            "https://api.deepseek.com/chat/completions",
            Some("DEEPSEEK_API_KEY"),
        ),
        (
            "openrouter:anthropic/claude-sonnet-4.5",
            "openrouter",
            "https://openrouter.ai/api/v1/chat/completions",
            Some("OPENROUTER_API_KEY"),
        ),
        (
            "groq:openai/gpt-oss-120b",
            "groq",
            "https://api.groq.com/openai/v1/chat/completions",
            Some("GROQ_API_KEY"),
        ),
        (
            "together:deepseek-ai/DeepSeek-R1",
            "together",
            "https://api.together.xyz/v1/chat/completions",
            Some("TOGETHER_API_KEY"),
        ),
        (
            "fireworks:accounts/fireworks/models/deepseek-r1",
            "fireworks",
            "https://api.fireworks.ai/inference/v1/chat/completions",
            Some("FIREWORKS_API_KEY"),
        ),
        (
            "xai:grok-4",
            "xai",
            "https://api.x.ai/v1/chat/completions",
            Some("XAI_API_KEY"),
        ),
        (
            "cerebras:gpt-oss-120b",
            "cerebras",
            "https://api.cerebras.ai/v1/chat/completions",
            Some("CEREBRAS_API_KEY"),
        ),
        (
            "lmstudio:qwen/qwen3-8b",
            "lmstudio",
            "http://localhost:1234/v1/chat/completions",
            None,
        ),
        (
            "ollama-openai:qwen3:8b",
            "ollama",
            "http://localhost:11434/v1/chat/completions",
            None,
        ),
    ];
    for (spec, provider, url, key) in cases {
        let vars: Vec<(&str, &str)> = key.map(|k| (k, "k")).into_iter().collect();
        let m = ModelBuilder::from_spec(spec)
            .unwrap()
            .build_with_env(env(&vars))
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(
            m.format().name,
            "openai-chat",
            "{spec}: the wire is Chat Completions"
        );
        assert_eq!(m.format().provider, provider, "{spec}");
        assert_eq!(m.provider(), provider, "{spec}");
        assert_eq!(m.url(false), url, "{spec}");
        assert_eq!(m.url(true), url, "{spec}");
        if let Some(var) = key {
            // A hosted service: the key is named before any request.
            let e = ModelBuilder::from_spec(spec)
                .unwrap()
                .build_with_env(env(&[]))
                .unwrap_err();
            assert_eq!(e.to_string(), format!("{var} is not set"), "{spec}");
        }
    }
    // Each base URL variable moves its preset (and the key becomes optional).
    for p in PROVIDERS
        .iter()
        .filter(|p| p.access == parlance_providers::Access::Standard)
    {
        let m = p
            .model("m")
            .build_with_env(env(&[(p.base_url_env, "http://127.0.0.1:9/x/")]))
            .unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert!(
            m.url(false).starts_with("http://127.0.0.1:9/x/"),
            "{}: {}",
            p.name,
            m.url(false)
        );
    }
    // vLLM has no public base URL: it is asked for by name.
    let e = ModelBuilder::from_spec("vllm:Qwen/Qwen3-8B")
        .unwrap()
        .build_with_env(env(&[]))
        .unwrap_err();
    assert_eq!(
        e,
        BuildError::NoBaseUrl {
            provider: "vllm",
            var: "VLLM_BASE_URL"
        }
    );
    let m = ModelBuilder::from_spec("vllm:Qwen/Qwen3-8B")
        .unwrap()
        .build_with_env(env(&[("VLLM_BASE_URL", "http://localhost:8000/v1")]))
        .unwrap();
    assert_eq!(m.url(false), "http://localhost:8000/v1/chat/completions");
    assert_eq!(Provider::named("lm-studio").unwrap().name, "lmstudio");
}

#[test]
fn each_host_reasoning_field_is_read_and_marked_with_the_host() {
    let deepseek = json_file(&file("deepseek__thinking-tool-call.json"));
    let m = (openai_chat::DEEPSEEK.decode_response)(&deepseek).unwrap();
    let t = thinking(&m);
    assert_eq!(t.len(), 1);
    assert!(
        t[0].thinking
            .starts_with("The user asks for tomorrow's weather")
    );
    assert_eq!(t[0].provider.as_deref(), Some("deepseek"));
    assert_eq!(m.provider.as_deref(), Some("deepseek"));
    assert_eq!(m.tool_calls().count(), 1);
    assert_eq!(m.usage.unwrap().cached_tokens, 384);
    // DeepSeek's own cache count when there are no details.
    let answer = json_file(&file("deepseek__answer.json"));
    let m = (openai_chat::DEEPSEEK.decode_response)(&answer).unwrap();
    assert_eq!(m.usage.unwrap().cached_tokens, 448);

    let groq = json_file(&file("groq__reasoning.json"));
    let m = (openai_chat::GROQ.decode_response)(&groq).unwrap();
    assert!(thinking(&m)[0].thinking.contains("Rayleigh"));
    assert_eq!(thinking(&m)[0].provider.as_deref(), Some("groq"));

    // Ollama's OpenAI endpoint, recorded: `reasoning`.
    let cassette = yaml_file(&fixture(
        "ollama",
        "pydantic__test_ollama_cloud_tool_output.yaml",
    ));
    let body = &cassette["interactions"][0]["response"]["parsed_body"];
    let m = (openai_chat::OLLAMA.decode_response)(body).unwrap();
    assert!(
        thinking(&m)[0]
            .thinking
            .starts_with("We need to answer question")
    );
    assert_eq!(m.text(), "Paris.");

    // OpenRouter: the readable text, and the details kept whole.
    let or = json_file(&file("openrouter__reasoning-details.json"));
    let m = (openai_chat::OPENROUTER.decode_response)(&or).unwrap();
    let t = thinking(&m);
    assert_eq!(t.len(), 1);
    assert_eq!(
        t[0].thinking,
        "The user wants the weather in Boston: call get_weather."
    );
    assert_eq!(t[0].provider.as_deref(), Some("openrouter"));
    let kept: Value = serde_json::from_str(t[0].encrypted_content.as_deref().unwrap()).unwrap();
    assert_eq!(kept, or["choices"][0]["message"]["reasoning_details"]);
    // The same body read as OpenAI's: no host mark.
    let m = (openai_chat::FORMAT.decode_response)(&deepseek).unwrap();
    assert_eq!(thinking(&m)[0].provider, None);
    assert_eq!(m.provider.as_deref(), Some("openai"));
}

#[test]
fn streams_carry_the_reasoning_and_openrouter_details_join_by_index() {
    let events = parse_sse(&read(&file("deepseek__stream.sse")));
    let (deltas, m) = decode_stream(&openai_chat::DEEPSEEK, &events).unwrap();
    let streamed: String = deltas
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ThinkingDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "9.11 vs 9.9: 0.90 > 0.11.");
    assert_eq!(thinking(&m)[0].thinking, streamed);
    assert_eq!(thinking(&m)[0].provider.as_deref(), Some("deepseek"));
    assert_eq!(m.text(), "9.9 is greater.");

    let events = parse_sse(&read(&file("openrouter__stream.sse")));
    let (_, m) = decode_stream(&openai_chat::OPENROUTER, &events).unwrap();
    let t = thinking(&m);
    assert_eq!(t.len(), 1);
    assert_eq!(
        t[0].thinking, "Two plus two is four.",
        "the text once, not twice"
    );
    let kept: Value = serde_json::from_str(t[0].encrypted_content.as_deref().unwrap()).unwrap();
    assert_eq!(
        kept,
        json!([{"type": "reasoning.text", "text": "Two plus two is four.", "signature": "EqQBCkgIARABGAIiQSTREAM-SIG", "format": "anthropic-claude-v1", "index": 0}])
    );
    assert_eq!(m.text(), "4");
    assert_eq!(m.usage.unwrap().input_tokens, 14);
}

fn weather_request() -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("Weather in Boston tomorrow?")],
        tools: vec![parlance_format::ToolSpec::new(
            "get_weather",
            "Current weather",
            json!({"type": "object", "properties": {"location": {"type": "string"}}}),
        )]
        .into(),
        ..Default::default()
    }
}

/// The second turn: the first answer and a result for each of its calls.
fn second_turn(mut req: ModelRequest, answer: Message) -> ModelRequest {
    let results = answer
        .tool_calls()
        .map(|c| Block::tool_result(ToolResult::text(&c.id, ToolStatus::Ok, "12°C, cloudy")))
        .collect();
    req.messages.push(answer);
    req.messages.push(Message::new(Role::Tool, results));
    req
}

#[tokio::test]
async fn deepseek_gets_its_reasoning_content_back_on_the_next_turn() {
    let server = ReplayServer::start(vec![
        Reply::json(200, &json_file(&file("deepseek__thinking-tool-call.json"))),
        Reply::json(200, &json_file(&file("deepseek__answer.json"))),
    ])
    .await;
    let m = at(Provider::DEEPSEEK, "deepseek-reasoner", &server);
    let req = weather_request();
    let first = m.generate(&req).await.unwrap();
    let req = second_turn(req, first.clone());
    let last = m.generate(&req).await.unwrap();
    assert!(last.text().starts_with("Tomorrow"));
    let got = server.received();
    assert_eq!(got[1].path, "/v1/chat/completions");
    let assistant = &got[1].body["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["reasoning_content"],
        json!(thinking(&first)[0].thinking)
    );
    assert_eq!(
        assistant["tool_calls"][0]["id"],
        "call_00_T2dQ5ZzEfFrJ3p9pBxLh1Hq3"
    );
    assert_eq!(got[1].body["messages"][2]["role"], "tool");
    // The first request had no reasoning to send.
    assert!(
        got[0].body["messages"][0]
            .get("reasoning_content")
            .is_none()
    );
}

#[tokio::test]
async fn a_tool_call_turn_without_deepseek_reasoning_gets_an_empty_one() {
    // A call made by another model (or with no reasoning): DeepSeek's
    // thinking mode refuses a tool-call turn without the field.
    let server = ReplayServer::start(vec![Reply::json(
        200,
        &json_file(&file("deepseek__answer.json")),
    )])
    .await;
    let m = at(Provider::DEEPSEEK, "deepseek-reasoner", &server);
    let mut foreign = (openai_chat::OPENROUTER.decode_response)(&json_file(&file(
        "openrouter__reasoning-details.json",
    )))
    .unwrap();
    foreign.provider = Some("openrouter".into());
    let req = second_turn(weather_request(), foreign);
    let enc = (openai_chat::DEEPSEEK.encode_request)(&req, "deepseek-reasoner", false).unwrap();
    assert!(
        enc.warnings.iter().any(|w| w.contains(
            "thinking dropped (from openrouter: deepseek takes back only its own reasoning)"
        )),
        "{:?}",
        enc.warnings
    );
    m.generate(&req).await.unwrap();
    let body = &server.received()[0].body;
    assert_eq!(body["messages"][1]["reasoning_content"], "");
    let text = body.to_string();
    assert!(
        !text.contains("SIG-OPENROUTER") && !text.contains("ENC-OPENROUTER"),
        "{text}"
    );
}

#[tokio::test]
async fn openrouter_gets_its_reasoning_details_back_unchanged() {
    let recorded = json_file(&file("openrouter__reasoning-details.json"));
    let server = ReplayServer::start(vec![
        Reply::json(200, &recorded),
        Reply::json(200, &json_file(&file("openrouter__answer.json"))),
    ])
    .await;
    let m = at(Provider::OPENROUTER, "anthropic/claude-sonnet-4.5", &server);
    let mut req = weather_request();
    req.options = ModelOptions {
        reasoning: Some(Reasoning {
            effort: Some(Effort::High),
            ..Default::default()
        }),
        ..Default::default()
    };
    let first = m.generate(&req).await.unwrap();
    // Through the canonical JSON and back, as a stored thread would be.
    let first: Message = serde_json::from_str(&serde_json::to_string(&first).unwrap()).unwrap();
    let req = second_turn(req, first);
    let last = m.generate(&req).await.unwrap();
    assert_eq!(last.text(), "It is 12°C and cloudy in Boston.");
    let got = server.received();
    assert_eq!(got[0].body["reasoning"], json!({"effort": "high"}));
    let assistant = &got[1].body["messages"][1];
    assert_eq!(
        assistant["reasoning_details"], recorded["choices"][0]["message"]["reasoning_details"],
        "byte for byte"
    );
    assert_eq!(assistant["tool_calls"][0]["id"], "toolu_vrtx_01Abc");
    // A budget instead of an effort.
    let mut req = weather_request();
    req.options.reasoning = Some(Reasoning {
        budget_tokens: Some(2048),
        ..Default::default()
    });
    let enc = (openai_chat::OPENROUTER.encode_request)(&req, "x", false).unwrap();
    assert_eq!(enc.body["reasoning"], json!({"max_tokens": 2048}));
    assert!(enc.body.get("reasoning_effort").is_none());
}

#[tokio::test]
async fn ollama_gets_its_reasoning_back_as_recorded() {
    // The recorded second request sent `reasoning` back and was accepted.
    let cassette = yaml_file(&fixture(
        "ollama",
        "pydantic__test_ollama_cloud_tool_output.yaml",
    ));
    let first = &cassette["interactions"][0]["response"]["parsed_body"];
    let recorded_second = &cassette["interactions"][1]["request"]["parsed_body"];
    let answer = (openai_chat::OLLAMA.decode_response)(first).unwrap();
    let req = ModelRequest {
        messages: vec![
            Message::user("What is the capital of France?"),
            answer,
            Message::user(recorded_second["messages"][2]["content"].as_str().unwrap()),
        ],
        ..Default::default()
    };
    let enc = (openai_chat::OLLAMA.encode_request)(&req, "gpt-oss:20b", false).unwrap();
    assert_eq!(enc.body["messages"][1], recorded_second["messages"][1]);
}

#[test]
fn reasoning_goes_to_no_other_host() {
    let ds = (openai_chat::DEEPSEEK.decode_response)(&json_file(&file(
        "deepseek__thinking-tool-call.json",
    )))
    .unwrap();
    let or = (openai_chat::OPENROUTER.decode_response)(&json_file(&file(
        "openrouter__reasoning-details.json",
    )))
    .unwrap();
    for (answer, secret) in [(ds, "tomorrow's weather"), (or, "SIG-OPENROUTER")] {
        let from = answer.provider.clone().unwrap();
        let req = second_turn(weather_request(), answer);
        for f in PROVIDERS
            .iter()
            .map(|p| p.format)
            .filter(|f| f.provider != from)
        {
            let enc = (f.encode_request)(&req, "m", false)
                .unwrap_or_else(|e| panic!("{} ← {from}: {e}", f.provider));
            let text = enc.body.to_string();
            assert!(!text.contains(secret), "{} ← {from}: {text}", f.provider);
            assert!(
                enc.warnings
                    .iter()
                    .any(|w| w.contains("thinking") && w.contains("dropped")),
                "{} ← {from}: {:?}",
                f.provider,
                enc.warnings
            );
        }
    }
}

#[test]
fn reasoning_fields_are_written_only_where_they_belong() {
    // A foreign block shaped like OpenRouter's kept details is still foreign.
    let mut foreign = Message::new(
        Role::Assistant,
        vec![Block::Thinking(parlance_format::Thinking {
            thinking: "x".into(),
            encrypted_content: Some(r#"[{"type":"reasoning.encrypted","data":"FOREIGN"}]"#.into()),
            provider: Some("anthropic".into()),
            ..Default::default()
        })],
    );
    foreign.content.push(Block::text("Hi."));
    let plain = Message::new(Role::Assistant, vec![Block::text("Hi.")]);
    let req = |m: Message| ModelRequest {
        messages: vec![Message::user("q"), m, Message::user("q2")],
        ..Default::default()
    };
    let enc = (openai_chat::OPENROUTER.encode_request)(&req(foreign), "m", false).unwrap();
    assert!(!enc.body.to_string().contains("FOREIGN"), "{}", enc.body);
    assert!(
        enc.warnings.iter().any(|w| w.contains("from anthropic")),
        "{:?}",
        enc.warnings
    );
    for f in [
        &openai_chat::OPENROUTER,
        &openai_chat::DEEPSEEK,
        &openai_chat::OLLAMA,
    ] {
        let enc = (f.encode_request)(&req(plain.clone()), "m", false).unwrap();
        let a = &enc.body["messages"][1];
        for k in ["reasoning_details", "reasoning_content", "reasoning"] {
            assert!(
                a.get(k).is_none(),
                "{}: {k} on a turn with no reasoning: {a}",
                f.provider
            );
        }
    }
    // Ollama does not need the field on a tool-call turn (DeepSeek does).
    let answer = (openai_chat::FORMAT.decode_response)(&json_file(&file(
        "deepseek__thinking-tool-call.json",
    )))
    .unwrap();
    let calls_only = Message::new(
        Role::Assistant,
        answer
            .content
            .into_iter()
            .filter(|b| matches!(b, Block::ToolCall { .. }))
            .collect(),
    );
    let turn = second_turn(weather_request(), calls_only);
    let ollama = (openai_chat::OLLAMA.encode_request)(&turn, "m", false).unwrap();
    assert!(ollama.body["messages"][1].get("reasoning").is_none());
    let deepseek = (openai_chat::DEEPSEEK.encode_request)(&turn, "m", false).unwrap();
    assert_eq!(deepseek.body["messages"][1]["reasoning_content"], "");
}
