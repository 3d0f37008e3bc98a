//! Issue 15, item 5: every decoder refuses a document without its API's
//! required shape, naming the path. `{"foo": 1}` is no answer and no
//! request, and another API's answer is never read as an empty message.

use parlance_model::ModelError;
use parlance_providers::WIRE_FORMATS;
use serde_json::{Value, json};

/// A minimal answer of each API, by wire format name.
fn answers() -> [(&'static str, Value); 5] {
    [
        (
            "openai-chat",
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}),
        ),
        (
            "openai-responses",
            json!({"id": "r", "status": "completed", "output": [{"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "hi"}]}]}),
        ),
        (
            "anthropic",
            json!({"id": "m", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}),
        ),
        (
            "gemini",
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "hi"}]}, "finishReason": "STOP"}]}),
        ),
        (
            "mistral",
            json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}, "finish_reason": "stop"}]}),
        ),
    ]
}

/// APIs of one shape (Mistral's is OpenAI Chat's): each reads the other's
/// answers, as the servers that speak them do.
fn same_shape(a: &str, b: &str) -> bool {
    let chat = ["openai-chat", "mistral"];
    a == b || (chat.contains(&a) && chat.contains(&b))
}

fn malformed_response(e: &ModelError) -> &str {
    match e {
        ModelError::MalformedResponse { message } => message,
        other => panic!("expected a malformed-response error, got {other:?}"),
    }
}

#[test]
fn an_answer_is_read_only_by_its_own_api() {
    for f in WIRE_FORMATS {
        for (name, body) in answers() {
            let r = (f.decode_response)(&body);
            if same_shape(name, f.name) {
                let m = r.unwrap_or_else(|e| panic!("{name} as {}: {e}", f.name));
                assert_eq!(m.text(), "hi", "{name}");
            } else {
                let e = r.expect_err(&format!("a {name} answer read as {}", f.name));
                let msg = malformed_response(&e);
                assert!(msg.contains(':'), "{}: {msg}", f.name);
            }
        }
    }
}

#[test]
fn an_object_of_no_known_shape_is_refused_naming_the_path() {
    let foo = json!({"foo": 1});
    for f in WIRE_FORMATS {
        let e = (f.decode_response)(&foo).unwrap_err();
        let msg = malformed_response(&e);
        assert!(
            !msg.starts_with("(root)") && msg.contains(": "),
            "{}: {msg}",
            f.name
        );
        let e = (f.decode_request)(&foo).unwrap_err();
        assert!(
            matches!(&e, ModelError::MalformedRequest { message } if message.contains("required") || message.contains("expected")),
            "{}: {e}",
            f.name
        );
        // As a stream: a chunk of no known shape is refused, or the stream
        // ends without an answer; never an empty message.
        let mut d = (f.stream_decoder)();
        let r = d
            .event("", &foo.to_string())
            .and_then(|_| d.end().map(|_| ()));
        assert!(r.is_err(), "{}: a stream of {{\"foo\": 1}} decoded", f.name);
    }
}

#[test]
fn gemini_names_the_misshapen_part_of_an_answer() {
    let gemini = parlance_providers::wire_format("gemini").unwrap();
    for (body, path) in [
        (json!({"candidates": {}}), "candidates: expected an array"),
        (
            json!({"candidates": [1]}),
            "candidates[0]: expected an object",
        ),
        (
            json!({"candidates": [{"content": []}]}),
            "candidates[0].content: expected an object",
        ),
        (
            json!({"candidates": [{"content": {"parts": {}}}]}),
            "candidates[0].content.parts: expected an array",
        ),
        (
            json!({"usageMetadata": 3}),
            "usageMetadata: expected an object",
        ),
        (json!([]), "(root): expected a Gemini"),
    ] {
        let e = (gemini.decode_response)(&body).unwrap_err();
        assert!(malformed_response(&e).contains(path), "{body}: {e}");
    }
    // A blocked prompt has no candidates: still an answer.
    let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
    let m = (gemini.decode_response)(&blocked).unwrap();
    assert_eq!(m.finish_reason_raw.as_deref(), Some("SAFETY"));
    // A stream chunk is checked the same way, its path named.
    let mut d = (gemini.stream_decoder)();
    let e = d.event("", r#"{"choices": []}"#).unwrap_err();
    assert!(
        malformed_response(&e).contains("chunk.candidates: required"),
        "{e}"
    );
}

#[test]
fn a_request_without_its_conversation_is_refused() {
    let gemini = parlance_providers::wire_format("gemini").unwrap();
    let chat_body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
    let e = (gemini.decode_request)(&chat_body).unwrap_err();
    assert!(e.to_string().contains("contents: expected an array"), "{e}");
    let responses = parlance_providers::wire_format("openai-responses").unwrap();
    let e = (responses.decode_request)(&chat_body).unwrap_err();
    assert!(e.to_string().contains("input: required"), "{e}");
    // A follow-up that names the previous response is a request.
    let follow = json!({"model": "m", "previous_response_id": "resp_1"});
    (responses.decode_request)(&follow).unwrap();
}

/// OpenAI Chat and Ollama read one `tools` list shape and differ only
/// where the APIs do: `strict` is OpenAI's (Ollama warns of it), and
/// OpenAI drops a tool of another type with a warning where Ollama, which
/// has function tools only, does not look at the type.
#[test]
fn chat_shaped_tool_lists_differ_only_where_the_apis_do() {
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": [
        {"type": "function", "function": {"name": "a", "description": "A.", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}, "strict": true}},
        {"type": "retrieval", "function": {"name": "b"}}
    ]});
    let chat = parlance_providers::openai_chat::decode_request(&body).unwrap();
    let tools = &chat.request.tools;
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert_eq!(
        (tools[0].name.as_str(), tools[0].description.as_deref()),
        ("a", Some("A."))
    );
    assert_eq!(tools[0].input_schema["properties"]["x"]["type"], "string");
    assert_eq!(tools[0].strict, Some(true));
    assert_eq!(
        chat.warnings,
        ["tools[1]: dropped: retrieval tools are not supported yet (only function tools)"]
    );

    let ollama = parlance_providers::ollama::decode_request(&body).unwrap();
    let tools = &ollama.request.tools;
    assert_eq!(tools.len(), 2, "{tools:?}");
    assert_eq!(tools[0].strict, None);
    assert_eq!(tools[0].input_schema["properties"]["x"]["type"], "string");
    // No parameters: a function of no arguments.
    assert_eq!(
        (tools[1].name.as_str(), tools[1].description.as_deref()),
        ("b", None)
    );
    assert_eq!(tools[1].input_schema, json!({"type": "object"}));
    assert_eq!(
        ollama.warnings,
        ["tools[0].function.strict: dropped: Parlance has no place for it in canonical form"]
    );

    // Both name what is missing, and where.
    for (tools, missing) in [
        (json!([{"type": "function"}]), "tools[0].function: missing"),
        (
            json!([{"type": "function", "function": {"description": "no name"}}]),
            "tools[0].function.name",
        ),
    ] {
        let mut body = body.clone();
        body["tools"] = tools;
        for decode in [
            parlance_providers::openai_chat::decode_request,
            parlance_providers::ollama::decode_request,
        ] {
            let e = decode(&body).unwrap_err();
            assert!(e.to_string().contains(missing), "{e}");
        }
    }
}
