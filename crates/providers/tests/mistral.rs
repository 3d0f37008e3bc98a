//! Mistral: the recorded payloads decode (whole and streamed); requests
//! Parlance builds validate against Mistral's official OpenAPI document;
//! Mistral request bodies read back and re-encode field for field; tool
//! call ids, `thinking` chunks, `prefix`, finish reasons and error bodies
//! follow Mistral's rules. Over HTTP: see `http_mistral.rs`.

mod common;

use common::{MISTRAL, chunk_lines, fixture, json_file, normalize, read};
use parlance_format::{
    Block, FinishReason, Media, Message, Role, Thinking, ToolCall, ToolResult, ToolStatus,
};
use parlance_model::{ModelError, ModelOptions, ModelRequest, ToolChoice};
use parlance_providers::mistral::ids::{call_id, is_mistral_id};
use serde_json::{Value, json};

#[test]
fn the_reasoning_answer_decodes_to_thinking_then_text() {
    let m = (MISTRAL.decode_response)(&json_file(&fixture(
        "mistral",
        "vercel__mistral-reasoning.json",
    )))
    .unwrap();
    assert_eq!(m.provider.as_deref(), Some("mistral"));
    assert_eq!(m.model.as_deref(), Some("magistral-medium-2507"));
    assert_eq!(m.finish_reason, Some(FinishReason::Stop));
    match &m.content[..] {
        [Block::Thinking(t), Block::Text(x)] => {
            assert_eq!(
                t.thinking,
                "The user is asking for 2+2. This is basic arithmetic. 2+2=4."
            );
            assert_eq!(x.text, "2 + 2 = 4");
        }
        other => panic!("{other:?}"),
    }
    let u = m.usage.unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (10, 46));
}

#[test]
fn the_tool_call_answer_decodes_whole_and_streamed_alike() {
    let whole = (MISTRAL.decode_response)(&json_file(&fixture(
        "mistral",
        "vercel__mistral-tool-call.json",
    )))
    .unwrap();
    let text = read(&fixture("mistral", "vercel__mistral-tool-call.chunks.txt"));
    let (events, streamed) = MISTRAL.decode_stream(&chunk_lines(&text)).unwrap();
    assert!(events.len() > 1);
    for m in [&whole, &streamed] {
        assert_eq!(m.provider.as_deref(), Some("mistral"));
        assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
        let calls: Vec<&ToolCall> = m.tool_calls().collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "gSIMJiOkT");
        assert_eq!(calls[0].name, "weather");
        assert_eq!(calls[0].arguments, json!({"location": "San Francisco"}));
        assert_eq!(m.usage.as_ref().unwrap().input_tokens, 124);
    }
    assert_eq!(whole.content, streamed.content);
}

#[test]
fn streamed_thinking_chunks_parallel_whole_calls_and_finish_reasons() {
    let chunk = |delta: Value, finish: Value| {
        (
            String::new(),
            json!({"id": "x", "model": "magistral-small", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                .to_string(),
        )
    };
    let events = vec![
        chunk(
            json!({"role": "assistant", "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Two "}]}]}),
            Value::Null,
        ),
        chunk(
            json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "cities."}], "signature": "SIG-M"}]}),
            Value::Null,
        ),
        chunk(json!({"content": "Checking."}), Value::Null),
        // Two calls whole in one delta, neither with an index.
        chunk(
            json!({"tool_calls": [
                {"id": "aaaaaaaa1", "function": {"name": "w", "arguments": "{\"c\":\"Paris\"}"}},
                {"id": "aaaaaaaa2", "function": {"name": "w", "arguments": {"c": "Oslo"}}}
            ]}),
            json!("tool_calls"),
        ),
        (String::new(), "[DONE]".into()),
    ];
    let (_, m) = MISTRAL.decode_stream(&events).unwrap();
    match &m.content[..] {
        [
            Block::Thinking(t),
            Block::Text(x),
            Block::ToolCall { tool_call: a },
            Block::ToolCall { tool_call: b },
        ] => {
            assert_eq!(t.thinking, "Two cities.");
            assert_eq!(t.signature.as_deref(), Some("SIG-M"));
            assert_eq!(t.provider.as_deref(), Some("mistral"));
            assert_eq!(x.text, "Checking.");
            assert_eq!(
                (a.id.as_str(), &a.arguments),
                ("aaaaaaaa1", &json!({"c": "Paris"}))
            );
            assert_eq!(
                (b.id.as_str(), &b.arguments),
                ("aaaaaaaa2", &json!({"c": "Oslo"}))
            );
        }
        other => panic!("{other:?}"),
    }

    for (raw, want) in [
        ("model_length", FinishReason::Length),
        ("length", FinishReason::Length),
        ("error", FinishReason::Error),
        ("stop", FinishReason::Stop),
        ("something_new", FinishReason::Other),
    ] {
        let body = json!({"id": "x", "model": "m", "choices": [{"index": 0, "finish_reason": raw, "message": {"role": "assistant", "content": "hi"}}]});
        let m = (MISTRAL.decode_response)(&body).unwrap();
        assert_eq!(m.finish_reason, Some(want), "{raw}");
        assert_eq!(m.finish_reason_raw.as_deref(), Some(raw));
        let (_, s) = MISTRAL
            .decode_stream(&[
                chunk(json!({"content": "hi"}), json!(raw)),
                (String::new(), "[DONE]".into()),
            ])
            .unwrap();
        assert_eq!(s.finish_reason, Some(want), "streamed {raw}");
    }
}

#[test]
fn a_stream_cut_before_the_finish_is_truncated() {
    let text = read(&fixture("mistral", "vercel__mistral-tool-call.chunks.txt"));
    let events = chunk_lines(&text);
    let mut d = (MISTRAL.new_stream)();
    d.event("", &events[0].1).unwrap();
    assert!(matches!(d.end(), Err(ModelError::MalformedResponse { .. })));
}

/// A conversation another provider made: `call_…` ids, a signed foreign
/// thinking block, a failed result, an image, a document, cache points.
fn foreign_conversation() -> ModelRequest {
    let mut thinking = Thinking {
        thinking: "Look both up.".into(),
        signature: Some("SIG-ANTHROPIC".into()),
        provider: Some("anthropic".into()),
        ..Default::default()
    };
    thinking.item_id = None;
    let mut r1 = ToolResult::text("call_ABC_123", ToolStatus::Ok, "12 °C");
    r1.name = Some("get_weather".into());
    let r2 = ToolResult::text(
        "toolu_01XyZ",
        ToolStatus::ToolFailed,
        "get_weather failed: timeout",
    );
    ModelRequest {
        messages: vec![
            Message::system("Be brief."),
            Message::new(
                Role::User,
                vec![
                    Block::text("Weather in Paris and Oslo? See the map and the notes."),
                    Block::Image {
                        image: Media {
                            data: Some("iVBORw0KGgo=".into()),
                            media_type: Some("image/png".into()),
                            ..Media::default()
                        },
                    },
                    Block::File {
                        file: Media {
                            url: Some("https://example.com/notes.pdf".into()),
                            filename: Some("notes.pdf".into()),
                            ..Media::default()
                        },
                    },
                    Block::CachePoint {
                        cache_point: Default::default(),
                    },
                ],
            ),
            Message::new(
                Role::Assistant,
                vec![
                    Block::Thinking(thinking),
                    Block::ToolCall {
                        tool_call: ToolCall::new(
                            "call_ABC_123",
                            "get_weather",
                            json!({"city": "Paris"}),
                        ),
                    },
                    Block::ToolCall {
                        tool_call: ToolCall::new(
                            "toolu_01XyZ",
                            "get_weather",
                            json!({"city": "Oslo"}),
                        ),
                    },
                ],
            ),
            Message::new(
                Role::Tool,
                vec![Block::tool_result(r1), Block::tool_result(r2)],
            ),
        ],
        tools: vec![parlance_format::ToolSpec::new(
            "get_weather",
            "Current weather",
            json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        )]
        .into(),
        options: ModelOptions {
            max_tokens: Some(512),
            seed: Some(7),
            temperature: Some(0.3),
            tool_choice: Some(ToolChoice::Required),
            extra: serde_json::from_value(
                json!({"mistral": {"safe_prompt": true}, "openai": {"store": true}}),
            )
            .unwrap(),
            ..Default::default()
        },
    }
}

#[test]
fn foreign_ids_map_to_nine_alphanumerics_on_call_and_result_alike() {
    let req = foreign_conversation();
    let enc = (MISTRAL.encode_request)(&req, "mistral-large-latest", false).unwrap();
    MISTRAL.assert_valid(&enc.body);
    let msgs = enc.body["messages"].as_array().unwrap();
    let calls = msgs[2]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    for (k, c) in calls.iter().enumerate() {
        let id = c["id"].as_str().unwrap();
        assert!(is_mistral_id(id), "{id}");
        assert_eq!(msgs[3 + k]["role"], "tool");
        assert_eq!(msgs[3 + k]["tool_call_id"], c["id"], "result {k} pairs");
    }
    assert_eq!(calls[0]["id"], json!(call_id("call_ABC_123")));
    assert_ne!(calls[0]["id"], calls[1]["id"]);
    assert_eq!(msgs[3]["name"], "get_weather");
    // The canonical conversation keeps the original ids.
    assert_eq!(
        req.messages[2].tool_calls().next().unwrap().id,
        "call_ABC_123"
    );
    // Mapping is stable: the same conversation gives the same body.
    let again = (MISTRAL.encode_request)(&req, "mistral-large-latest", false).unwrap();
    assert_eq!(again.body, enc.body);
}

#[test]
fn mistral_names_and_scoped_options() {
    let enc =
        (MISTRAL.encode_request)(&foreign_conversation(), "mistral-large-latest", true).unwrap();
    let b = &enc.body;
    MISTRAL.assert_valid(b);
    assert_eq!(b["max_tokens"], 512);
    assert_eq!(b["random_seed"], 7);
    assert_eq!(b["tool_choice"], "required");
    assert_eq!(b["safe_prompt"], true, "extra.mistral is merged");
    assert_eq!(b["stream"], true);
    for absent in ["max_completion_tokens", "seed", "stream_options", "store"] {
        assert!(b.get(absent).is_none(), "{absent} must not be sent: {b:#}");
    }
    // No foreign signature; no OpenAI cache breakpoints.
    let text = b.to_string();
    assert!(!text.contains("SIG-ANTHROPIC"));
    assert!(!text.contains("prompt_cache_breakpoint"));
    assert!(
        enc.warnings
            .iter()
            .any(|w| w == "messages[2].content[0]: thinking from anthropic dropped (Mistral takes back only its own reasoning)"),
        "{:?}",
        enc.warnings
    );
    assert!(
        enc.warnings
            .iter()
            .any(|w| w.contains("cache point dropped")),
        "{:?}",
        enc.warnings
    );
    assert!(
        enc.warnings.iter().all(|w| !w.contains("OpenAI")),
        "{:?}",
        enc.warnings
    );
    // The user's parts: text, the image as a data URL, the document by URL.
    assert_eq!(
        b["messages"][1]["content"],
        json!([
            {"type": "text", "text": "Weather in Paris and Oslo? See the map and the notes."},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            {"type": "document_url", "document_url": "https://example.com/notes.pdf", "document_name": "notes.pdf"}
        ])
    );
    // Foreign reasoning is dropped, text included: the calls remain.
    assert_eq!(b["messages"][2]["content"], Value::Null);
    assert!(!text.contains("Look both up."));
}

#[test]
fn own_thinking_goes_back_with_its_signature_and_a_last_assistant_message_is_a_prefix() {
    let answer = (MISTRAL.decode_response)(&json!({
        "id": "1", "model": "magistral-medium-2507",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": [{"type": "text", "text": "Hmm."}], "signature": "SIG-MISTRAL"},
            {"type": "text", "text": "Four."}
        ]}}]
    }))
    .unwrap();
    let req = ModelRequest {
        messages: vec![
            Message::user("2+2?"),
            answer,
            Message::user("Again, in JSON."),
            Message::assistant("{\"answer\":"),
        ],
        ..Default::default()
    };
    let enc = (MISTRAL.encode_request)(&req, "magistral-medium-latest", false).unwrap();
    MISTRAL.assert_valid(&enc.body);
    let msgs = enc.body["messages"].as_array().unwrap();
    assert_eq!(
        msgs[1]["content"],
        json!([
            {"type": "thinking", "thinking": [{"type": "text", "text": "Hmm."}], "signature": "SIG-MISTRAL"},
            {"type": "text", "text": "Four."}
        ])
    );
    assert!(msgs[1].get("prefix").is_none(), "only the last message");
    assert_eq!(
        msgs[3],
        json!({"role": "assistant", "content": "{\"answer\":", "prefix": true})
    );
    assert!(enc.warnings.is_empty(), "{:?}", enc.warnings);
}

#[test]
fn a_mistral_request_reads_back_and_re_encodes_field_for_field() {
    let body = json!({
        "model": "magistral-medium-latest",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [
                {"type": "text", "text": "What is in these?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "high"}},
                {"type": "document_url", "document_url": "https://example.com/b.pdf", "document_name": "b.pdf"}
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": [{"type": "text", "text": "Look."}], "signature": "SIG"},
                {"type": "text", "text": "Checking."}
            ], "tool_calls": [{"id": "D681PevKs", "type": "function", "function": {"name": "look", "arguments": "{\"x\":1}"}}]},
            {"role": "tool", "tool_call_id": "D681PevKs", "name": "look", "content": "A cat."},
            {"role": "assistant", "content": "It is", "prefix": true}
        ],
        "tools": [{"type": "function", "function": {"name": "look", "description": "Look", "parameters": {"type": "object"}}}],
        "tool_choice": "auto",
        "temperature": 0.7,
        "top_p": 0.9,
        "max_tokens": 100,
        "random_seed": 42,
        "stop": ["END"],
        "safe_prompt": true,
        "prompt_mode": "reasoning",
        "presence_penalty": 0.1,
        "response_format": {"type": "json_object"}
    });
    MISTRAL.assert_valid(&body);
    let d = (MISTRAL.decode_request)(&body).unwrap();
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    assert_eq!(d.request.options.seed, Some(42));
    assert_eq!(d.request.options.max_tokens, Some(100));
    assert!(d.request.options.extra["mistral"]["safe_prompt"] == json!(true));
    let thinking = match &d.request.messages[2].content[0] {
        Block::Thinking(t) => t.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(thinking.signature.as_deref(), Some("SIG"));
    assert_eq!(thinking.provider.as_deref(), Some("mistral"));
    let enc = (MISTRAL.encode_request)(&d.request, "magistral-medium-latest", false).unwrap();
    MISTRAL.assert_valid(&enc.body);
    assert_eq!(normalize(&enc.body), normalize(&body));
}

#[test]
fn decode_request_names_the_path_of_what_is_wrong() {
    let cases = [
        (json!({"messages": "hi"}), "messages: expected an array"),
        (
            json!({"messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": "x"}]}]}),
            "messages[0].content[0].thinking",
        ),
        (
            json!({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "prefix": "yes"}]}),
            "messages[1].prefix",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"type": "document_url"}]}]}),
            "messages[0].content[0].document_url",
        ),
        (
            json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "abcdefghi", "function": {"arguments": "{}"}}]}]}),
            "messages[0].tool_calls[0].function.name",
        ),
        (json!([1]), "request"),
    ];
    for (body, path) in cases {
        match (MISTRAL.decode_request)(&body) {
            Err(ModelError::MalformedRequest { message }) => {
                assert!(message.contains(path), "{message:?} should name {path}")
            }
            other => panic!("{body}: {other:?}"),
        }
    }
    // A prefix anywhere but last is named in a warning.
    let d = (MISTRAL.decode_request)(&json!({"messages": [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b", "prefix": true},
        {"role": "user", "content": "c"}
    ]}))
    .unwrap();
    assert!(
        d.warnings
            .iter()
            .any(|w| w.starts_with("messages[1].prefix")),
        "{:?}",
        d.warnings
    );
}

#[test]
fn text_that_looks_like_a_stand_in_stays_text() {
    let body = json!({"messages": [{"role": "user", "content": [
        {"type": "text", "text": "\u{0}mistral-chunk-0000000000000000:0"},
        {"type": "document_url", "document_url": "https://e.com/x.pdf"}
    ]}]});
    let d = (MISTRAL.decode_request)(&body).unwrap();
    match &d.request.messages[0].content[..] {
        [Block::Text(t), Block::File { .. }] => assert!(t.text.starts_with('\u{0}')),
        other => panic!("{other:?}"),
    }
}

#[test]
fn error_bodies_are_typed() {
    let e = (MISTRAL.classify)(401, br#"{"detail":"Unauthorized"}"#, None);
    assert!(matches!(e, ModelError::Authentication { .. }), "{e:?}");
    let e = (MISTRAL.classify)(
        422,
        br#"{"detail":[{"loc":["body","messages"],"msg":"Field required","type":"missing"}]}"#,
        None,
    );
    assert!(
        matches!(&e, ModelError::InvalidRequest { message } if message.contains("body.messages")),
        "{e:?}"
    );
}

#[test]
fn the_spec_check_refuses_what_mistral_would() {
    // OpenAI Chat's body for the same conversation uses names Mistral
    // does not take (max_completion_tokens, stream_options, seed).
    let mut req = foreign_conversation();
    let openai_req = ModelRequest {
        messages: vec![Message::user("hi")],
        ..req.clone()
    };
    let openai = parlance_providers::openai_chat::encode_request(&openai_req, "m", true).unwrap();
    req.options.extra = Default::default();
    let errors = MISTRAL.spec_errors(&openai.body);
    assert!(!errors.is_empty());
    let mut ok = (MISTRAL.encode_request)(&req, "m", false).unwrap().body;
    ok["messages"][2]["tool_calls"][0]["extra"] = json!(1);
    assert!(
        !MISTRAL.spec_errors(&ok).is_empty(),
        "unknown call fields are refused"
    );
}

#[test]
fn every_effort_is_one_mistral_takes() {
    use parlance_model::{Effort, Reasoning};
    for effort in [
        Effort::None,
        Effort::Minimal,
        Effort::Low,
        Effort::Medium,
        Effort::High,
        Effort::XHigh,
        Effort::Max,
    ] {
        let req = ModelRequest {
            messages: vec![Message::user("hi")],
            options: ModelOptions {
                reasoning: Some(Reasoning {
                    effort: Some(effort),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let enc = (MISTRAL.encode_request)(&req, "magistral-medium-latest", false).unwrap();
        MISTRAL.assert_valid(&enc.body);
        if effort == Effort::Max {
            assert_eq!(enc.body["reasoning_effort"], "xhigh");
            assert_eq!(enc.warnings.len(), 1, "{:?}", enc.warnings);
        }
    }
}
