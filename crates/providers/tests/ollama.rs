//! Ollama's native `/api/chat`: every documented payload (requests,
//! answers, NDJSON streams from Ollama's API reference, carried in
//! `testdata/providers/ollama/`) decodes; documented requests re-encode
//! field for field and validate against Ollama's OpenAPI document, as
//! does every request Parlance builds; images, tool calls and results,
//! thinking, options and errors follow Ollama's rules. Over HTTP: see
//! `http_ollama.rs`.

mod common;

use common::{OLLAMA, json_file, normalize, read};
use parlance_format::{Block, FinishReason, Media, Message, Role, Thinking, ToolCall, ToolResult};
use parlance_model::{Effort, ModelError, ModelOptions, ModelRequest, OutputSchema, Reasoning};
use parlance_providers::ollama::MADE_UP_ID;
use parlance_providers::transport::parse_ndjson;
use serde_json::{Value, json};

fn documented() -> Vec<(String, std::path::PathBuf)> {
    common::fixture_files("ollama")
        .into_iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), p))
        .filter(|(n, _)| n.starts_with("ollamadocs__"))
        .collect()
}

/// Ollama streams unless told not to: no `stream` is `stream: true`.
fn with_stream(v: &Value) -> Value {
    let mut v = v.clone();
    if v.get("stream").is_none() {
        v["stream"] = json!(true);
    }
    v
}

#[test]
fn every_documented_payload_decodes_and_every_request_round_trips() {
    let (mut requests, mut answers, mut streams) = (0, 0, 0);
    for (name, path) in documented() {
        if name.ends_with("__request.json") {
            requests += 1;
            let body = json_file(&path);
            assert!(
                OLLAMA.spec_errors(&body).is_empty(),
                "{name}: the documented request is valid"
            );
            let d = (OLLAMA.decode_request)(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(d.warnings.is_empty(), "{name}: {:?}", d.warnings);
            let enc = (OLLAMA.encode_request)(&d.request, d.model.as_deref().unwrap(), d.stream)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            OLLAMA.assert_valid(&enc.body);
            assert_eq!(
                normalize(&with_stream(&enc.body)),
                normalize(&with_stream(&body)),
                "{name}: re-encoded request differs"
            );
        } else if name.ends_with("__response.json") {
            answers += 1;
            let m = (OLLAMA.decode_response)(&json_file(&path))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(m.role, Role::Assistant);
            assert_eq!(m.provider.as_deref(), Some("ollama"), "{name}");
            assert!(m.finish_reason.is_some(), "{name}");
            assert!(!m.content.is_empty(), "{name}: says something");
            assert!(m.usage.is_some_and(|u| u.output_tokens > 0), "{name}");
        } else if name.ends_with("__stream.ndjson") {
            streams += 1;
            let (events, m) = OLLAMA
                .decode_stream(&parse_ndjson(&read(&path)))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(events.len() > 1, "{name}");
            assert_eq!(m.provider.as_deref(), Some("ollama"));
            assert!(m.usage.is_some_and(|u| u.input_tokens > 0), "{name}");
        }
    }
    assert_eq!((requests, answers, streams), (10, 7, 3));
}

#[test]
fn documented_tool_calls_and_history_pair_by_name() {
    let a = (OLLAMA.decode_response)(&json_file(&common::fixture(
        "ollama",
        "ollamadocs__chat-request-no-streaming-with-tools__response.json",
    )))
    .unwrap();
    assert_eq!(a.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(a.finish_reason_raw.as_deref(), Some("stop"));
    let call = a.tool_calls().next().unwrap();
    assert_eq!(call.name, "get_weather");
    assert!(call.arguments.is_object());
    assert!(call.id.starts_with(MADE_UP_ID), "{}", call.id);
    // Stable: the same answer gives the same id.
    let again = (OLLAMA.decode_response)(&json_file(&common::fixture(
        "ollama",
        "ollamadocs__chat-request-no-streaming-with-tools__response.json",
    )))
    .unwrap();
    assert_eq!(again.tool_calls().next().unwrap().id, call.id);

    let d = (OLLAMA.decode_request)(&json_file(&common::fixture(
        "ollama",
        "ollamadocs__chat-request-with-history-with-tools__request.json",
    )))
    .unwrap();
    let call_id = d.request.messages[1]
        .tool_calls()
        .next()
        .unwrap()
        .id
        .clone();
    match &d.request.messages[2].content[0] {
        Block::ToolResult { tool_result } => {
            assert_eq!(tool_result.tool_call_id, call_id, "paired by tool_name");
            assert_eq!(tool_result.name.as_deref(), Some("get_weather"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn streamed_thinking_text_calls_and_the_final_counts() {
    let lines = [
        json!({"model": "qwen3", "created_at": "t", "message": {"role": "assistant", "content": "", "thinking": "Tokyo "}, "done": false}),
        json!({"model": "qwen3", "created_at": "t", "message": {"role": "assistant", "content": "", "thinking": "weather."}, "done": false}),
        json!({"model": "qwen3", "created_at": "t", "message": {"role": "assistant", "content": "Checking."}, "done": false}),
        json!({"model": "qwen3", "created_at": "t", "message": {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_a", "function": {"index": 0, "name": "w", "arguments": {"city": "Tokyo"}}},
            {"function": {"index": 1, "name": "w", "arguments": {"city": "Paris"}}}
        ]}, "done": false}),
        json!({"model": "qwen3", "created_at": "t", "message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 20, "eval_count": 9, "total_duration": 5}),
    ];
    let events: Vec<(String, String)> = lines
        .iter()
        .map(|l| (String::new(), l.to_string()))
        .collect();
    let (_, m) = OLLAMA.decode_stream(&events).unwrap();
    match &m.content[..] {
        [
            Block::Thinking(t),
            Block::Text(x),
            Block::ToolCall { tool_call: a },
            Block::ToolCall { tool_call: b },
        ] => {
            assert_eq!(t.thinking, "Tokyo weather.");
            assert_eq!(t.provider.as_deref(), Some("ollama"));
            assert_eq!(x.text, "Checking.");
            assert_eq!(
                (a.id.as_str(), &a.arguments),
                ("call_a", &json!({"city": "Tokyo"}))
            );
            assert!(b.id.starts_with(MADE_UP_ID));
            assert_eq!(b.arguments, json!({"city": "Paris"}));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
    let u = m.usage.unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (20, 9));

    // length, and an unknown reason kept raw.
    for (raw, want) in [
        ("length", FinishReason::Length),
        ("load", FinishReason::Other),
    ] {
        let body = json!({"model": "m", "message": {"role": "assistant", "content": "x"}, "done": true, "done_reason": raw});
        let m = (OLLAMA.decode_response)(&body).unwrap();
        assert_eq!(
            (m.finish_reason, m.finish_reason_raw.as_deref()),
            (Some(want), Some(raw))
        );
    }
}

#[test]
fn a_mid_stream_error_line_is_typed_and_a_cut_stream_is_truncated() {
    let mut d = (OLLAMA.new_stream)();
    d.event(
        "",
        r#"{"model":"m","message":{"role":"assistant","content":"Yes"},"done":false}"#,
    )
    .unwrap();
    let e = d
        .event(
            "",
            r#"{"error":"an error was encountered while running the model"}"#,
        )
        .unwrap_err();
    assert!(
        matches!(&e, ModelError::Server { message, .. } if message == "an error was encountered while running the model"),
        "{e:?}"
    );
    let mut d = (OLLAMA.new_stream)();
    d.event(
        "",
        r#"{"model":"m","message":{"role":"assistant","content":"Yes"},"done":false}"#,
    )
    .unwrap();
    assert!(matches!(d.end(), Err(ModelError::MalformedResponse { .. })));
    let mut d = (OLLAMA.new_stream)();
    let e = d.event("", r#"{"model":"m"}"#).unwrap_err();
    assert!(e.to_string().contains("done"), "{e}");
}

fn conversation() -> ModelRequest {
    let mut r1 = ToolResult::text("toolu_01AbC", Default::default(), "11 °C");
    r1.name = None; // the name comes from its call
    ModelRequest {
        messages: vec![
            Message::system("Be brief."),
            Message::new(
                Role::User,
                vec![
                    Block::text("Weather here?"),
                    Block::Image {
                        image: Media {
                            data: Some("iVBORw0KGgo=".into()),
                            media_type: Some("image/png".into()),
                            ..Media::default()
                        },
                    },
                ],
            ),
            Message::new(
                Role::Assistant,
                vec![
                    Block::Thinking(Thinking {
                        thinking: "Signed elsewhere.".into(),
                        signature: Some("SIG-ANTHROPIC".into()),
                        provider: Some("anthropic".into()),
                        ..Default::default()
                    }),
                    Block::ToolCall {
                        tool_call: ToolCall::new(
                            "toolu_01AbC",
                            "get_weather",
                            json!({"city": "Toronto"}),
                        ),
                    },
                ],
            ),
            Message::new(Role::Tool, vec![Block::tool_result(r1)]),
        ],
        tools: vec![parlance_format::ToolSpec::new(
            "get_weather",
            "Weather",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        )]
        .into(),
        options: ModelOptions {
            max_tokens: Some(256),
            temperature: Some(0.2),
            top_k: Some(40),
            seed: Some(3),
            stop: vec!["END".into()],
            reasoning: Some(Reasoning {
                effort: Some(Effort::High),
                ..Default::default()
            }),
            output_schema: Some(OutputSchema {
                name: "weather".into(),
                schema: json!({"type": "object", "properties": {"c": {"type": "number"}}}),
                description: None,
                strict: None,
            }),
            extra: serde_json::from_value(
                json!({"ollama": {"keep_alive": "10m", "options": {"num_ctx": 8192}}}),
            )
            .unwrap(),
            ..Default::default()
        },
    }
}

#[test]
fn a_request_in_ollamas_words() {
    let enc = (OLLAMA.encode_request)(&conversation(), "llama3.2", false).unwrap();
    let b = &enc.body;
    OLLAMA.assert_valid(b);
    assert_eq!(b["stream"], false, "Ollama streams unless told not to");
    assert_eq!(
        b["options"],
        json!({"num_predict": 256, "temperature": 0.2, "top_k": 40, "seed": 3, "stop": ["END"], "num_ctx": 8192})
    );
    assert_eq!(b["think"], "high");
    assert_eq!(b["format"]["properties"]["c"]["type"], "number");
    assert_eq!(b["keep_alive"], "10m");
    assert_eq!(
        b["messages"][1],
        json!({"role": "user", "content": "Weather here?", "images": ["iVBORw0KGgo="]})
    );
    assert_eq!(
        b["messages"][2],
        json!({"role": "assistant", "content": "", "tool_calls": [{"id": "toolu_01AbC", "function": {"name": "get_weather", "arguments": {"city": "Toronto"}}}]})
    );
    assert_eq!(
        b["messages"][3],
        json!({"role": "tool", "content": "11 °C", "tool_name": "get_weather", "tool_call_id": "toolu_01AbC"})
    );
    assert!(!b.to_string().contains("Signed elsewhere"));
    assert!(
        enc.warnings
            .iter()
            .any(|w| w.starts_with("messages[2].content[0]: thinking from anthropic dropped")),
        "{:?}",
        enc.warnings
    );
    // Streamed: `stream: true`.
    let s = (OLLAMA.encode_request)(&conversation(), "llama3.2", true).unwrap();
    assert_eq!(s.body["stream"], true);
}

#[test]
fn own_thinking_and_made_up_ids_go_back_as_ollama_wants() {
    let answer = (OLLAMA.decode_response)(&json!({
        "model": "qwen3", "created_at": "2025-01-01T00:00:00Z", "done": true, "done_reason": "stop",
        "message": {"role": "assistant", "content": "", "thinking": "Need weather.",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}
    }))
    .unwrap();
    let id = answer.tool_calls().next().unwrap().id.clone();
    let req = ModelRequest {
        messages: vec![
            Message::user("Oslo?"),
            answer,
            Message::new(
                Role::Tool,
                vec![Block::tool_result(ToolResult::text(
                    &id,
                    Default::default(),
                    "2 °C",
                ))],
            ),
        ],
        options: ModelOptions {
            reasoning: Some(Reasoning {
                effort: Some(Effort::None),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let enc = (OLLAMA.encode_request)(&req, "qwen3", true).unwrap();
    OLLAMA.assert_valid(&enc.body);
    assert_eq!(enc.body["think"], false);
    assert_eq!(
        enc.body["messages"][1],
        json!({"role": "assistant", "content": "", "thinking": "Need weather.",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}),
        "a made-up id is not sent"
    );
    assert_eq!(
        enc.body["messages"][2],
        json!({"role": "tool", "content": "2 °C", "tool_name": "get_weather"})
    );
    assert!(enc.warnings.is_empty(), "{:?}", enc.warnings);
}

#[test]
fn what_ollama_cannot_take_is_refused_naming_the_block() {
    let mut req = conversation();
    req.messages[1].content[1] = Block::Image {
        image: Media {
            url: Some("https://example.com/a.png".into()),
            ..Media::default()
        },
    };
    let e = (OLLAMA.encode_request)(&req, "m", false).unwrap_err();
    assert!(e.to_string().contains("messages[1].content[1]"), "{e}");
    let mut req = conversation();
    req.messages[1].content.push(Block::File {
        file: Media {
            data: Some("JVBER".into()),
            media_type: Some("application/pdf".into()),
            ..Media::default()
        },
    });
    let e = (OLLAMA.encode_request)(&req, "m", false).unwrap_err();
    assert!(e.to_string().contains("messages[1].content[2]"), "{e}");
}

#[test]
fn decode_request_reads_options_think_and_format_and_names_wrong_shapes() {
    let body = json!({
        "model": "qwen3",
        "messages": [{"role": "user", "content": "hi", "images": ["/9j/4AAQ"]}],
        "options": {"num_predict": 100, "temperature": 0.5, "top_k": 20, "seed": 9, "stop": "END", "num_ctx": 4096, "min_p": 0.05},
        "think": "low",
        "format": {"type": "object"},
        "keep_alive": 300,
        "stream": false
    });
    OLLAMA.assert_valid(&body);
    let d = (OLLAMA.decode_request)(&body).unwrap();
    assert!(!d.stream);
    let o = &d.request.options;
    assert_eq!(
        (o.max_tokens, o.top_k, o.seed),
        (Some(100), Some(20), Some(9))
    );
    assert_eq!(o.stop, vec!["END".to_string()]);
    assert_eq!(o.reasoning.as_ref().unwrap().effort, Some(Effort::Low));
    assert_eq!(
        o.output_schema.as_ref().unwrap().schema,
        json!({"type": "object"})
    );
    assert_eq!(
        o.extra["ollama"],
        json!({"options": {"num_ctx": 4096, "min_p": 0.05}, "keep_alive": 300})
    );
    match &d.request.messages[0].content[1] {
        Block::Image { image } => assert_eq!(image.media_type.as_deref(), Some("image/jpeg")),
        other => panic!("{other:?}"),
    }
    let enc = (OLLAMA.encode_request)(&d.request, "qwen3", false).unwrap();
    let mut want = body.clone();
    want["options"]["stop"] = json!(["END"]);
    assert_eq!(normalize(&enc.body), normalize(&want));

    for (body, path) in [
        (json!({"messages": {}}), "messages: expected an array"),
        (
            json!({"messages": [{"role": "user", "content": 1}]}),
            "messages[0].content",
        ),
        (
            json!({"messages": [{"role": "user", "content": "a", "images": [1]}]}),
            "messages[0].images[0]",
        ),
        (
            json!({"messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": [1]}}]}]}),
            "messages[0].tool_calls[0].function.arguments",
        ),
        (
            json!({"messages": [{"role": "tool", "content": "x", "tool_name": "f"}]}),
            "messages[0].tool_name",
        ),
        (
            json!({"messages": [{"role": "tool", "content": "x"}]}),
            "messages[0]",
        ),
        (json!({"messages": [], "think": "extreme"}), "think"),
        (
            json!({"messages": [], "options": {"temperature": "hot"}}),
            "options.temperature",
        ),
    ] {
        match (OLLAMA.decode_request)(&body) {
            Err(ModelError::MalformedRequest { message }) => {
                assert!(message.contains(path), "{message:?} should name {path}")
            }
            other => panic!("{body}: {other:?}"),
        }
    }
}
