//! The cross-provider matrix: for every ordered pair of the adapters,
//! a conversation with thinking, three parallel tool calls, a failed tool
//! result and an image, made by the first, is sent to the second. The
//! request must be valid against the second's official spec and obey its
//! rules (ids, pairing of calls and results, thinking placement), and no
//! opaque data of the first may reach it.
//!
//! `every_ordered_pair_of_registered_formats` does the same for every wire
//! format registered (`WIRE_FORMATS` and the formats the registry's
//! providers speak, the hosts' Chat dialects included): a format joins it
//! by being registered.

mod common;

use common::{ANTHROPIC, Api, BEDROCK, GEMINI, MISTRAL, OLLAMA, OPENAI_CHAT, RESPONSES};
use parlance_format::{Block, Media, Message, Role, Thinking, ToolCall, ToolResult, ToolStatus};
use parlance_model::{ModelError, ModelOptions, ModelRequest};
use parlance_providers::{Encoded, PROVIDERS, WIRE_FORMATS, WireFormat};
use serde_json::{Value, json};

const SECRETS: [&str; 9] = [
    "SIG-BEDROCK-reason",
    "UkVEQUNURUQtQkVEUk9DSw==",
    "SIG-MISTRAL-think",
    "SIG-ANTHROPIC-abc",
    "ENC-OPENAI-xyz",
    "SIG-GEMINI-thought",
    "SIG-GEMINI-call",
    "rs_0042",
    "fc_0001",
];

/// Each provider's answer with thinking and three parallel calls, as its
/// own decoder reads it.
fn made_by(api: &Api) -> Message {
    let args = |i: usize| json!({"city": (["Paris", "Oslo", "Lima"][i])});
    let body = match api.dir {
        "openai-chat" => {
            json!({"id": "chatcmpl-1", "model": "gpt", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "reasoning_content": "Three cities: call the tool three times.",
            "tool_calls": ((0..3).map(|i| json!({"id": format!("call_{i}"), "type": "function", "function": {"name": "get_weather", "arguments": args(i).to_string()}})).collect::<Vec<_>>())}}]})
        }
        "anthropic" => {
            json!({"id": "msg_1", "model": "claude", "type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": ([json!({"type": "thinking", "thinking": "Three cities.", "signature": "SIG-ANTHROPIC-abc"}), json!({"type": "text", "text": "Checking."})]
                .into_iter().chain((0..3).map(|i| json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "get_weather", "input": args(i)}))).collect::<Vec<_>>()),
            "usage": {"input_tokens": 10, "output_tokens": 5}})
        }
        "openai-responses" => {
            json!({"id": "resp_1", "model": "gpt-5", "status": "completed", "output":
            ([json!({"id": "rs_0042", "type": "reasoning", "encrypted_content": "ENC-OPENAI-xyz", "summary": [{"type": "summary_text", "text": "Three cities."}, {"type": "summary_text", "text": "Parallel calls."}]})]
                .into_iter().chain((0..3).map(|i| json!({"id": format!("fc_000{}", i + 1), "type": "function_call", "call_id": format!("call_{i}"), "name": "get_weather", "arguments": args(i).to_string(), "status": "completed"}))).collect::<Vec<_>>())})
        }
        "gemini" => {
            let parts: Vec<Value> = [json!({"text": "Three cities.", "thought": true, "thoughtSignature": "SIG-GEMINI-thought"})]
                .into_iter()
                .chain((0..3).map(|i| {
                    let mut p = json!({"functionCall": {"id": format!("g{i}"), "name": "get_weather", "args": args(i)}});
                    if i == 0 {
                        p["thoughtSignature"] = json!("SIG-GEMINI-call");
                    }
                    p
                }))
                .collect();
            json!({"responseId": "r1", "modelVersion": "gemini-3", "candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": parts}}]})
        }
        "mistral" => {
            json!({"id": "m1", "model": "magistral-medium", "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Three cities."}], "signature": "SIG-MISTRAL-think"}],
            "tool_calls": ((0..3).map(|i| json!({"id": format!("Mcall000{i}"), "function": {"name": "get_weather", "arguments": args(i).to_string()}})).collect::<Vec<_>>())}}]})
        }
        "ollama" => {
            json!({"model": "qwen3", "created_at": "2025-01-01T00:00:00Z", "done": true, "done_reason": "stop",
            "message": {"role": "assistant", "content": "", "thinking": "Three cities.",
            "tool_calls": ((0..3).map(|i| json!({"function": {"name": "get_weather", "arguments": args(i)}})).collect::<Vec<_>>())},
            "prompt_eval_count": 10, "eval_count": 5})
        }
        "bedrock-converse" => {
            json!({"output": {"message": {"role": "assistant", "content":
                ([json!({"reasoningContent": {"reasoningText": {"text": "Three cities.", "signature": "SIG-BEDROCK-reason"}}}),
                  json!({"reasoningContent": {"redactedContent": "UkVEQUNURUQtQkVEUk9DSw=="}}),
                  json!({"text": "Checking."})]
                .into_iter().chain((0..3).map(|i| json!({"toolUse": {"toolUseId": format!("tooluse_{i}"), "name": "get_weather", "input": args(i)}}))).collect::<Vec<_>>())}},
            "stopReason": "tool_use", "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}, "metrics": {"latencyMs": 1}})
        }
        _ => unreachable!(),
    };
    (api.decode_response)(&body).unwrap_or_else(|e| panic!("{}: {e}", api.dir))
}

fn conversation(source: &Api) -> ModelRequest {
    conversation_with(made_by(source))
}

fn conversation_with(answer: Message) -> ModelRequest {
    let ids: Vec<String> = answer.tool_calls().map(|c| c.id.clone()).collect();
    assert_eq!(ids.len(), 3);
    let results = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let mut r = if i == 1 {
                ToolResult::text(
                    id,
                    ToolStatus::ToolFailed,
                    "get_weather failed: upstream timed out",
                )
            } else {
                ToolResult::text(id, ToolStatus::Ok, format!("{} °C", 10 + i))
            };
            r.name = Some("get_weather".into());
            Block::tool_result(r)
        })
        .collect();
    ModelRequest {
        messages: vec![
            Message::system("You report the weather."),
            Message::new(
                Role::User,
                vec![
                    Block::text("Weather in Paris, Oslo and Lima? Map attached."),
                    Block::Image {
                        image: Media {
                            data: Some("iVBORw0KGgo=".into()),
                            media_type: Some("image/png".into()),
                            ..Media::default()
                        },
                    },
                ],
            ),
            answer,
            Message::new(Role::Tool, results),
        ],
        tools: vec![parlance_format::ToolSpec::new(
            "get_weather",
            "Current weather",
            json!({"type": "object", "properties": {"city": {"type": "string", "minLength": 1}}, "required": ["city"]}),
        )].into(),
        options: ModelOptions {
            max_tokens: Some(1024),
            ..Default::default()
        },
    }
}

/// Calls and results pair up the way `target` requires.
fn check_pairing(target: &Api, body: &Value) {
    match target.dir {
        "bedrock-converse" => {
            let msgs = body["messages"].as_array().unwrap();
            let a = msgs.iter().position(|m| m["role"] == "assistant").unwrap();
            let uses: Vec<&Value> = msgs[a]["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|b| b.get("toolUse"))
                .map(|u| &u["toolUseId"])
                .collect();
            let results: Vec<&Value> = msgs[a + 1]["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|b| b.get("toolResult"))
                .collect();
            assert_eq!(uses.len(), 3);
            assert_eq!(
                uses,
                results.iter().map(|r| &r["toolUseId"]).collect::<Vec<_>>(),
                "results in the next user turn, in order"
            );
            assert_eq!(results[1]["status"], "error");
            for id in uses {
                assert!(
                    id.as_str()
                        .unwrap()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c))
                );
            }
        }
        // The Chat-shaped APIs: each call answered by a tool message, in
        // order, right after the calls' turn.
        "ollama" | "mistral" | "openai-chat" => {
            let msgs = body["messages"].as_array().unwrap();
            let a = msgs
                .iter()
                .position(|m| m["tool_calls"].is_array())
                .unwrap();
            let calls = msgs[a]["tool_calls"].as_array().unwrap();
            assert_eq!(calls.len(), 3);
            for (k, c) in calls.iter().enumerate() {
                let r = &msgs[a + 1 + k];
                assert_eq!(r["role"], "tool");
                match target.dir {
                    "ollama" => {
                        assert_eq!(r["tool_name"], c["function"]["name"]);
                        assert_eq!(
                            r.get("tool_call_id"),
                            c.get("id"),
                            "ids go both ways or neither"
                        );
                        assert!(c["function"]["arguments"].is_object());
                    }
                    "mistral" => {
                        let id = c["id"].as_str().unwrap();
                        assert!(
                            id.len() == 9 && id.chars().all(|c| c.is_ascii_alphanumeric()),
                            "Mistral ids are 9 alphanumerics: {id}"
                        );
                        assert_eq!(r["tool_call_id"], c["id"]);
                    }
                    _ => assert_eq!(r["tool_call_id"], c["id"]),
                }
            }
        }
        "anthropic" => {
            let msgs = body["messages"].as_array().unwrap();
            let a = msgs.iter().position(|m| m["role"] == "assistant").unwrap();
            let uses: Vec<&Value> = msgs[a]["content"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| &b["id"])
                .collect();
            let results: Vec<&Value> = msgs[a + 1]["content"]
                .as_array()
                .unwrap()
                .iter()
                .take(3)
                .map(|b| &b["tool_use_id"])
                .collect();
            assert_eq!(
                uses, results,
                "results first in the next user turn, in order"
            );
            for id in uses {
                assert!(
                    id.as_str()
                        .unwrap()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                );
            }
            assert_eq!(msgs[a + 1]["content"][1]["is_error"], json!(true));
            // Thinking, when present, starts the assistant turn.
            let first = &msgs[a]["content"][0]["type"];
            assert!(first == "thinking" || first == "text" || first == "tool_use");
        }
        "openai-responses" => {
            let items = body["input"].as_array().unwrap();
            let calls: Vec<&Value> = items
                .iter()
                .filter(|i| i["type"] == "function_call")
                .map(|i| &i["call_id"])
                .collect();
            let outputs: Vec<&Value> = items
                .iter()
                .filter(|i| i["type"] == "function_call_output")
                .map(|i| &i["call_id"])
                .collect();
            assert_eq!(calls, outputs);
            // A reasoning item is immediately followed by the item after it.
            for (k, i) in items.iter().enumerate() {
                if i["type"] == "reasoning" {
                    assert!(
                        items
                            .get(k + 1)
                            .is_some_and(|n| n["type"] != "reasoning" || n["id"] != i["id"])
                    );
                }
            }
        }
        "gemini" => {
            let contents = body["contents"].as_array().unwrap();
            let m = contents.iter().position(|c| c["role"] == "model").unwrap();
            let calls: Vec<&Value> = contents[m]["parts"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p.get("functionCall"))
                .collect();
            let responses: Vec<&Value> = contents[m + 1]["parts"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p.get("functionResponse"))
                .collect();
            assert_eq!(calls.len(), responses.len(), "as many responses as calls");
            for (c, r) in calls.iter().zip(&responses) {
                assert_eq!(c["name"], r["name"]);
                assert!(r["response"].is_object());
            }
            // The first call of the step carries a signature (its own or the stand-in).
            let first = contents[m]["parts"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p.get("functionCall").is_some())
                .unwrap();
            assert!(first["thoughtSignature"].is_string());
        }
        _ => unreachable!(),
    }
}

/// `req` encoded by `encode`, the step every pair of both matrices takes
/// alike: with an `api`, the body (less what `strip` takes out) must be
/// valid against the API's official description, and its calls and
/// results must pair by the API's rules. `what` names the pair.
fn sent(
    what: &str,
    req: &ModelRequest,
    encode: fn(&ModelRequest, &str, bool) -> Result<Encoded, ModelError>,
    api: Option<&Api>,
    strip: impl Fn(&Value) -> Value,
) -> Encoded {
    let enc = encode(req, "model-x", false).unwrap_or_else(|e| panic!("{what}: {e}"));
    if let Some(api) = api {
        let errors = api.spec_errors(&strip(&enc.body));
        assert!(errors.is_empty(), "{what}: {errors:#?}\n{:#}", enc.body);
        check_pairing(api, &enc.body);
    }
    enc
}

#[test]
fn every_ordered_pair_of_adapters() {
    let apis = [
        &OPENAI_CHAT,
        &ANTHROPIC,
        &RESPONSES,
        &GEMINI,
        &MISTRAL,
        &OLLAMA,
        &BEDROCK,
    ];
    let mut pairs = 0;
    for source in apis {
        for target in apis {
            let what = format!("{} → {}", source.dir, target.dir);
            let enc = sent(
                &what,
                &conversation(source),
                target.encode_request,
                Some(target),
                Value::clone,
            );
            let text = enc.body.to_string();
            if source.dir != target.dir {
                pairs += 1;
                let same_family =
                    source.dir.starts_with("openai") && target.dir.starts_with("openai");
                if !same_family {
                    for s in SECRETS {
                        assert!(
                            !text.contains(s),
                            "{} → {}: foreign opaque data {s} was sent",
                            source.dir,
                            target.dir
                        );
                    }
                }
                if source.dir != "openai-chat" || target.dir != "openai-responses" {
                    assert!(
                        !enc.warnings.is_empty() || source.dir == "openai-chat",
                        "{} → {}: dropped data is reported",
                        source.dir,
                        target.dir
                    );
                }
            }
        }
    }
    assert_eq!(pairs, 42);
}

#[test]
fn own_opaque_data_goes_back_to_its_provider() {
    let cases: [(&Api, &[&str]); 5] = [
        (
            &BEDROCK,
            &["SIG-BEDROCK-reason", "UkVEQUNURUQtQkVEUk9DSw=="],
        ),
        (&MISTRAL, &["SIG-MISTRAL-think"]),
        (&ANTHROPIC, &["SIG-ANTHROPIC-abc"]),
        (&RESPONSES, &["ENC-OPENAI-xyz", "rs_0042", "fc_0001"]),
        (&GEMINI, &["SIG-GEMINI-thought", "SIG-GEMINI-call"]),
    ];
    for (api, secrets) in cases {
        let mut req = conversation(api);
        if api.dir == "anthropic" {
            req.options.reasoning = Some(parlance_model::Reasoning {
                budget_tokens: Some(1024),
                ..Default::default()
            });
        }
        // Stored as canonical JSON and read back first.
        let stored = parlance_format::to_json(&req.messages);
        req.messages =
            parlance_format::messages_from_value(&serde_json::from_str(&stored).unwrap(), "")
                .unwrap();
        let enc = (api.encode_request)(&req, "m", false).unwrap();
        let text = enc.body.to_string();
        for s in secrets {
            assert!(text.contains(s), "{}: {s} must go back", api.dir);
        }
    }
}

#[test]
fn responses_reasoning_and_gemini_signatures_go_back_byte_exact_after_a_reload() {
    // A recorded Responses reasoning item with encrypted content.
    let doc = common::json_file(&common::fixture(
        "openai-responses",
        "vercel__openai-reasoning-encrypted-content.1.json",
    ));
    let answer = (RESPONSES.decode_response)(&doc).unwrap();
    let reloaded = Message::from_json_str(&parlance_format::to_json(&answer)).unwrap();
    assert_eq!(reloaded, answer);
    let req = ModelRequest {
        messages: vec![Message::user("q"), reloaded],
        ..Default::default()
    };
    let sent = (RESPONSES.encode_request)(&req, "m", false).unwrap().body;
    let recorded: Vec<&Value> = doc["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "reasoning")
        .collect();
    let replayed: Vec<&Value> = sent["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "reasoning")
        .collect();
    assert_eq!(recorded.len(), replayed.len());
    for (r, s) in recorded.iter().zip(replayed) {
        assert_eq!(s["id"], r["id"]);
        assert_eq!(s["encrypted_content"], r["encrypted_content"], "byte-exact");
        assert_eq!(s["summary"], r["summary"]);
    }

    // A recorded Gemini parallel answer: the signature only on the first call.
    let doc = common::yaml_file(&common::fixture(
        "gemini",
        "pydantic__test_google_instructions_only_with_tool_calls.yaml",
    ));
    let body = &doc["interactions"][0]["response"]["parsed_body"];
    let answer = (GEMINI.decode_response)(body).unwrap();
    let reloaded = Message::from_json_str(&parlance_format::to_json(&answer)).unwrap();
    let req = ModelRequest {
        messages: vec![Message::user("q"), reloaded],
        ..Default::default()
    };
    let sent = (GEMINI.encode_request)(&req, "m", false).unwrap().body;
    let recorded_parts = body["candidates"][0]["content"]["parts"]
        .as_array()
        .unwrap();
    let sent_parts = sent["contents"][1]["parts"].as_array().unwrap();
    assert_eq!(recorded_parts.len(), sent_parts.len());
    for (r, s) in recorded_parts.iter().zip(sent_parts) {
        assert_eq!(
            s.get("thoughtSignature"),
            r.get("thoughtSignature"),
            "same part, same position, same bytes"
        );
    }
}

/// Every registered wire format once (by identity): `parlance convert`'s
/// formats and those the providers speak.
fn registered_formats() -> Vec<&'static WireFormat> {
    let mut out: Vec<&'static WireFormat> = Vec::new();
    let all = WIRE_FORMATS
        .iter()
        .copied()
        .chain(PROVIDERS.iter().map(|p| p.format));
    for f in all {
        if !out.iter().any(|o| std::ptr::eq(*o, f)) {
            out.push(f);
        }
    }
    out
}

/// The opaque data (and reasoning text) a format's provider put in
/// `answer_of`: none of it may reach another provider.
fn secrets_of(p: &str) -> [String; 7] {
    [
        format!("THINK-{p}"),
        format!("SIG-{p}"),
        format!("ENC-{p}"),
        format!("REDACTED-{p}"),
        format!("rs_{p}"),
        format!("CALLSIG-{p}"),
        format!("fc_{p}_"),
    ]
}

/// An answer as made by `f`'s provider, whatever the format: signed
/// thinking (with encrypted content and an item id), redacted thinking,
/// text, and three parallel calls, the first signed, each with an item id.
fn answer_of(f: &WireFormat) -> Message {
    let p = f.provider;
    let thinking = Thinking {
        thinking: format!("THINK-{p}: three cities, three calls."),
        signature: Some(format!("SIG-{p}")),
        encrypted_content: Some(format!("ENC-{p}")),
        item_id: Some(format!("rs_{p}")),
        provider: Some(p.into()),
        ..Default::default()
    };
    // Part of the same item (a Responses reasoning item is sent whole).
    let redacted = Thinking {
        redacted: Some(format!("REDACTED-{p}")),
        item_id: Some(format!("rs_{p}")),
        provider: Some(p.into()),
        ..Default::default()
    };
    let mut content = vec![
        Block::Thinking(thinking),
        Block::Thinking(redacted),
        Block::text("Checking."),
    ];
    for (i, city) in ["Paris", "Oslo", "Lima"].into_iter().enumerate() {
        let mut c = ToolCall::new(format!("call_{i}"), "get_weather", json!({"city": city}));
        c.signature = (i == 0).then(|| format!("CALLSIG-{p}"));
        c.item_id = Some(format!("fc_{p}_{i}"));
        c.provider = Some(p.into());
        content.push(Block::ToolCall { tool_call: c });
    }
    let mut m = Message::new(Role::Assistant, content);
    m.provider = Some(p.into());
    m
}

/// The API whose official description and rules `f`'s requests follow
/// (a host's dialect of Chat Completions: Chat's), if it is one of these.
fn api_of(f: &WireFormat) -> Option<&'static Api> {
    [
        &OPENAI_CHAT,
        &ANTHROPIC,
        &RESPONSES,
        &GEMINI,
        &BEDROCK,
        &MISTRAL,
        &OLLAMA,
    ]
    .into_iter()
    .find(|a| a.dir == f.name)
}

/// A request body without the fields a host adds to the API it speaks
/// (documented in docs/providers.md): DeepSeek's `reasoning_content`,
/// Ollama's `reasoning`, OpenRouter's `reasoning_details` and `reasoning`.
fn without_host_fields(f: &WireFormat, body: &Value) -> Value {
    let mut b = body.clone();
    if f.provider != "openai" && f.name == "openai-chat" {
        let o = b.as_object_mut().unwrap();
        o.remove("reasoning");
        for m in o["messages"].as_array_mut().unwrap() {
            let m = m.as_object_mut().unwrap();
            for k in ["reasoning_content", "reasoning", "reasoning_details"] {
                m.remove(k);
            }
        }
    }
    b
}

#[test]
fn every_ordered_pair_of_registered_formats() {
    let formats = registered_formats();
    assert!(formats.len() >= 14, "{} formats", formats.len());
    let mut pairs = 0;
    for source in &formats {
        for target in &formats {
            if std::ptr::eq(*source, *target) {
                continue;
            }
            pairs += 1;
            let what = format!(
                "{}/{} → {}/{}",
                source.name, source.provider, target.name, target.provider
            );
            let enc = sent(
                &what,
                &conversation_with(answer_of(source)),
                target.encode_request,
                api_of(target),
                |b| without_host_fields(target, b),
            );
            let text = enc.body.to_string();
            // What every target must carry: the calls, their results, the
            // failure, the image.
            for needle in [
                "Paris",
                "Oslo",
                "Lima",
                "upstream timed out",
                "iVBORw0KGgo=",
            ] {
                assert!(text.contains(needle), "{what}: {needle} lost\n{text}");
            }
            if source.provider == target.provider {
                continue; // the same provider's two APIs (OpenAI's)
            }
            for s in secrets_of(source.provider) {
                assert!(!text.contains(&s), "{what}: {s} was sent\n{text}");
            }
            assert!(
                enc.warnings
                    .iter()
                    .any(|w| w.contains("thinking") && w.contains(source.provider)),
                "{what}: the dropped thinking is reported with its origin: {:#?}",
                enc.warnings
            );
        }
    }
    assert_eq!(pairs, formats.len() * (formats.len() - 1));
}

/// Where a provider takes its own reasoning back (issue 37): the text of
/// the thinking must appear in the encoded assistant message there, or,
/// where it takes none back, nowhere (and the drop is warned).
fn reasoning_path(provider: &str) -> Option<&'static str> {
    Some(match provider {
        "openai" | "azure" | "fireworks" | "xai" | "vllm" | "lmstudio" => return None,
        "openai-responses" | "azure-responses" => "\"type\":\"reasoning\"",
        "deepseek" => "\"reasoning_content\":\"THINK",
        "openrouter" => "\"reasoning_details\":[{\"type\":\"reasoning.text\",\"text\":\"THINK",
        "groq" | "together" => "\"content\":\"<think>\\nTHINK",
        "cerebras" | "ollama-openai" => "\"reasoning\":\"THINK",
        "anthropic" => "\"thinking\":\"THINK",
        "gemini" => "\"thought\":true",
        "mistral" => "\"type\":\"thinking\"",
        "ollama" => "\"thinking\":\"THINK",
        "bedrock" => "\"reasoningText\":{\"text\":\"THINK",
        other => panic!("{other}: no reasoning path in this table: add it"),
    })
}

/// Each host's usage arithmetic: an answer whose `total_tokens` is
/// prompt + completion (reasoning inside the completion) reads the same
/// everywhere; one that counts reasoning beside the completion and gives
/// no total is read by the host's own rule (xAI's adds it).
#[test]
fn every_hosts_usage_rule_and_reasoning_return_path() {
    for p in PROVIDERS {
        let f = p.format;
        let what = p.name;
        if f.name == "openai-chat" || f.name == "mistral" {
            let answer = |usage: Value| {
                json!({"id": "c", "model": "m", "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": "4"}}], "usage": usage})
            };
            let inside = (f.decode_response)(&answer(
                json!({"prompt_tokens": 10, "completion_tokens": 25,
                "total_tokens": 35, "completion_tokens_details": {"reasoning_tokens": 20}}),
            ))
            .unwrap()
            .usage
            .unwrap();
            assert_eq!(
                (inside.output_tokens, inside.reasoning_tokens),
                (25, Some(20)),
                "{what}"
            );
            let beside =
                (f.decode_response)(&answer(json!({"prompt_tokens": 10, "completion_tokens": 5,
                "completion_tokens_details": {"reasoning_tokens": 20}})))
                .unwrap()
                .usage
                .unwrap();
            let want = if p.name == "xai" { 25 } else { 5 };
            assert_eq!(beside.output_tokens, want, "{what}: its usage rule");
        }
        // Its own reasoning, signed and with the data each API keeps.
        let own = f.provider;
        let details = json!([{"type": "reasoning.text", "text": "THINK it over", "signature": "sig", "format": "f", "index": 0}]);
        let thinking = Thinking {
            thinking: "THINK it over".into(),
            signature: Some("sig".into()),
            encrypted_content: (own == "openrouter")
                .then(|| details.to_string())
                .or_else(|| own.starts_with("openai").then(|| "enc".to_string())),
            item_id: own.starts_with("openai").then(|| "rs_1".to_string()),
            provider: Some(own.into()),
            ..Default::default()
        };
        let mut answer = Message::new(
            Role::Assistant,
            vec![
                Block::Thinking(thinking),
                Block::text("Checking."),
                Block::ToolCall {
                    tool_call: ToolCall::new("call_1", "get_weather", json!({"city": "Paris"})),
                },
            ],
        );
        answer.provider = Some(own.into());
        let req = ModelRequest {
            messages: vec![
                Message::user("Weather in Paris?"),
                answer,
                Message::new(
                    Role::Tool,
                    vec![Block::tool_result(ToolResult::text(
                        "call_1",
                        ToolStatus::Ok,
                        "sunny",
                    ))],
                ),
            ],
            // Reasoning on (Anthropic takes thinking back only then).
            options: ModelOptions {
                max_tokens: Some(2048),
                reasoning: Some(parlance_model::Reasoning {
                    budget_tokens: Some(1024),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let enc = (f.encode_request)(&req, "m", false).unwrap_or_else(|e| panic!("{what}: {e}"));
        let body = enc.body.to_string();
        match reasoning_path(p.name) {
            Some(needle) => assert!(body.contains(needle), "{what}: {needle} not in\n{body}"),
            None => {
                assert!(
                    !body.contains("THINK"),
                    "{what}: takes no reasoning back\n{body}"
                );
                assert!(
                    enc.warnings.iter().any(|w| w.contains("thinking")),
                    "{what}: the drop is warned: {:?}",
                    enc.warnings
                );
            }
        }
    }
}
