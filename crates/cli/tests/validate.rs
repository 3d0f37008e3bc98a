//! Drives the real `parlance` binary.

mod common;

use std::process::Command;

/// `parlance ARGS` run from the repository's root.
fn parlance(args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_parlance"));
    cmd.args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    common::run::output(cmd, stdin.unwrap_or(""))
}

#[test]
fn validate_accepts_the_example_conversation() {
    let (code, out, err) = parlance(&["validate", "examples/conversation.json"], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.trim(),
        "examples/conversation.json: valid conversation: 5 message(s) (1 system, 1 user, 2 assistant, 1 tool), 1 tool call(s), 1 tool result(s), 1 tool(s)"
    );
}

#[test]
fn validate_names_the_path_of_an_error() {
    let doc = r#"{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "tool_call", "id": "c", "name": "f"}]}]}"#;
    let (code, out, err) = parlance(&["validate", "-"], Some(doc));
    assert_eq!(code, 1);
    assert_eq!(out, "");
    assert_eq!(
        err.trim(),
        "-: messages[1].content[0].args: required field missing"
    );
}

#[test]
fn validate_json_output_for_scripts() {
    let (code, out, _) = parlance(
        &["validate", "--json", "-"],
        Some("[{\"role\": \"robot\", \"content\": []}]"),
    );
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["valid"], false);
    assert_eq!(v["errors"][0]["path"], "[0].role");
    assert_eq!(
        v["errors"][0]["message"],
        "unknown role \"robot\" (expected one of: system, user, assistant, tool)"
    );
}

#[test]
fn validate_canonicalises_the_seed_flat_tool_call() {
    let doc = r#"{"id": "msg_01", "role": "assistant", "content": [{"type": "text", "text": "Let me check that order."}, {"type": "tool_call", "id": "call_9", "name": "get_order", "args": {"order_id": "A-1001"}}]}"#;
    let (code, out, err) = parlance(&["validate", "--json", "--canonical", "-"], Some(doc));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["kind"], "message");
    assert_eq!(
        v["canonical"]["content"][1],
        serde_json::json!({"type": "tool_call", "tool_call": {"id": "call_9", "name": "get_order", "arguments": {"order_id": "A-1001"}}})
    );
}

#[test]
fn schema_prints_the_checked_in_files() {
    for name in [
        "message",
        "content-block",
        "tool-spec",
        "response",
        "decision",
    ] {
        let (code, out, err) = parlance(&["schema", name], None);
        assert_eq!(code, 0, "{err}");
        let on_disk = std::fs::read_to_string(format!(
            "{}/../../schema/{name}.schema.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert_eq!(out, on_disk, "{name}");
    }
    let (code, _, err) = parlance(&["schema", "nope"], None);
    assert_eq!(code, 2);
    assert!(err.contains("no schema named \"nope\""), "{err}");
}
