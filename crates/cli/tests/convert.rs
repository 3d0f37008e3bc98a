//! `parlance convert` driven as a user would, over every fixture of the
//! supported providers in `testdata/providers/`.

mod common;

use std::path::{Path, PathBuf};

use common::run::parlance;
use serde_json::{Value, json};

fn ok(args: &[&str], stdin: &str) -> Value {
    let (code, out, err) = parlance(args, stdin);
    assert_eq!(code, 0, "parlance {args:?} failed: {err}");
    serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("parlance {args:?} printed no JSON ({e}): {out}"))
}

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/providers")
        .join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap_or_else(|e| panic!("{}: {e}", base.display()))
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn yaml(path: &Path) -> Value {
    let y: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    serde_json::to_value(y).unwrap()
}

/// provider request → canonical → the same provider → canonical again:
/// nothing is lost or changed on the way.
fn request_round_trip(format: &str, label: &str, body: &Value) {
    let canonical = ok(&["convert", "--from", format], &body.to_string());
    assert!(canonical["messages"].is_array(), "{label}");
    let rebuilt = ok(
        &[
            "convert",
            "--from",
            "canonical",
            "--to",
            format,
            "--model",
            "m",
        ],
        &canonical.to_string(),
    );
    let again = ok(&["convert", "--from", format], &rebuilt.to_string());
    let mut expected = canonical.clone();
    expected["model"] = json!("m");
    assert_eq!(
        again, expected,
        "{label}: {format} request → canonical → {format} changed the conversation"
    );
}

/// What must agree between a streamed and a non-streamed answer that are
/// separate recordings of the same exchange.
fn shape(m: &Value) -> Value {
    let blocks: Vec<Value> = m["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| match b["type"].as_str().unwrap() {
            "tool_call" => {
                json!({"call": b["tool_call"]["name"], "args": b["tool_call"]["arguments"]})
            }
            t => json!(t),
        })
        .collect();
    json!({"blocks": blocks, "finish": m["finish_reason"]})
}

fn sweep(format: &str, dir: &str) -> usize {
    let mut n = 0;
    for path in fixtures(dir) {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // Other suites' cassettes (their own layouts) are read by the
        // providers' tests/hosts.rs.
        if [
            "crewai__",
            "langchain__",
            "langchaingo__",
            "openllmetry__",
            "magentic__",
        ]
        .iter()
        .any(|p| name.starts_with(p))
            || name.contains("code_execution")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        n += 1;
        if name.ends_with(".yaml") {
            for (i, it) in yaml(&path)["interactions"]
                .as_array()
                .unwrap()
                .iter()
                .enumerate()
            {
                let label = format!("{name} #{i}");
                let uri = it["request"]["uri"].as_str().unwrap_or_default();
                let ours = match format {
                    "openai-chat" => uri.contains("/chat/completions"),
                    "openai-responses" => uri.contains("/responses"),
                    "anthropic" => uri.contains("/v1/messages"),
                    "bedrock-converse" => uri.contains("bedrock-runtime"),
                    _ => uri.contains("generativelanguage"),
                };
                if !ours {
                    continue;
                }
                // JSON bodies are `parsed_body`, or (some cassettes) JSON text.
                let text_body = it["request"]["body"]
                    .as_str()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok());
                let body = match (&it["request"]["parsed_body"], text_body) {
                    (Value::Null, Some(b)) => b,
                    (b, _) => b.clone(),
                };
                request_round_trip(format, &label, &body);
                let response = &it["response"];
                if response["status"]["code"] != 200 {
                    let (code, _, err) = parlance(
                        &["convert", "--from", format, "--kind", "response"],
                        &response["parsed_body"].to_string(),
                    );
                    assert_eq!(code, 1, "{label}: an error body is not a response");
                    assert!(err.contains(": "), "{label}: {err}");
                } else if let Some(body) = response["body"]["string"].as_str() {
                    let kind = if serde_json::from_str::<Value>(body).is_ok() {
                        "response"
                    } else if body.contains("data:") || body.contains("event:") {
                        "stream"
                    } else {
                        // Binary frames as base64: a_binary_bedrock_stream_converts.
                        continue;
                    };
                    let m = ok(&["convert", "--from", format, "--kind", kind], body);
                    assert_eq!(m["role"], "assistant", "{label}");
                } else {
                    let m = ok(
                        &["convert", "--from", format, "--kind", "response"],
                        &response["parsed_body"].to_string(),
                    );
                    assert_eq!(m["role"], "assistant", "{label}");
                }
            }
        } else if name.ends_with("request.json") {
            request_round_trip(format, &name, &serde_json::from_str(&text).unwrap());
        } else if name.ends_with("response-streaming.json") || name.ends_with(".chunks.txt") {
            let (code, out, err) = parlance(
                &["convert", "--from", format, "--kind", "stream", "--compact"],
                &text,
            );
            if name.contains("error") {
                assert_eq!(code, 1, "{name}: a failed stream is an error");
                assert!(err.contains("quota"), "{name}: {err}");
                continue;
            }
            assert_eq!(code, 0, "{name}: {err}");
            let streamed: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(streamed["role"], "assistant");
            let sibling = [
                name.replace("response-streaming", "response"),
                name.replace(".chunks.txt", ".json"),
            ]
            .into_iter()
            .map(|s| path.with_file_name(s))
            .find(|p| p.exists() && *p != path);
            if let Some(sibling) = sibling.filter(|_| !name.contains("reasoning-encrypted")) {
                let plain = ok(
                    &["convert", "--from", format, "--kind", "response"],
                    &std::fs::read_to_string(&sibling).unwrap(),
                );
                assert_eq!(
                    shape(&streamed),
                    shape(&plain),
                    "{name}: response and stream of one exchange disagree"
                );
            }
        } else if name.ends_with(".json") {
            let v: Value = serde_json::from_str(&text).unwrap();
            let (code, out, err) =
                parlance(&["convert", "--from", format, "--kind", "response"], &text);
            if v.get("error").is_some_and(|e| !e.is_null()) {
                assert_eq!(code, 1, "{name}: an error body is not a response");
                assert!(!err.is_empty());
            } else {
                assert_eq!(code, 0, "{name}: {err}");
                let m: Value = serde_json::from_str(&out).unwrap();
                assert!(m["finish_reason"].is_string(), "{name}");
            }
        }
    }
    n
}

#[test]
fn every_openai_chat_fixture() {
    assert_eq!(sweep("openai-chat", "openai-chat"), 15);
}

#[test]
fn every_openai_responses_fixture() {
    assert_eq!(sweep("openai-responses", "openai-responses"), 14);
}

#[test]
fn every_anthropic_fixture() {
    assert_eq!(sweep("anthropic", "anthropic"), 19);
}

#[test]
fn every_gemini_fixture() {
    assert_eq!(sweep("gemini", "gemini"), 16);
}

#[test]
fn every_bedrock_fixture() {
    assert_eq!(sweep("bedrock-converse", "bedrock-converse"), 23);
}

#[test]
fn across_providers_with_warnings_on_stderr() {
    let doc = yaml(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../testdata/providers/anthropic/pydantic__test_anthropic_tool_with_thinking.yaml",
    ));
    let body = doc["interactions"][1]["request"]["parsed_body"].to_string();
    let (code, out, err) = parlance(
        &[
            "convert",
            "--from",
            "anthropic",
            "--to",
            "openai-chat",
            "--model",
            "gpt-4o",
            "--compact",
        ],
        &body,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1, "--compact prints one line");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["model"], "gpt-4o");
    assert!(!out.contains("signature"));
    let warnings: Vec<&str> = err.lines().collect();
    assert!(
        !warnings.is_empty() && warnings.iter().all(|w| w.starts_with("warning: ")),
        "{err}"
    );
    assert!(err.contains("thinking dropped"), "{err}");
}

#[test]
fn bad_input_names_the_path_and_exits_1() {
    let (code, out, err) = parlance(
        &[
            "convert",
            "--from",
            "canonical",
            "--to",
            "anthropic",
            "--model",
            "c",
        ],
        r#"{"messages": [{"role": "user", "content": [{"type": "txt"}]}]}"#,
    );
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("messages[0].content[0].type: unknown block type \"txt\""),
        "{err}"
    );
    let (code, _, err) = parlance(
        &["convert", "--from", "openai-chat"],
        r#"{"model": "x", "messages": [{"role": "robot"}]}"#,
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("messages[0].role: unknown role \"robot\""),
        "{err}"
    );
    let (code, _, err) = parlance(&["convert", "--from", "klingon"], "{}");
    assert_eq!(code, 1);
    assert!(err.contains("--from: unknown format \"klingon\""), "{err}");
    let (code, _, err) = parlance(
        &["convert", "--from", "anthropic", "--to", "gemini"],
        r#"{"max_tokens": 5, "messages": []}"#,
    );
    assert_eq!(code, 1);
    assert!(err.contains("--model: required"), "{err}");
}

#[test]
fn help_documents_every_format_and_kind_with_examples() {
    let (code, out, _) = parlance(&["convert", "--help"], "");
    assert_eq!(code, 0);
    for word in ["request", "response", "stream", "Examples:", "--compact"] {
        assert!(out.contains(word), "--help lacks {word}:\n{out}");
    }
    // Every name --from and --to take, as a word of the help (issue 37,
    // item 7: bedrock-converse and the providers' dialects were missing).
    let words: Vec<&str> = out
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .collect();
    let names = parlance_providers::convert::format_names();
    for name in names.split(", ") {
        assert!(words.contains(&name), "--help lacks {name}:\n{out}");
    }
    assert!(names.contains("bedrock-converse") && names.contains("deepseek"));
}

/// Issue 37, item 7: a provider's dialect converts with its own reasoning
/// fields: DeepSeek's `reasoning_content` survives a round trip through
/// canonical, where OpenAI's dialect (which has none) drops it, warned.
#[test]
fn a_providers_dialect_keeps_its_reasoning_through_convert() {
    let body = json!({"model": "deepseek-reasoner", "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": null, "reasoning_content": "Call the tool.",
         "tool_calls": [{"id": "call_1", "type": "function",
                         "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
    ]})
    .to_string();
    let (code, out, err) = parlance(
        &["convert", "--from", "deepseek", "--to", "deepseek"],
        &body,
    );
    assert_eq!(code, 0, "{err}");
    let back: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        back["messages"][1]["reasoning_content"], "Call the tool.",
        "{out}"
    );
    assert!(!err.contains("dropped"), "{err}");
    let (code, out, err) = parlance(
        &["convert", "--from", "deepseek", "--to", "openai-chat"],
        &body,
    );
    assert_eq!(code, 0, "{err}");
    let back: Value = serde_json::from_str(&out).unwrap();
    assert!(
        back["messages"][1].get("reasoning_content").is_none(),
        "{out}"
    );
    assert!(err.contains("dropped"), "the drop is a warning: {err}");
    let (code, out, err) = parlance(
        &["convert", "--from", "cerebras", "--kind", "response"],
        r#"{"id": "c1", "model": "gpt-oss-120b", "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": "4", "reasoning": "2+2."}}]}"#,
    );
    assert_eq!(code, 0, "{err}");
    let m: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(m["content"][0]["thinking"], "2+2.", "{out}");
    assert_eq!(m["provider"], "cerebras", "{out}");
}

/// Issue 15, item 1: reasoning items replayed without an `id` (optional on
/// input items) are kept, in place, and no warning claims they were dropped.
#[test]
fn responses_reasoning_items_without_an_id_are_kept_in_place() {
    let body = json!({"model": "gpt-5", "input": [
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAA1"},
        {"type": "function_call", "call_id": "call_1", "name": "weather", "arguments": "{\"city\":\"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Now Rome."}], "encrypted_content": "gAAA2"},
        {"type": "reasoning", "summary": [], "encrypted_content": "gAAA3"},
        {"type": "function_call", "call_id": "call_2", "name": "weather", "arguments": "{\"city\":\"Rome\"}"},
        {"type": "function_call_output", "call_id": "call_2", "output": "rain"}
    ]});
    let (code, out, err) = parlance(
        &[
            "convert",
            "--from",
            "openai-responses",
            "--to",
            "openai-responses",
        ],
        &body.to_string(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("dropped"), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["input"], body["input"], "8 items in, the same 8 out");
}

/// Item 2: options are scoped by API: `include` (Responses only) never
/// reaches Chat Completions, and the warning names it.
#[test]
fn options_of_one_api_do_not_reach_another_api_of_the_same_vendor() {
    let body = json!({"model": "gpt-5", "input": "hi", "include": ["reasoning.encrypted_content"],
        "store": false, "service_tier": "flex"});
    let (code, out, err) = parlance(
        &[
            "convert",
            "--from",
            "openai-responses",
            "--to",
            "openai-chat",
        ],
        &body.to_string(),
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    for key in ["include", "store", "service_tier"] {
        assert!(v.get(key).is_none(), "{key} sent to Chat: {v}");
        assert!(err.contains(key), "the warning names {key}: {err}");
    }
    // Within the same API they all stay.
    let same = ok(
        &[
            "convert",
            "--from",
            "openai-responses",
            "--to",
            "openai-responses",
        ],
        &body.to_string(),
    );
    for key in ["include", "store", "service_tier"] {
        assert_eq!(same[key], body[key], "{key}");
    }
}

/// Item 3: `reasoning.summary: "detailed"` stays "detailed".
#[test]
fn a_detailed_reasoning_summary_stays_detailed() {
    for summary in ["auto", "concise", "detailed"] {
        let body = json!({"model": "o3", "input": "hi", "reasoning": {"effort": "high", "summary": summary}});
        let v = ok(
            &[
                "convert",
                "--from",
                "openai-responses",
                "--to",
                "openai-responses",
            ],
            &body.to_string(),
        );
        assert_eq!(v["reasoning"], body["reasoning"], "{summary}");
    }
}

/// Item 4: cache hints have a canonical home (a `cache_point` block, a
/// tool's `cache_point`), go back exactly to Anthropic, become OpenAI
/// breakpoints, and are named in a warning where the target has none.
#[test]
fn cache_hints_are_translated_or_warned() {
    let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 100,
        "system": [{"type": "text", "text": "Long instructions", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "tools": [{"name": "look", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "A long document", "cache_control": {"type": "ephemeral"}},
                                         {"type": "text", "text": "Question?"}]}]});
    let canonical = ok(&["convert", "--from", "anthropic"], &body.to_string());
    assert_eq!(
        canonical["messages"][0]["content"][1],
        json!({"type": "cache_point", "cache_point": {"ttl": "1h"}})
    );
    assert_eq!(canonical["tools"][0]["cache_point"], json!({}));
    let (code, out, err) = parlance(
        &["convert", "--from", "anthropic", "--to", "anthropic"],
        &body.to_string(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(err, "", "nothing dropped");
    let again: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(again["system"], body["system"]);
    assert_eq!(again["tools"], body["tools"]);
    assert_eq!(again["messages"], body["messages"]);

    let (code, out, err) = parlance(
        &[
            "convert",
            "--from",
            "anthropic",
            "--to",
            "openai-chat",
            "--model",
            "gpt-5",
        ],
        &body.to_string(),
    );
    assert_eq!(code, 0, "{err}");
    let chat: Value = serde_json::from_str(&out).unwrap();
    let breakpoint = json!({"mode": "explicit"});
    assert_eq!(
        chat["messages"][0]["content"][0]["prompt_cache_breakpoint"],
        breakpoint
    );
    assert_eq!(
        chat["messages"][1]["content"][0]["prompt_cache_breakpoint"],
        breakpoint
    );
    assert!(
        chat["messages"][1]["content"][1]
            .get("prompt_cache_breakpoint")
            .is_none()
    );
    assert!(err.contains("tools[0]") && err.contains("cache"), "{err}");
    assert!(
        err.contains("1h"),
        "the ttl OpenAI cannot promise is named: {err}"
    );

    let (code, _, err) = parlance(
        &[
            "convert",
            "--from",
            "anthropic",
            "--to",
            "gemini",
            "--model",
            "gemini-2.5-flash",
        ],
        &body.to_string(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("messages[1].content[1]: cache point dropped"),
        "{err}"
    );
}

/// Item 7: the words of an error say what it is.
#[test]
fn errors_are_worded_for_what_went_wrong() {
    let (code, _, err) = parlance(
        &["convert", "--from", "anthropic"],
        r#"{"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": 5}]}"#,
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("malformed request: messages[0].content"),
        "{err}"
    );
    // A recorded stream cut short is a truncated stream, not a network error.
    let stream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\",\"usage\":{\"input_tokens\":1}}}\n\n";
    let (code, _, err) = parlance(
        &["convert", "--from", "anthropic", "--kind", "stream"],
        stream,
    );
    assert_eq!(code, 1);
    assert!(
        err.contains("malformed response: the stream ended before message_stop (truncated)"),
        "{err}"
    );
    assert!(!err.contains("network"), "{err}");
}

#[test]
fn input_that_is_not_utf8_exits_1_naming_the_byte() {
    let dir = std::env::temp_dir().join(format!("parlance-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.json");
    std::fs::write(&file, b"{\"messages\": [\"\xff\"]}").unwrap();
    let path = file.to_str().unwrap();
    for args in [
        vec!["convert", "--from", "anthropic", path],
        vec!["validate", path],
    ] {
        let (code, _, err) = parlance(&args, "");
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.contains("not UTF-8") && err.contains("byte 15"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Item 8: `stream: true` is carried (canonical documents keep it), and an
/// Anthropic refusal keeps its `stop_details` next to the raw finish reason.
#[test]
fn stream_flags_and_refusal_details_are_kept() {
    let body = json!({"model": "c", "max_tokens": 5, "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    let canonical = ok(&["convert", "--from", "anthropic"], &body.to_string());
    assert_eq!(canonical["stream"], true);
    let again = ok(
        &["convert", "--from", "canonical", "--to", "anthropic"],
        &canonical.to_string(),
    );
    assert_eq!(again["stream"], true);
    let refusal = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/providers/anthropic/vercel__anthropic-refusal.json"),
    )
    .unwrap();
    let m = ok(
        &["convert", "--from", "anthropic", "--kind", "response"],
        &refusal,
    );
    assert_eq!(m["finish_reason_raw"], "refusal");
    assert_eq!(m["finish_details"]["category"], "cyber");
    assert!(
        m["finish_details"]["explanation"]
            .as_str()
            .unwrap()
            .contains("Usage Policy")
    );
}

/// Issue 39: a recorded Gemini 429 asking for a wait no `Duration` holds
/// (or a negative one) is the rate-limit error it is, not a panic.
#[test]
fn a_gemini_error_with_any_retry_delay_is_a_rate_limit_error() {
    for delay in ["1844674407370955161534.4s", "-1s", "NaNs", "infs", "1e30s"] {
        let body = json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Resource has been exhausted",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]}});
        let (code, out, err) = parlance(
            &["convert", "--from", "gemini", "--kind", "response"],
            &body.to_string(),
        );
        assert_eq!((code, out.as_str()), (1, ""), "{delay}: {err}");
        assert!(
            err.contains("rate limited: Resource has been exhausted") && !err.contains("panicked"),
            "{delay}: {err}"
        );
        let stream = format!("data: {body}\n\n");
        let (code, _, err) = parlance(
            &["convert", "--from", "gemini", "--kind", "stream"],
            &stream,
        );
        assert_eq!(code, 1, "{delay}: {err}");
        assert!(
            err.contains("rate limited: Resource has been exhausted") && !err.contains("panicked"),
            "{delay}: {err}"
        );
    }
}

/// Issue 37, item 9: a recorded ConverseStream body is binary (AWS
/// event-stream frames); `convert` reads it as the HTTP path does.
#[test]
fn a_binary_bedrock_stream_converts() {
    use base64::Engine;
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
        "../../testdata/providers/bedrock-converse/pydantic__test_bedrock_model_thinking_part_stream.yaml",
    );
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let b64: String = doc["interactions"][0]["response"]["body"]["string"]
        .as_str()
        .unwrap()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let frames = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let dir = std::env::temp_dir().join(format!("parlance-convert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("stream.bin");
    std::fs::write(&file, &frames).unwrap();
    let (code, out, err) = parlance(
        &[
            "convert",
            "--from",
            "bedrock-converse",
            "--kind",
            "stream",
            file.to_str().unwrap(),
        ],
        "",
    );
    // Bytes that are neither frames nor UTF-8 are named as such.
    let bad = dir.join("bad.bin");
    std::fs::write(&bad, b"data: \xff\xfe").unwrap();
    let (bad_code, _, bad_err) = parlance(
        &[
            "convert",
            "--from",
            "anthropic",
            "--kind",
            "stream",
            bad.to_str().unwrap(),
        ],
        "",
    );
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(bad_code, 1);
    assert!(bad_err.contains("not UTF-8 (byte 6"), "{bad_err}");
    assert_eq!(code, 0, "{err}");
    let m: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(m["content"][0]["type"], "thinking", "{out}");
    assert!(m["content"][0]["signature"].is_string(), "{out}");
    assert_eq!(m["content"][1]["type"], "text", "{out}");
    assert_eq!(m["finish_reason"], "stop", "{out}");
}
