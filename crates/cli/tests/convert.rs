//! `parlance convert` driven as a user would, over every fixture of the
//! supported providers in `testdata/providers/`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn parlance(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("parlance starts");
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(data.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

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
                    _ => uri.contains("generativelanguage"),
                };
                if !ours {
                    continue;
                }
                request_round_trip(format, &label, &it["request"]["parsed_body"]);
                let response = &it["response"];
                if response["status"]["code"] != 200 {
                    let (code, _, err) = parlance(
                        &["convert", "--from", format, "--kind", "response"],
                        &response["parsed_body"].to_string(),
                    );
                    assert_eq!(code, 1, "{label}: an error body is not a response");
                    assert!(err.contains(": "), "{label}: {err}");
                } else if let Some(sse) = response["body"]["string"].as_str() {
                    let m = ok(&["convert", "--from", format, "--kind", "stream"], sse);
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
    for word in [
        "canonical",
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
        "request",
        "response",
        "stream",
        "Examples:",
        "--compact",
    ] {
        assert!(out.contains(word), "--help lacks {word}:\n{out}");
    }
}
