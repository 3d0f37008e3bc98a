//! Every recorded fixture of OpenAI Chat and Anthropic in `testdata/providers/`
//! is decoded, streaming and not; every request Parlance builds from them
//! validates against the provider's official OpenAPI schema; recorded
//! requests (follow-ups included) re-encode field for field; a follow-up's
//! replay of the previous answer matches Parlance's encoding of it.

mod common;

use common::{
    ANTHROPIC, Api, BEDROCK, GEMINI, OPENAI_CHAT, RESPONSES, chunk_lines, json_file, normalize,
    read, yaml_file,
};
use parlance_format::{Block, FinishReason, Message, Role};
use parlance_model::{ModelError, ModelRequest};
use parlance_providers::transport::parse_sse;
use serde_json::{Value, json};

/// Decodes a recorded request, re-encodes it, and checks both the
/// field-for-field equality and the official schema.
fn round_trip_request(api: &Api, name: &str, body: &Value) -> parlance_providers::DecodedRequest {
    round_trip(api, name, body, true)
}

/// `accepted`: the provider accepted the recorded request (a request it
/// refused need not pass the schema).
fn round_trip(
    api: &Api,
    name: &str,
    body: &Value,
    accepted: bool,
) -> parlance_providers::DecodedRequest {
    let decoded =
        (api.decode_request)(body).unwrap_or_else(|e| panic!("{name}: decode request: {e}"));
    // Every canonical message read from a provider is valid canonical JSON.
    let canonical = serde_json::to_value(&decoded.request.messages).unwrap();
    parlance_format::messages_from_value(&canonical, "messages")
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let model = decoded.model.clone().unwrap_or_default();
    let encoded = (api.encode_request)(&decoded.request, &model, decoded.stream)
        .unwrap_or_else(|e| panic!("{name}: encode: {e}"));
    let mut want = body.clone();
    let mut got = encoded.body.clone();
    (api.canonicalize)(&mut want);
    (api.canonicalize)(&mut got);
    let mut want = normalize(&want);
    let mut got = normalize(&got);
    // Streaming options are Parlance's own choice for streams.
    for v in [&mut want, &mut got] {
        if let Some(o) = v.as_object_mut() {
            o.remove("stream_options");
        }
    }
    assert_eq!(
        got, want,
        "{name}: re-encoded request differs from the recorded one"
    );
    let errors = api.spec_errors(&encoded.body);
    assert!(
        errors.is_empty() || !accepted,
        "{name}: the official schema rejects the request: {errors:#?}"
    );
    decoded
}

fn check_message(name: &str, m: &Message) {
    assert_eq!(m.role, Role::Assistant, "{name}");
    assert!(m.provider.is_some(), "{name}: provider recorded");
    assert!(
        m.finish_reason.is_some() && m.finish_reason_raw.is_some(),
        "{name}: finish reason kept with its raw value"
    );
    let v = serde_json::to_value(m).unwrap();
    parlance_format::Message::from_value(&v)
        .unwrap_or_else(|e| panic!("{name}: not canonical: {e}"));
}

/// What must agree between a streamed and a non-streamed decode of one
/// exchange when they are separate recordings (ids and token counts differ).
fn shape(m: &Message) -> Value {
    let blocks: Vec<Value> = m
        .content
        .iter()
        .map(|b| match b {
            Block::ToolCall { tool_call } => json!({"tool_call": tool_call.name, "arguments": tool_call.arguments}),
            Block::Thinking(t) => json!({"thinking": t.provider, "signed": t.signature.is_some(), "redacted": t.redacted.is_some()}),
            other => json!(other.type_name()),
        })
        .collect();
    json!({"blocks": blocks, "finish": m.finish_reason, "raw": m.finish_reason_raw})
}

fn sweep(api: &Api) -> usize {
    let mut checked = 0;
    for path in common::fixture_files(api.dir) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // Other suites' cassettes and the binary streams are read by
        // tests/hosts.rs (their own layouts, each request its own test's).
        if ["crewai__", "langchain__", "langchaingo__", "openllmetry__", "magentic__"]
            .iter()
            .any(|p| name.starts_with(p))
            // A provider's built-in tool: refused by name (tests/hosts.rs).
            || name.contains("code_execution")
        {
            continue;
        }
        checked += 1;
        if name.ends_with(".yaml") {
            cassette(api, &name, &yaml_file(&path));
        } else if name.ends_with(".chunks.txt") {
            let lines = chunk_lines(&read(&path));
            // Some recordings hold several streams back to back.
            let mut streams: Vec<Vec<(String, String)>> = Vec::new();
            for l in lines {
                if streams.is_empty() || l.1.contains("\"type\":\"response.created\"") {
                    streams.push(Vec::new());
                }
                streams.last_mut().unwrap().push(l);
            }
            for (k, events) in streams.iter().enumerate() {
                let label = format!("{name} (stream {k})");
                match api.decode_stream(events) {
                    Ok((decoded, m)) => {
                        check_message(&label, &m);
                        assert!(decoded.len() > 1, "{label}: events before Done");
                        // The non-streamed recording of the same exchange, when there is one.
                        let sibling = path.with_file_name(name.replace(".chunks.txt", ".json"));
                        if sibling.exists() && streams.len() == 1 {
                            let plain = (api.decode_response)(&json_file(&sibling)).unwrap();
                            assert_eq!(
                                shape(&m),
                                shape(&plain),
                                "{label}: stream and non-stream disagree"
                            );
                        }
                    }
                    // A recorded in-stream failure is a typed error.
                    Err(e) if name.contains("error") => assert!(
                        matches!(e, ModelError::QuotaExceeded { .. }),
                        "{label}: {e:?}"
                    ),
                    Err(e) => panic!("{label}: {e}"),
                }
            }
        } else if name.ends_with("response-streaming.json") {
            let events: Vec<(String, String)> = json_file(&path)
                .as_array()
                .unwrap()
                .iter()
                .map(|e| (String::new(), e.to_string()))
                .collect();
            let (_, m) = api
                .decode_stream(&events)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            check_message(&name, &m);
            let plain = (api.decode_response)(&json_file(
                &path.with_file_name(name.replace("response-streaming", "response")),
            ))
            .unwrap();
            assert_eq!(
                shape(&m),
                shape(&plain),
                "{name}: stream and non-stream disagree"
            );
        } else if name.ends_with("followup-request.json") {
            let followup = json_file(&path);
            round_trip_request(api, &name, &followup);
            // The follow-up replays the first answer: Parlance's encoding of
            // its decode must be the same assistant message.
            let first =
                json_file(&path.with_file_name(name.replace("followup-request", "request")));
            let answer = (api.decode_response)(&json_file(
                &path.with_file_name(name.replace("followup-request", "response")),
            ))
            .unwrap();
            check_replay(api, &name, &first, &answer, &followup);
        } else if name.ends_with("request.json") {
            round_trip_request(api, &name, &json_file(&path));
        } else if name.ends_with("error.json") && json_file(&path)["error"].is_string() {
            // `{"error": "<SDK error string>"}`: status, then the body.
            let text = json_file(&path)["error"].as_str().unwrap().to_string();
            let status: u16 = text
                .split(|c: char| !c.is_ascii_digit())
                .find(|s| s.len() == 3)
                .unwrap()
                .parse()
                .unwrap();
            let body = &text[text.find('{').unwrap()..];
            let e = (api.classify)(status, body.as_bytes(), None);
            assert!(
                matches!(e, ModelError::InvalidRequest { .. }),
                "{name}: {e:?}"
            );
            let said: Value = serde_json::from_str(body).unwrap();
            let said = said
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap()
                .to_string();
            assert!(
                e.to_string().contains(&said),
                "{name}: the provider's message is kept: {e}"
            );
        } else {
            let v = json_file(&path);
            if v.get("error").is_some() {
                let status = v
                    .pointer("/error/code")
                    .and_then(Value::as_u64)
                    .unwrap_or(400) as u16;
                let e = (api.classify)(status, v.to_string().as_bytes(), None);
                let expected = match status {
                    429 => matches!(
                        e,
                        ModelError::RateLimited {
                            retry_after: Some(_),
                            ..
                        }
                    ),
                    _ if name.contains("openai-error") => {
                        matches!(e, ModelError::QuotaExceeded { .. })
                    }
                    _ => matches!(e, ModelError::InvalidRequest { .. }),
                };
                assert!(expected, "{name}: {e:?}");
            } else {
                let m = (api.decode_response)(&v).unwrap_or_else(|e| panic!("{name}: {e}"));
                check_message(&name, &m);
            }
        }
    }
    checked
}

/// `first` + the decoded `answer`, encoded, must equal `followup`'s
/// messages up to and including the replayed answer.
fn check_replay(api: &Api, name: &str, first: &Value, answer: &Message, followup: &Value) {
    // Reasoning replay needs reasoning enabled on Anthropic; the others
    // send it whenever it is their own.
    let decoded_first = (api.decode_request)(first).unwrap();
    let mut req: ModelRequest = decoded_first.request.clone();
    req.messages.push(answer.clone());
    let mut encoded = (api.encode_request)(&req, "m", false).unwrap().body;
    let mut followup = followup.clone();
    (api.canonicalize)(&mut encoded);
    (api.canonicalize)(&mut followup);
    let key = api.messages_key;
    let n = encoded[key].as_array().unwrap().len();
    let got = normalize(&json!(encoded[key].as_array().unwrap()[..n]));
    let want = normalize(&json!(followup[key].as_array().unwrap()[..n]));
    assert_eq!(
        got, want,
        "{name}: the replayed answer differs from Parlance's encoding of it"
    );
}

fn cassette(api: &Api, name: &str, doc: &Value) {
    let interactions = doc["interactions"].as_array().unwrap();
    let mut previous: Option<(Value, Message)> = None;
    for (i, it) in interactions.iter().enumerate() {
        let label = format!("{name} #{i}");
        // Some cassettes also hold calls to other providers.
        let uri = it["request"]["uri"].as_str().unwrap_or_default();
        if !uri.contains(api.endpoint) {
            continue;
        }
        // JSON bodies are `parsed_body`, or (some cassettes) JSON text.
        let text_body = it["request"]["body"]
            .as_str()
            .and_then(|t| serde_json::from_str::<Value>(t).ok());
        let request = match (&it["request"]["parsed_body"], &text_body) {
            (Value::Null, Some(b)) => b,
            (b, _) => b,
        };
        let accepted = it["response"]["status"]["code"].as_u64() == Some(200);
        round_trip(api, &label, request, accepted);
        if let Some((prev_req, prev_answer)) = previous.take() {
            // A follow-up continues the previous conversation; a cassette
            // may also repeat a request as it was (to read a cache).
            let len = |v: &Value| v[api.messages_key].as_array().map_or(0, Vec::len);
            if len(request) > len(&prev_req) {
                check_replay(api, &label, &prev_req, &prev_answer, request);
            }
        }
        let status = it["response"]["status"]["code"].as_u64().unwrap() as u16;
        let response = &it["response"];
        if status != 200 {
            let e = (api.classify)(status, response["parsed_body"].to_string().as_bytes(), None);
            assert!(
                matches!(e, ModelError::InvalidRequest { .. }),
                "{label}: {e:?}"
            );
            continue;
        }
        let json_text = response["body"]["string"]
            .as_str()
            .and_then(|t| serde_json::from_str::<Value>(t).ok());
        let answer = if let Some(v) = json_text {
            (api.decode_response)(&v).unwrap_or_else(|e| panic!("{label}: {e}"))
        } else if let Some(text) = response["body"]["string"].as_str() {
            let bytes = common::body_bytes(&response["body"]["string"]);
            // AWS event-stream frames, recorded as base64.
            let events = if bytes != text.as_bytes() {
                parlance_providers::transport::aws_eventstream::parse_event_stream(&bytes)
                    .unwrap_or_else(|e| panic!("{label}: {e}"))
            } else {
                parse_sse(text)
            };
            let (_, m) = api
                .decode_stream(&events)
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            m
        } else {
            (api.decode_response)(&response["parsed_body"])
                .unwrap_or_else(|e| panic!("{label}: {e}"))
        };
        check_message(&label, &answer);
        previous = Some((request.clone(), answer));
    }
}

#[test]
fn every_openai_chat_fixture() {
    assert_eq!(sweep(&OPENAI_CHAT), 15);
}

#[test]
fn every_anthropic_fixture() {
    assert_eq!(sweep(&ANTHROPIC), 19);
}

#[test]
fn every_openai_responses_fixture() {
    assert_eq!(sweep(&RESPONSES), 14);
}

#[test]
fn every_gemini_fixture() {
    assert_eq!(sweep(&GEMINI), 16);
}

#[test]
fn every_bedrock_fixture() {
    assert_eq!(sweep(&BEDROCK), 23);
}

fn fixture(dir: &str, name: &str) -> std::path::PathBuf {
    common::fixture(dir, name)
}

#[test]
fn anthropic_thinking_and_signatures_come_back_byte_exact_and_in_order() {
    let doc = yaml_file(&fixture(
        "anthropic",
        "pydantic__test_anthropic_tool_with_thinking.yaml",
    ));
    let first = &doc["interactions"][0];
    let answer = (ANTHROPIC.decode_response)(&first["response"]["parsed_body"]).unwrap();
    let Block::Thinking(t) = &answer.content[0] else {
        panic!("thinking first")
    };
    let recorded = &first["response"]["parsed_body"]["content"][0];
    assert_eq!(t.signature.as_deref(), recorded["signature"].as_str());
    assert_eq!(t.thinking, recorded["thinking"].as_str().unwrap());
    assert_eq!(t.provider.as_deref(), Some("anthropic"));
    // Stored as canonical JSON and read back: still byte-exact.
    let stored = parlance_format::to_json(&answer);
    let reloaded = Message::from_json_str(&stored).unwrap();
    assert_eq!(reloaded, answer);

    let stream = yaml_file(&fixture(
        "anthropic",
        "pydantic__test_anthropic_model_thinking_part_stream.yaml",
    ));
    let (_, m) = ANTHROPIC
        .decode_stream(&parse_sse(
            stream["interactions"][0]["response"]["body"]["string"]
                .as_str()
                .unwrap(),
        ))
        .unwrap();
    let Block::Thinking(t) = &m.content[0] else {
        panic!("thinking first")
    };
    assert!(
        t.signature.as_ref().is_some_and(|s| s.len() > 100),
        "the one signature_delta is kept"
    );
    assert!(t.thinking.len() > 100, "thinking deltas assembled");

    let redacted = yaml_file(&fixture(
        "anthropic",
        "pydantic__test_anthropic_model_thinking_part_redacted_stream.yaml",
    ));
    let (_, m) = ANTHROPIC
        .decode_stream(&parse_sse(
            redacted["interactions"][0]["response"]["body"]["string"]
                .as_str()
                .unwrap(),
        ))
        .unwrap();
    let redacted_blocks = m
        .content
        .iter()
        .filter(|b| matches!(b, Block::Thinking(t) if t.redacted.is_some()))
        .count();
    assert!(redacted_blocks >= 1);
    // Re-encoded with thinking on: redacted blocks go back unchanged, first.
    let mut req = ModelRequest {
        messages: vec![Message::user("q"), m.clone()],
        ..Default::default()
    };
    req.options.reasoning = Some(parlance_model::Reasoning {
        include_thoughts: true,
        ..Default::default()
    });
    let body = (ANTHROPIC.encode_request)(&req, "claude", false)
        .unwrap()
        .body;
    let sent = &body["messages"][1]["content"];
    for (i, b) in m
        .content
        .iter()
        .enumerate()
        .filter(|(_, b)| matches!(b, Block::Thinking(_)))
    {
        let Block::Thinking(t) = b else {
            unreachable!()
        };
        if let Some(data) = &t.redacted {
            assert_eq!(sent[i], json!({"type": "redacted_thinking", "data": data}));
        }
    }
}

#[test]
fn anthropic_usage_adds_cache_reads_and_writes_to_the_input() {
    let doc = yaml_file(&fixture(
        "anthropic",
        "pydantic__test_anthropic_cache_real_api.yaml",
    ));
    for it in doc["interactions"].as_array().unwrap() {
        let body = &it["response"]["parsed_body"];
        let m = (ANTHROPIC.decode_response)(body).unwrap();
        let u = m.usage.unwrap();
        let raw = &body["usage"];
        let read = raw["cache_read_input_tokens"].as_u64().unwrap();
        let write = raw["cache_creation_input_tokens"].as_u64().unwrap();
        assert_eq!(
            u.input_tokens,
            raw["input_tokens"].as_u64().unwrap() + read + write
        );
        assert_eq!(u.cached_tokens, read);
    }
}

#[test]
fn openai_usage_and_finish_reasons() {
    let m = (OPENAI_CHAT.decode_response)(&json_file(&fixture(
        "openai-chat",
        "lingua__toolCallRequest__chat-completions__response.json",
    )))
    .unwrap();
    let u = m.usage.unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.output_tokens,
            u.cached_tokens,
            u.reasoning_tokens
        ),
        (148, 218, 0, Some(192))
    );
    assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
    let m = (OPENAI_CHAT.decode_response)(&json_file(&fixture(
        "openai-chat",
        "lingua__reasoningRequestTruncated__chat-completions__response.json",
    )))
    .unwrap();
    assert_eq!(m.finish_reason, Some(FinishReason::Length));
    // The raw stream with include_usage: usage comes in the last chunk.
    let doc = yaml_file(&fixture(
        "openai-chat",
        "pydantic__test_run_stream_sync_streams_real_model.yaml",
    ));
    let (_, m) = OPENAI_CHAT
        .decode_stream(&parse_sse(
            doc["interactions"][0]["response"]["body"]["string"]
                .as_str()
                .unwrap(),
        ))
        .unwrap();
    assert!(m.usage.is_some_and(|u| u.input_tokens > 0));
    assert_eq!(m.finish_reason, Some(FinishReason::ToolCalls));
    assert_eq!(m.tool_calls().next().unwrap().name, "get_capital");
}

#[test]
fn anthropic_finish_reasons_keep_the_raw_value() {
    for (file, canonical, raw) in [
        (
            "lingua__reasoningRequestTruncated__anthropic__response.json",
            FinishReason::Length,
            "max_tokens",
        ),
        (
            "lingua__stopSequencesParam__anthropic__response.json",
            FinishReason::Stop,
            "stop_sequence",
        ),
        (
            "vercel__anthropic-refusal.json",
            FinishReason::ContentFilter,
            "refusal",
        ),
        (
            "lingua__toolCallRequest__anthropic__response.json",
            FinishReason::ToolCalls,
            "tool_use",
        ),
    ] {
        let m = (ANTHROPIC.decode_response)(&json_file(&fixture("anthropic", file))).unwrap();
        assert_eq!(
            (m.finish_reason, m.finish_reason_raw.as_deref()),
            (Some(canonical), Some(raw)),
            "{file}"
        );
    }
}

#[test]
fn anthropic_tool_without_arguments_streams_to_an_empty_object() {
    let (_, m) = ANTHROPIC
        .decode_stream(&chunk_lines(&read(&fixture(
            "anthropic",
            "vercel__anthropic-tool-no-args.chunks.txt",
        ))))
        .unwrap();
    let call = m.tool_calls().next().unwrap();
    assert_eq!(call.arguments, json!({}));
    assert_eq!(call.raw_arguments, None);
}

#[test]
fn anthropic_message_delta_usage_is_cumulative_and_last_wins() {
    let (_, m) = ANTHROPIC
        .decode_stream(&chunk_lines(&read(&fixture(
            "anthropic",
            "vercel__anthropic-message-delta-input-tokens.chunks.txt",
        ))))
        .unwrap();
    let lines: Vec<Value> = read(&fixture(
        "anthropic",
        "vercel__anthropic-message-delta-input-tokens.chunks.txt",
    ))
    .lines()
    .filter(|l| !l.is_empty())
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let delta = lines.iter().find(|l| l["type"] == "message_delta").unwrap();
    assert_eq!(
        m.usage.unwrap().output_tokens,
        delta["usage"]["output_tokens"].as_u64().unwrap()
    );
    if let Some(i) = delta["usage"]["input_tokens"].as_u64() {
        assert!(
            m.usage.unwrap().input_tokens >= i,
            "the message_delta input count wins"
        );
    }
}

#[test]
fn the_spec_check_rejects_what_the_api_would() {
    assert!(
        !OPENAI_CHAT.spec_errors(&json!({"model": "x"})).is_empty(),
        "messages missing"
    );
    assert!(
        !OPENAI_CHAT
            .spec_errors(&json!({"model": "x", "messages": [{"role": "robot", "content": "hi"}]}))
            .is_empty()
    );
    let no_text = json!({"model": "x", "max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "text"}]}]});
    assert!(
        !ANTHROPIC.spec_errors(&no_text).is_empty(),
        "a text block without text"
    );
    let thinking_without_signature = json!({"model": "x", "max_tokens": 1, "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}]}]});
    assert!(
        !ANTHROPIC
            .spec_errors(&thinking_without_signature)
            .is_empty()
    );
}

/// Issue 15 item 8: a refusal's `stop_details` stay next to the raw finish
/// reason, streamed (on `message_delta`) as well as whole.
#[test]
fn anthropic_refusal_details_are_kept_streamed_and_whole() {
    let details = json!({"type": "refusal", "category": "cyber", "explanation": "blocked"});
    let whole = (ANTHROPIC.decode_response)(
        &json!({"content": [], "stop_reason": "refusal", "stop_details": details}),
    )
    .unwrap();
    assert_eq!(whole.finish_reason_raw.as_deref(), Some("refusal"));
    assert_eq!(whole.finish_details.as_ref(), details.as_object());
    let events = [
        json!({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 1}}}),
        json!({"type": "message_delta", "delta": {"stop_reason": "refusal", "stop_details": details}}),
        json!({"type": "message_stop"}),
    ];
    let lines: Vec<(String, String)> = events
        .iter()
        .map(|e| (String::new(), e.to_string()))
        .collect();
    let (_, streamed) = ANTHROPIC.decode_stream(&lines).unwrap();
    assert_eq!(streamed.finish_details.as_ref(), details.as_object());
    let odd =
        (ANTHROPIC.decode_response)(&json!({"content": [], "stop_details": "no"})).unwrap_err();
    assert!(
        odd.to_string().contains("stop_details: expected an object"),
        "{odd}"
    );
}
