//! Bedrock Converse translations: reasoning kept byte-exact and sent only
//! back to Bedrock, usage with cache reads and writes, stop reasons with
//! the raw value, wrong shapes refused with their JSON path, exception
//! events and error answers typed, and every request Parlance builds valid
//! against the service model (`testdata/specs/bedrock/`).

mod common;

use common::{BEDROCK, fixture, json_file, yaml_file};
use parlance_format::{
    Block, CachePoint, FinishReason, Media, Message, Role, Thinking, ToolResult, ToolSpec,
    ToolStatus,
};
use parlance_model::{
    Effort, ModelError, ModelRequest, OutputSchema, Reasoning, StreamEvent, ToolChoice,
};
use parlance_providers::transport::StreamDecoder;
use parlance_providers::{anthropic, bedrock};
use serde_json::{Value, json};

fn thinking(provider: &str, text: &str, sig: Option<&str>) -> Block {
    Block::Thinking(Thinking {
        thinking: text.into(),
        signature: sig.map(str::to_string),
        provider: Some(provider.into()),
        ..Thinking::default()
    })
}

/// A request using everything the Converse translation carries.
fn rich_request() -> ModelRequest {
    let mut call =
        parlance_format::ToolCall::new("call 1/ä", "get_weather", json!({"location": "Paris"}));
    call.provider = Some("bedrock".into());
    let mut tool = ToolSpec::new(
        "get_weather",
        "Weather",
        json!({"type": "object", "properties": {"location": {"type": "string"}}}),
    );
    tool.cache_point = Some(CachePoint {
        ttl: Some("1h".into()),
    });
    let mut req = ModelRequest {
        messages: vec![
            Message::system("Be brief."),
            Message::new(
                Role::System,
                vec![Block::CachePoint {
                    cache_point: CachePoint::default(),
                }],
            ),
            Message::new(
                Role::User,
                vec![
                    Block::text("Look:"),
                    Block::Image {
                        image: Media {
                            data: Some("iVBORw0KGgo=".into()),
                            media_type: Some("image/png".into()),
                            ..Media::default()
                        },
                    },
                    Block::File {
                        file: Media {
                            data: Some("JVBERi0=".into()),
                            media_type: Some("application/pdf".into()),
                            filename: Some("report.final.pdf".into()),
                            ..Media::default()
                        },
                    },
                    Block::CachePoint {
                        cache_point: CachePoint::default(),
                    },
                ],
            ),
            Message::new(
                Role::Assistant,
                vec![
                    Block::Thinking(Thinking {
                        redacted: Some("cmVkYWN0ZWQ=".into()),
                        provider: Some("bedrock".into()),
                        ..Thinking::default()
                    }),
                    thinking("bedrock", "Paris, then.", Some("c2lnbmF0dXJl")),
                    Block::text("Checking."),
                    Block::ToolCall { tool_call: call },
                ],
            ),
            Message::new(
                Role::Tool,
                vec![Block::tool_result(ToolResult {
                    tool_call_id: "call 1/ä".into(),
                    name: Some("get_weather".into()),
                    content: vec![
                        Block::text("no data"),
                        Block::Json {
                            json: json!({"code": 7}),
                        },
                    ],
                    status: ToolStatus::Error,
                    artifact: None,
                    approval: None,
                })],
            ),
            Message::user("And now?"),
        ],
        tools: vec![tool].into(),
        ..Default::default()
    };
    let o = &mut req.options;
    o.max_tokens = Some(512);
    o.temperature = Some(0.5);
    o.top_p = Some(0.9);
    o.stop = vec!["END".into()];
    o.tool_choice = Some(ToolChoice::Tool("get_weather".into()));
    o.reasoning = Some(Reasoning {
        budget_tokens: Some(2048),
        effort: Some(Effort::High),
        ..Reasoning::default()
    });
    o.output_schema = Some(OutputSchema::new("answer", json!({"type": "object"})));
    req
}

#[test]
fn a_rich_request_validates_against_the_service_model_and_reads_back() {
    let req = rich_request();
    let enc =
        bedrock::encode_request(&req, "anthropic.claude-sonnet-4-5-20250929-v1:0", false).unwrap();
    BEDROCK.assert_valid(&enc.body);
    let b = &enc.body;
    assert!(b.get("modelId").is_none(), "the model id is the URL's");
    assert_eq!(
        b["system"],
        json!([{"text": "Be brief."}, {"cachePoint": {"type": "default"}}])
    );
    let user = &b["messages"][0]["content"];
    assert_eq!(
        user[1],
        json!({"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}})
    );
    assert_eq!(
        user[2]["document"]["name"], "report-final-pdf",
        "document names allow no dots"
    );
    assert_eq!(user[2]["document"]["format"], "pdf");
    assert_eq!(user[3], json!({"cachePoint": {"type": "default"}}));
    let asst = &b["messages"][1]["content"];
    assert_eq!(
        asst[0],
        json!({"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}})
    );
    assert_eq!(
        asst[1],
        json!({"reasoningContent": {"reasoningText": {"text": "Paris, then.", "signature": "c2lnbmF0dXJl"}}})
    );
    let id = asst[3]["toolUse"]["toolUseId"].as_str().unwrap();
    assert!(
        id.len() <= 64
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c)),
        "{id}"
    );
    // The tool result answers the same id, with its status, in the user turn after.
    let results = &b["messages"][2]["content"];
    assert_eq!(results[0]["toolResult"]["toolUseId"], id);
    assert_eq!(results[0]["toolResult"]["status"], "error");
    assert_eq!(
        results[0]["toolResult"]["content"][1],
        json!({"json": {"code": 7}})
    );
    assert_eq!(results[1], json!({"text": "And now?"}));
    assert_eq!(
        b["inferenceConfig"],
        json!({"maxTokens": 512, "temperature": 0.5, "topP": 0.9, "stopSequences": ["END"]})
    );
    assert_eq!(
        b["toolConfig"]["toolChoice"],
        json!({"tool": {"name": "get_weather"}})
    );
    assert_eq!(
        b["toolConfig"]["tools"][1],
        json!({"cachePoint": {"type": "default", "ttl": "1h"}})
    );
    assert_eq!(
        b["additionalModelRequestFields"],
        json!({"thinking": {"type": "enabled", "budget_tokens": 2048}})
    );
    assert_eq!(b["outputConfig"]["effort"], "high");
    assert_eq!(
        b["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"],
        "{\"type\":\"object\"}"
    );

    // Read back: the same conversation (ids as sent) and options.
    let back = bedrock::decode_request(&enc.body).unwrap();
    let again = bedrock::encode_request(&back.request, "m", false).unwrap();
    assert_eq!(
        again.body, enc.body,
        "decode ∘ encode is the identity on Parlance's own requests"
    );
    assert_eq!(
        back.request
            .options
            .reasoning
            .as_ref()
            .unwrap()
            .budget_tokens,
        Some(2048)
    );
    // system (both merged), user, assistant...
    match &back.request.messages[2].content[1] {
        Block::Thinking(t) => assert_eq!(
            (t.thinking.as_str(), t.signature.as_deref()),
            ("Paris, then.", Some("c2lnbmF0dXJl"))
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_spec_check_rejects_what_bedrock_would() {
    let ok = json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}]});
    assert!(BEDROCK.spec_errors(&ok).is_empty());
    for bad in [
        json!({"messages": [{"role": "user", "content": [{"text": "hi", "cachePoint": {"type": "default"}}]}]}),
        json!({"messages": [{"role": "user", "content": [{"txt": "hi"}]}]}),
        json!({"messages": [{"role": "tool", "content": [{"text": "hi"}]}]}),
        json!({"messages": [{"role": "user", "content": [{"toolResult": {"toolUseId": "a", "content": [], "status": "ok"}}]}]}),
        json!({"messages": [{"role": "user", "content": [{"image": {"format": "bmp", "source": {"bytes": "AA=="}}}]}]}),
        json!({"messages": [], "inferenceConfig": {"maxTokens": 0}}),
        json!({"messages": [], "toolConfig": {"tools": [{"toolSpec": {"name": "n".repeat(65), "inputSchema": {"json": {}}}}]}}),
    ] {
        assert!(!BEDROCK.spec_errors(&bad).is_empty(), "accepted: {bad}");
    }
}

#[test]
fn reasoning_is_sent_back_only_to_bedrock_and_byte_exact() {
    let answer = bedrock::decode_response(&json_file(&fixture(
        "bedrock-converse",
        "vercel__amazon-bedrock-reasoning.json",
    )))
    .unwrap();
    let Block::Thinking(t) = &answer.content[0] else {
        panic!("{:?}", answer.content)
    };
    assert_eq!(t.provider.as_deref(), Some("bedrock"));
    let recorded = json_file(&fixture(
        "bedrock-converse",
        "vercel__amazon-bedrock-reasoning.json",
    ));
    let req = ModelRequest {
        messages: vec![
            Message::user("How many r's?"),
            answer.clone(),
            Message::user("Sure?"),
        ],
        ..Default::default()
    };
    let enc = bedrock::encode_request(&req, "m", false).unwrap();
    assert_eq!(
        enc.body["messages"][1]["content"], recorded["output"]["message"]["content"],
        "replayed as recorded"
    );
    // To Anthropic: dropped with a warning, never sent.
    let to_anthropic = anthropic::encode_request(&req, "claude", false).unwrap();
    assert!(
        !to_anthropic
            .body
            .to_string()
            .contains(t.signature.as_deref().unwrap())
    );
    assert!(
        to_anthropic.warnings.iter().any(|w| w.contains("bedrock")),
        "{:?}",
        to_anthropic.warnings
    );
    // Anthropic's own thinking is not sent to Bedrock either.
    let foreign = ModelRequest {
        messages: vec![
            Message::user("q"),
            Message::new(
                Role::Assistant,
                vec![
                    thinking("anthropic", "hmm", Some("QU5USFJPUElD")),
                    Block::text("a"),
                ],
            ),
            Message::user("q2"),
        ],
        ..Default::default()
    };
    let enc = bedrock::encode_request(&foreign, "m", false).unwrap();
    assert!(
        !enc.body.to_string().contains("QU5USFJPUElD"),
        "{}",
        enc.body
    );
    assert!(
        enc.warnings
            .iter()
            .any(|w| w.contains("thinking from anthropic dropped")),
        "{:?}",
        enc.warnings
    );
}

#[test]
fn usage_adds_cache_reads_and_writes_to_the_input() {
    let doc = yaml_file(&fixture(
        "bedrock-converse",
        "pydantic__test_bedrock_cache_write_and_read.yaml",
    ));
    let first =
        bedrock::decode_response(&doc["interactions"][0]["response"]["parsed_body"]).unwrap();
    let u = first.usage.unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.cached_tokens,
            u.cache_write_tokens
        ),
        (2 + 1322, 5, 0, Some(1322))
    );
    let second =
        bedrock::decode_response(&doc["interactions"][1]["response"]["parsed_body"]).unwrap();
    let u = second.usage.unwrap();
    assert!(
        u.cached_tokens > 0 && u.input_tokens > u.cached_tokens,
        "{u:?}"
    );
    // The duplicated `...Count` names stand in when alone.
    let alone = bedrock::decode_response::usage(
        &json!({"inputTokens": 3, "outputTokens": 1, "cacheReadInputTokenCount": 10}),
    );
    assert_eq!((alone.input_tokens, alone.cached_tokens), (13, 10));
}

#[test]
fn stop_reasons_keep_the_raw_value() {
    for (raw, want) in [
        ("end_turn", FinishReason::Stop),
        ("stop_sequence", FinishReason::Stop),
        ("tool_use", FinishReason::ToolCalls),
        ("max_tokens", FinishReason::Length),
        ("model_context_window_exceeded", FinishReason::Length),
        ("guardrail_intervened", FinishReason::ContentFilter),
        ("content_filtered", FinishReason::ContentFilter),
        ("malformed_tool_use", FinishReason::Other),
    ] {
        let body = json!({"output": {"message": {"role": "assistant", "content": [{"text": "x"}]}}, "stopReason": raw, "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 1}});
        let m = bedrock::decode_response(&body).unwrap();
        assert_eq!(
            (m.finish_reason, m.finish_reason_raw.as_deref()),
            (Some(want), Some(raw))
        );
    }
}

#[test]
fn wrong_shapes_are_refused_with_their_json_path() {
    for (body, path) in [
        (
            json!({"messages": [{"role": "user", "content": [{"text": "a", "image": {}}]}]}),
            "messages[0].content[0]: expected one member",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{}]}]}),
            "messages[0].content[0]: expected one member, got none",
        ),
        (
            json!({"messages": [{"role": "user", "content": "hi"}]}),
            "messages[0].content: expected an array",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"image": {"format": "bmp", "source": {"bytes": "AA=="}}}]}]}),
            "messages[0].content[0].image.format",
        ),
        (
            json!({"messages": [{"role": "user", "content": [{"toolResult": {"toolUseId": "a", "content": [], "status": "ok"}}]}]}),
            "messages[0].content[0].toolResult.status",
        ),
        (
            json!({"messages": [{"role": "system", "content": []}]}),
            "messages[0].role",
        ),
        (
            json!({"messages": [], "toolConfig": {"tools": [{"toolSpec": {"name": "f", "inputSchema": {"json": {}}}}], "toolChoice": {"none": {}}}}),
            "toolConfig.toolChoice.none",
        ),
    ] {
        let e = bedrock::decode_request(&body).unwrap_err();
        assert!(
            matches!(e, ModelError::MalformedRequest { .. }) && e.to_string().contains(path),
            "{body}: {e}"
        );
    }
    let e = bedrock::decode_response(&json!({"output": {"message": {"content": [{"text": 1}]}}}))
        .unwrap_err();
    assert!(
        e.to_string().contains("output.message.content[0].text"),
        "{e}"
    );
}

fn stream_of(events: &[(&str, Value)]) -> (Vec<StreamEvent>, Result<Vec<StreamEvent>, ModelError>) {
    let mut d = bedrock::stream::BedrockStream::new();
    let mut out = Vec::new();
    for (name, v) in events {
        match d.event(name, &v.to_string()) {
            Ok(e) => out.extend(e),
            Err(e) => return (out, Err(e)),
        }
    }
    let end = d.end();
    (out, end)
}

#[test]
fn exception_events_are_typed_errors() {
    let start = ("messageStart", json!({"role": "assistant"}));
    let delta = (
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "Hel"}}),
    );
    for (name, payload, check) in [
        (
            "modelStreamErrorException",
            json!({"message": "boom", "originalStatusCode": 500, "originalMessage": "model crashed"}),
            (|e: &ModelError| {
                matches!(e, ModelError::Server { .. }) && e.to_string().contains("model crashed")
            }) as fn(&ModelError) -> bool,
        ),
        (
            "throttlingException",
            json!({"message": "slow down"}),
            |e| matches!(e, ModelError::RateLimited { .. }),
        ),
        (
            "serviceUnavailableException",
            json!({"message": "busy"}),
            |e| matches!(e, ModelError::Overloaded { .. }),
        ),
        ("internalServerException", json!({"message": "oops"}), |e| {
            matches!(e, ModelError::Server { .. })
        }),
        ("validationException", json!({"message": "bad"}), |e| {
            matches!(e, ModelError::InvalidRequest { .. })
        }),
    ] {
        let (events, end) = stream_of(&[start.clone(), delta.clone(), (name, payload)]);
        assert!(matches!(events[1], StreamEvent::TextDelta { .. }));
        let e = end.unwrap_err();
        assert!(check(&e), "{name}: {e:?}");
    }
    // Cut before messageStop: truncated.
    let (_, end) = stream_of(&[start.clone(), delta.clone()]);
    assert!(end.unwrap_err().to_string().contains("truncated"));
    // messageStop without metadata still ends the message (no usage).
    let (_, end) = stream_of(&[
        start,
        delta,
        ("messageStop", json!({"stopReason": "end_turn"})),
    ]);
    match end.unwrap().pop() {
        Some(StreamEvent::Done(m)) => assert_eq!(
            (m.usage, m.finish_reason_raw.as_deref()),
            (None, Some("end_turn"))
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_stream_index_out_of_order_is_refused_not_allocated() {
    let (_, end) = stream_of(&[(
        "contentBlockDelta",
        json!({"contentBlockIndex": 4_000_000_000u64, "delta": {"text": "x"}}),
    )]);
    assert!(
        end.unwrap_err()
            .to_string()
            .contains("unknown block 4000000000")
    );
}

#[test]
fn error_answers_are_typed_by_status_and_type() {
    let c = |status, body: Value| bedrock::classify(status, body.to_string().as_bytes(), None);
    assert!(matches!(
        c(429, json!({"message": "Too many requests"})),
        ModelError::RateLimited { .. }
    ));
    assert!(matches!(
        c(
            429,
            json!({"__type": "com.amazon.coral#ModelNotReadyException", "message": "warming"})
        ),
        ModelError::RateLimited { .. }
    ));
    assert!(matches!(
        c(503, json!({"message": "unavailable"})),
        ModelError::Overloaded { .. }
    ));
    assert!(matches!(
        c(500, json!({"message": "internal"})),
        ModelError::Server { status: 500, .. }
    ));
    assert!(matches!(
        c(424, json!({"message": "model error"})),
        ModelError::Server { status: 424, .. }
    ));
    assert!(matches!(
        c(
            403,
            json!({"message": "You don't have access to the model with the specified model ID."})
        ),
        ModelError::Permission { .. }
    ));
    assert!(matches!(
        c(
            403,
            json!({"message": "The request signature we calculated does not match the signature you provided."})
        ),
        ModelError::Authentication { .. }
    ));
    assert!(matches!(
        c(
            403,
            json!({"__type": "UnrecognizedClientException", "message": "The security token included in the request is invalid."})
        ),
        ModelError::Authentication { .. }
    ));
    let e = c(
        400,
        json!({"message": "The provided model identifier is invalid."}),
    );
    assert!(
        matches!(e, ModelError::InvalidRequest { .. })
            && e.to_string().contains("model identifier is invalid")
    );
    // The provider's message is kept as it is (not the raw body).
    match c(
        400,
        json!({"message": "The provided model identifier is invalid."}),
    ) {
        ModelError::InvalidRequest { message } => {
            assert_eq!(message, "The provided model identifier is invalid.")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        c(408, json!({"message": "Model timed out"})),
        ModelError::Server { status: 408, .. }
    ));
    assert!(matches!(
        c(
            400,
            json!({"message": "Input is too long for requested model."})
        ),
        ModelError::ContextTooLong { .. }
    ));
    assert_eq!(
        bedrock::errors::exception_name(
            "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"
        ),
        "ValidationException"
    );
}
