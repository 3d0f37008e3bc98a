//! The examples as a user runs them. The minimal one talks to a real
//! provider adapter (OpenAI Chat Completions) pointed at a replay server on
//! 127.0.0.1; the offline ones run as they are. `cargo test` builds the
//! examples first; `cargo test --test examples` alone does not (then build
//! them with `cargo build -p parlance-ai --examples`).

use std::path::PathBuf;
use std::process::Command;

use parlance_testkit::replay::{ReplayServer, Reply};
use serde_json::json;

/// An example's binary, built by cargo next to this test's.
fn example(name: &str) -> Command {
    let exe = std::env::current_exe().unwrap();
    let dir: PathBuf = exe.parent().unwrap().parent().unwrap().join("examples");
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is not built: run `cargo build -p parlance-ai --examples` or `cargo test -p parlance-ai`",
        path.display()
    );
    let mut cmd = Command::new(path);
    for var in ["OPENAI_API_KEY", "OPENAI_BASE_URL", "PARLANCE_MODEL"] {
        cmd.env_remove(var);
    }
    cmd
}

fn chat(message: serde_json::Value, finish: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}}),
    )
}

#[tokio::test]
async fn the_minimal_example_calls_its_tool_and_prints_the_answer() {
    let server = ReplayServer::start(vec![
        chat(
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1",
                "type": "function", "function": {"name": "weather", "arguments": "{\"name\":\"Paris\"}"}}]}),
            "tool_calls",
        ),
        chat(
            json!({"role": "assistant", "content": "It is sunny and 21 °C in Paris."}),
            "stop",
        ),
    ])
    .await;
    let base = format!("{}/v1", server.url);
    let out = tokio::task::spawn_blocking(move || {
        example("minimal")
            .env("OPENAI_API_KEY", "sk-test")
            .env("OPENAI_BASE_URL", base)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.trim(), "It is sunny and 21 °C in Paris.");

    let got = server.received();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].header("authorization"), Some("Bearer sk-test"));
    let tool = &got[0].body["tools"][0]["function"];
    assert_eq!(tool["name"], "weather");
    assert_eq!(tool["description"], "Today's weather in a city.");
    assert_eq!(
        tool["parameters"]["properties"]["name"]["description"],
        "The city's name, e.g. \"Paris\"."
    );
    let result = &got[1].body["messages"][2];
    assert_eq!(result["role"], "tool");
    assert_eq!(result["content"], "Sunny and 21 °C in Paris");
}

#[test]
fn without_a_key_the_minimal_example_says_which_is_missing() {
    let out = example("minimal").output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("OPENAI_API_KEY is not set"), "{stderr}");
}

#[test]
fn the_offline_examples_run() {
    for (name, expect) in [
        ("tool_schema", "c2: ok — refunded 40 EUR on A-1001"),
        ("approval", "answer: Your refund of 120 EUR is on its way."),
        ("converting", "\"tool_use_id\": \"call_1\""),
    ] {
        let out = example(name).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name}: {stdout}");
        assert!(stdout.contains(expect), "{name}: {stdout}");
    }
}

#[test]
fn the_readme_shows_the_minimal_example_word_for_word() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let example =
        std::fs::read_to_string(format!("{root}/crates/parlance/examples/minimal.rs")).unwrap();
    let code = &example[example.find("use parlance").unwrap()..];
    let start = readme
        .find("```rust\n")
        .expect("a Rust block in the README")
        + 8;
    let end = start + readme[start..].find("```\n").unwrap();
    assert_eq!(
        &readme[start..end],
        code,
        "README.md's Rust section drifted from the example"
    );
}
