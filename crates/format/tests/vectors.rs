//! Runs the shared test vectors in `testdata/format/` (the Python and Node
//! bindings run the same files): valid canonical documents round-trip
//! byte-identically and validate against the published schema; older
//! shapes read into the expected canonical form; invalid documents fail
//! with the exact path-named error.

use parlance_format::{
    Block, Conversation, Decision, FormatError, Message, Response, ToolSpec, Turn, schema, to_json,
};
use serde_json::Value;

fn load(name: &str) -> Vec<Value> {
    let path = format!(
        "{}/../../testdata/format/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Reads `value` as `kind` and writes it back as canonical JSON.
fn read(kind: &str, value: &Value) -> Result<String, FormatError> {
    Ok(match kind {
        "message" => to_json(&Message::from_value(value)?),
        "block" => to_json(&Block::from_value(value)?),
        "conversation" => {
            let c = Conversation::from_value(value)?;
            if value.is_array() {
                to_json(&c.messages)
            } else {
                to_json(&c)
            }
        }
        "response" => to_json(&Response::from_value(value)?),
        "turn" => to_json(&Turn::from_value(value)?),
        "decision" => to_json(&Decision::from_value(value)?),
        "tool_spec" => to_json(&ToolSpec::from_value(value)?),
        other => panic!("unknown kind {other}"),
    })
}

/// The published schema file of `kind` (`input`: the one for what the
/// readers accept, older shapes included).
fn schema_file(kind: &str, input: bool) -> &'static str {
    let file = match kind {
        "message" => "message.schema.json",
        "block" => "content-block.schema.json",
        "response" => "response.schema.json",
        "tool_spec" => "tool-spec.schema.json",
        "decision" => "decision.schema.json",
        "conversation" => "conversation.schema.json",
        other => panic!("unknown kind {other}"),
    };
    if input {
        schema::input_name(file).unwrap_or(file)
    } else {
        file
    }
}

/// Errors of the published schema `file` for `value`.
fn schema_errors(file: &str, value: &Value) -> Vec<String> {
    let schema = schema::by_name(file).unwrap();
    let validator = jsonschema::draft202012::new(&schema).expect("schema compiles");
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Validates a canonical value of `kind` against the published schema (and
/// the input schema, which accepts every canonical document too).
fn check_schema(kind: &str, value: &Value) {
    if kind == "turn" {
        for m in value["messages"].as_array().unwrap() {
            check_schema("message", m);
        }
        return;
    }
    for input in [false, true] {
        let file = schema_file(kind, input);
        let errors = schema_errors(file, value);
        assert!(errors.is_empty(), "{file} rejects {value}: {errors:#?}");
    }
}

#[test]
fn valid_documents_round_trip_byte_identically_and_validate() {
    let cases = load("valid.json");
    assert!(cases.len() >= 20);
    for case in cases {
        let (name, kind, value) = (
            &case["name"],
            case["kind"].as_str().unwrap(),
            &case["value"],
        );
        let canonical = serde_json::to_string(value).unwrap();
        let out = read(kind, value).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            out, canonical,
            "{name}: canonical input must come out byte-identical"
        );
        let again = read(kind, &serde_json::from_str(&out).unwrap()).unwrap();
        assert_eq!(again, out, "{name}: second round trip");
        check_schema(kind, value);
    }
}

#[test]
fn older_shapes_read_into_canonical_form() {
    for case in load("legacy.json") {
        let (name, kind) = (&case["name"], case["kind"].as_str().unwrap());
        let out = read(kind, &case["input"]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            out,
            serde_json::to_string(&case["expected"]).unwrap(),
            "{name}"
        );
        check_schema(kind, &case["expected"]);
        // Issue 15, item 9: the input schema accepts what the reader
        // accepts; the canonical one need not.
        if kind != "turn" {
            let file = schema_file(kind, true);
            let errors = schema_errors(file, &case["input"]);
            assert!(
                errors.is_empty(),
                "{name}: {file} rejects the input: {errors:#?}"
            );
        }
        if name
            .as_str()
            .is_some_and(|n| n.starts_with("seed messages-and-tools"))
        {
            assert!(
                !schema_errors(schema_file(kind, false), &case["input"]).is_empty(),
                "{name}: the canonical schema describes what Parlance writes, not older shapes"
            );
        }
    }
}

#[test]
fn invalid_documents_fail_with_the_exact_error() {
    let cases = load("invalid.json");
    assert!(
        cases.len() >= 30,
        "the issue asks for at least 30 invalid inputs"
    );
    let mut failures = Vec::new();
    for case in &cases {
        let (name, kind) = (&case["name"], case["kind"].as_str().unwrap());
        let expected = case["error"].as_str().unwrap();
        let result = match case.get("text") {
            Some(text) => {
                parlance_format::parse_conversation(text.as_str().unwrap()).map(|_| String::new())
            }
            None => read(kind, &case["input"]),
        };
        match result {
            Ok(out) => failures.push(format!("{name}: accepted, gave {out}")),
            Err(e) if e.to_string() != expected => {
                failures.push(format!("{name}:\n  expected {expected}\n  got      {e}"))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn published_schema_files_match_the_types() {
    let dir = format!("{}/../../schema", env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("PARLANCE_UPDATE_SCHEMA").is_some();
    for (file, value) in schema::all() {
        let generated = serde_json::to_string_pretty(&value).unwrap() + "\n";
        let path = format!("{dir}/{file}");
        if update {
            std::fs::write(&path, &generated).unwrap();
            continue;
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == generated,
            "{path} differs from what the types generate; run `PARLANCE_UPDATE_SCHEMA=1 cargo test -p parlance-format` and commit"
        );
    }
}
