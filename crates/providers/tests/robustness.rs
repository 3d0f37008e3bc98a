//! No input may crash the process: what a provider, a gateway or a file
//! sends is bounded, checked and answered with a typed error naming what
//! is wrong. Each test here is a crash found by fuzzing (issue 15, items
//! 10–12, and the fuzz targets under `fuzz/`), kept in the stable suite.

mod common;

use common::{ANTHROPIC, GEMINI, OPENAI_CHAT, RESPONSES};
use parlance_format::{Block, Message};
use parlance_model::{ModelError, ModelRequest};
use parlance_providers::WIRE_FORMATS;
use serde_json::{Value, json};

fn malformed(e: &ModelError) -> &str {
    match e {
        ModelError::MalformedResponse { message } => message,
        other => panic!("expected a malformed-response error, got {other:?}"),
    }
}

/// Item 10: one 95-byte event with a huge `index` made the decoder grow its
/// block list until the allocator aborted.
#[test]
fn an_anthropic_block_index_far_ahead_is_a_malformed_response() {
    let mut d = (ANTHROPIC.new_stream)();
    d.event(
        "",
        r#"{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1}}}"#,
    )
    .unwrap();
    let e = d
        .event(
            "",
            r#"{"type":"content_block_start","index":18446744073709551615,"content_block":{"type":"text","text":""}}"#,
        )
        .unwrap_err();
    assert!(malformed(&e).contains("index"), "{e}");
    // A start for a block already started is out of order too.
    let mut d = (ANTHROPIC.new_stream)();
    let start =
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#;
    d.event("", start).unwrap();
    let e = d.event("", start).unwrap_err();
    assert!(malformed(&e).contains("index 0"), "{e}");
}

/// Item 11: media with data but no type decoded from a provider made the
/// OpenAI encoders panic (`expect("data has a media type")`). The decoders
/// refuse it, as the canonical reader does.
#[test]
fn inline_media_without_a_type_is_refused_by_the_decoders() {
    let anthropic = json!({"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "data": "aGk="}}]}]});
    let e = (ANTHROPIC.decode_request)(&anthropic).unwrap_err();
    assert!(
        e.to_string()
            .contains("messages[0].content[0].source.media_type"),
        "{e}"
    );
    let gemini =
        json!({"contents": [{"role": "user", "parts": [{"inlineData": {"data": "aGk="}}]}]});
    let e = (GEMINI.decode_request)(&gemini).unwrap_err();
    assert!(
        e.to_string()
            .contains("contents[0].parts[0].inlineData.mimeType"),
        "{e}"
    );
    let response = json!({"candidates": [{"content": {"role": "model", "parts": [{"inlineData": {"data": "aGk="}}]}, "finishReason": "STOP"}]});
    let e = (GEMINI.decode_response)(&response).unwrap_err();
    assert!(
        e.to_string()
            .contains("candidates[0].content.parts[0].inlineData.mimeType"),
        "{e}"
    );
}

/// Item 11, the other side: whatever a caller builds by hand, an encoder
/// answers with an error, never a panic.
#[test]
fn the_encoders_refuse_media_data_without_a_type() {
    let image = Block::Image {
        image: parlance_format::Media {
            data: Some("aGk=".into()),
            ..Default::default()
        },
    };
    let file = Block::File {
        file: parlance_format::Media {
            data: Some("aGk=".into()),
            ..Default::default()
        },
    };
    for block in [image, file] {
        let req = ModelRequest {
            messages: vec![Message::new(parlance_format::Role::User, vec![block])],
            ..Default::default()
        };
        for f in WIRE_FORMATS {
            match (f.encode_request)(&req, "m", false) {
                Ok(_) => panic!("{}: media data without a type was sent", f.name),
                Err(e) => assert!(
                    e.to_string().contains("messages[0].content[0]")
                        && e.to_string().contains("media_type"),
                    "{}: {e}",
                    f.name
                ),
            }
        }
    }
}

/// Item 12: token counts near `u64::MAX` added up overflowed (a panic in
/// debug builds, a wrap-around in release). Sums saturate.
#[test]
fn usage_sums_saturate() {
    let max = u64::MAX;
    let anthropic = json!({"id": "m", "type": "message", "role": "assistant", "model": "c",
        "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": max, "cache_read_input_tokens": max, "cache_creation_input_tokens": max, "output_tokens": 1}});
    let m = (ANTHROPIC.decode_response)(&anthropic).unwrap();
    assert_eq!(m.usage.unwrap().input_tokens, max);
    let gemini = json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": max, "toolUsePromptTokenCount": max, "candidatesTokenCount": max, "thoughtsTokenCount": max}});
    let u = (GEMINI.decode_response)(&gemini).unwrap().usage.unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (max, max));
    // Run totals saturate too.
    let mut total = parlance_format::Usage {
        input_tokens: max,
        output_tokens: max,
        cached_tokens: max,
        cache_write_tokens: Some(max),
        reasoning_tokens: Some(max),
    };
    total.add(&total.clone());
    assert_eq!(total.input_tokens, max);
    assert_eq!(total.cache_write_tokens, Some(max));
}

/// Every decoder, given an object of the wrong shape, answers with an
/// error naming the path (never a panic, never an empty message).
#[test]
fn no_decoder_panics_on_small_hostile_inputs() {
    let inputs = [
        json!(null),
        json!([]),
        json!("x"),
        json!({}),
        json!({"foo": 1}),
        json!({"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}),
        json!({"output": [{"type": "function_call"}]}),
        json!({"content": [{"type": "tool_use"}]}),
        json!({"candidates": [{"content": {"parts": [{"functionCall": {}}]}}]}),
    ];
    for f in WIRE_FORMATS {
        for input in &inputs {
            let _ = (f.decode_request)(input);
            let _ = (f.decode_response)(input);
            let mut d = (f.stream_decoder)();
            let _ = d.event("", &input.to_string());
            let _ = d.end();
        }
    }
    for api in [&OPENAI_CHAT, &RESPONSES] {
        let _ = (api.decode_response)(&Value::Null);
    }
}

fn nested(levels: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..levels {
        v = json!({"a": v});
    }
    v
}

/// Item 13 on the provider side: a value from a provider deeper than the
/// format's limit would make a message that cannot be read back once
/// stored. Decoders refuse it (or keep argument text as text).
#[test]
fn values_deeper_than_the_format_allows_are_refused() {
    let deep = nested(parlance_format::MAX_VALUE_DEPTH + 1);
    let anthropic = json!({"id": "m", "type": "message", "role": "assistant", "model": "c",
        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": deep}], "stop_reason": "tool_use", "usage": {}});
    let e = (ANTHROPIC.decode_response)(&anthropic).unwrap_err();
    assert!(
        e.to_string()
            .contains("content[0].input: nested deeper than 100"),
        "{e}"
    );
    let gemini = json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "f", "args": deep}}]}, "finishReason": "STOP"}]});
    let e = (GEMINI.decode_response)(&gemini).unwrap_err();
    assert!(
        e.to_string().contains("functionCall.args: nested deeper"),
        "{e}"
    );
    let request =
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "metadata": deep});
    for f in WIRE_FORMATS {
        let e = (f.decode_request)(&request).unwrap_err();
        assert_eq!(
            e,
            ModelError::MalformedRequest {
                message: "(root): nested deeper than 100 levels of arrays and objects (the format's limit)".into()
            },
            "{}",
            f.name
        );
    }
    // Vertex's streamed arguments: a path of 101 keys.
    let mut d = (GEMINI.new_stream)();
    let path = format!("${}", ".k".repeat(101));
    let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"name": "f", "willContinue": true,
        "partialArgs": [{"jsonPath": path, "stringValue": "x"}]}}]}}]});
    let e = d.event("", &chunk.to_string()).unwrap_err();
    assert!(malformed(&e).contains("jsonPath"), "{e}");
}

/// Item 7: a request that cannot be read is a malformed *request*.
#[test]
fn a_bad_request_body_is_a_malformed_request() {
    for f in WIRE_FORMATS {
        let e = (f.decode_request)(&json!([])).unwrap_err();
        assert!(
            matches!(e, ModelError::MalformedRequest { .. })
                && e.to_string().starts_with("malformed request: "),
            "{}: {e}",
            f.name
        );
    }
}

/// Decoders write only what the canonical reader accepts: a tool result
/// that answers no call is refused where it is read.
#[test]
fn a_tool_result_answering_no_call_is_refused() {
    let chat = json!({"model": "m", "messages": [{"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "nope", "content": "x"}]});
    let e = (OPENAI_CHAT.decode_request)(&chat).unwrap_err();
    assert!(
        e.to_string()
            .contains("no earlier tool call has id \"nope\""),
        "{e}"
    );
}

/// Found by `decode_stream_openai_chat`: argument fragments for a call
/// whose first fragment (with its id and name) never came made a call with
/// an empty id and name, which the canonical reader refuses.
#[test]
fn a_chat_stream_call_without_its_id_or_name_is_malformed() {
    let chunk = |tc: Value| {
        (
            String::new(),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [tc]}, "finish_reason": null}]})
                .to_string(),
        )
    };
    let events = vec![
        chunk(
            json!({"index": 1, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}),
        ),
        chunk(json!({"index": 0, "function": {"arguments": "{\"a\": 1}"}})),
    ];
    let e = OPENAI_CHAT.decode_stream(&events).unwrap_err();
    assert!(
        malformed(&e).contains("tool_calls[index 0].id: the call's first fragment has no id"),
        "{e}"
    );
    let no_name = vec![chunk(
        json!({"index": 0, "id": "c", "function": {"arguments": "{}"}}),
    )];
    let e = OPENAI_CHAT.decode_stream(&no_name).unwrap_err();
    assert!(malformed(&e).contains("function.name"), "{e}");
}

/// Every decoder's answer is checked by the canonical reader: a call
/// with an empty id (from a non-streamed answer or a stream) is a
/// malformed response, not a message that fails where it is stored.
#[test]
fn answers_the_canonical_reader_refuses_are_malformed() {
    let anthropic = json!({"content": [{"type": "tool_use", "id": "", "name": "f", "input": {}}],
        "stop_reason": "tool_use"});
    let e = (ANTHROPIC.decode_response)(&anthropic).unwrap_err();
    assert!(malformed(&e).contains("in canonical form"), "{e}");
    assert!(malformed(&e).contains("tool_call.id"), "{e}");
    let chat = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        "finish_reason": "tool_calls"}]});
    let e = (OPENAI_CHAT.decode_response)(&chat).unwrap_err();
    assert!(malformed(&e).contains("tool_call.id"), "{e}");
    // A Responses stream whose arguments arrive for an item never added.
    let events: Vec<(String, String)> = [
        json!({"type": "response.function_call_arguments.delta", "output_index": 0, "delta": "{}"}),
        json!({"type": "response.completed", "response": {"id": "r", "status": "completed", "output": []}}),
    ]
    .iter()
    .map(|e| (String::new(), e.to_string()))
    .collect();
    if let Err(e) = RESPONSES.decode_stream(&events) {
        malformed(&e);
    }
}

/// Found by `decode_request_openai_responses`: a reasoning summary the
/// API does not define was kept, and the request document written from it
/// did not read back.
#[test]
fn an_unknown_reasoning_summary_is_a_malformed_request() {
    let body =
        json!({"model": "m", "input": "hi", "reasoning": {"effort": "high", "summary": "a(to"}});
    let e = (RESPONSES.decode_request)(&body).unwrap_err();
    assert!(
        matches!(&e, ModelError::MalformedRequest { message }
            if message.contains("reasoning.summary: unknown summary \"a(to\"")),
        "{e}"
    );
    for summary in ["auto", "concise", "detailed"] {
        let body = json!({"model": "m", "input": "hi", "reasoning": {"summary": summary}});
        let d = (RESPONSES.decode_request)(&body).unwrap();
        parlance_model::RequestDocument::from_value(&d.document().to_value()).unwrap();
    }
}

/// Issue 39: a count past `u32::MAX` in a request body (max tokens,
/// top_k, a thinking budget) is the largest count, never wrapped round to
/// a small one (4294967301 used to be read as 5).
#[test]
fn counts_past_u32_saturate() {
    let n = u64::from(u32::MAX) + 6;
    let user = json!([{"role": "user", "content": "hi"}]);
    let bodies = [
        (
            "openai-chat",
            json!({"model": "m", "messages": user, "max_completion_tokens": n}),
        ),
        (
            "openai-chat",
            json!({"model": "m", "messages": user, "max_tokens": n}),
        ),
        (
            "openai-responses",
            json!({"model": "m", "input": "hi", "max_output_tokens": n}),
        ),
        (
            "anthropic",
            json!({"model": "m", "messages": user, "max_tokens": n, "top_k": n,
            "thinking": {"type": "enabled", "budget_tokens": n}}),
        ),
        (
            "gemini",
            json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "generationConfig": {"maxOutputTokens": n, "topK": n, "thinkingConfig": {"thinkingBudget": n}}}),
        ),
        (
            "ollama",
            json!({"model": "m", "messages": user, "options": {"num_predict": n, "top_k": n}}),
        ),
        (
            "bedrock-converse",
            json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}],
            "inferenceConfig": {"maxTokens": n}}),
        ),
    ];
    for (format, body) in bodies {
        let f = parlance_providers::wire_format(format).unwrap();
        let d = (f.decode_request)(&body).unwrap_or_else(|e| panic!("{format}: {e}"));
        let o = &d.request.options;
        assert_eq!(o.max_tokens, Some(u32::MAX), "{format}: {body}");
        if let Some(k) = o.top_k {
            assert_eq!(k, u32::MAX, "{format}: top_k");
        }
        if let Some(b) = o.reasoning.as_ref().and_then(|r| r.budget_tokens) {
            assert_eq!(b, u32::MAX, "{format}: budget");
        }
    }
}
