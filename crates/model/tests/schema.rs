//! The request document's published schema (issue 15, item 6): the files
//! under `schema/` are what the types generate, every document Parlance
//! writes validates against `request.schema.json`, and what the reader
//! accepts (older shapes too) against `request.input.schema.json`.

use parlance_model::{RequestDocument, schema};
use serde_json::{Value, json};

fn errors(file: &str, value: &Value) -> Vec<String> {
    let s = schema::by_name(file).unwrap();
    let v = jsonschema::draft202012::new(&s).expect("schema compiles");
    v.iter_errors(value)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

#[test]
fn published_request_schema_files_match_the_types() {
    let dir = format!("{}/../../schema", env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("PARLANCE_UPDATE_SCHEMA").is_some();
    for (file, value) in schema::request() {
        let generated = serde_json::to_string_pretty(&value).unwrap() + "\n";
        let path = format!("{dir}/{file}");
        if update {
            std::fs::write(&path, &generated).unwrap();
            continue;
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == generated,
            "{path} differs from what the types generate; run `PARLANCE_UPDATE_SCHEMA=1 cargo test -p parlance-model --test schema` and commit"
        );
    }
}

#[test]
fn written_documents_validate_and_older_shapes_validate_as_input() {
    let written = json!({"model": "gpt-5", "stream": true,
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Be brief."}, {"type": "cache_point", "cache_point": {"ttl": "1h"}}]},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
            {"role": "assistant", "content": [{"type": "tool_call", "tool_call": {"id": "c", "name": "f", "arguments": {}}}]},
            {"role": "tool", "content": [{"type": "tool_result", "tool_result": {"tool_call_id": "c", "content": []}}]}],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "options": {"max_tokens": 10, "tool_choice": {"tool": "f"},
            "reasoning": {"effort": "high", "summary": "detailed"},
            "extra": {"openai-responses": {"include": ["reasoning.encrypted_content"]}}}});
    let doc = RequestDocument::from_value(&written).unwrap();
    assert_eq!(doc.to_value(), written);
    for file in ["request.schema.json", "request.input.schema.json"] {
        let e = errors(file, &written);
        assert!(e.is_empty(), "{file}: {e:#?}");
    }
    let older = json!({"messages": [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": [{"type": "tool_call", "id": "c", "name": "f", "args": {}}]}]});
    RequestDocument::from_value(&older).unwrap();
    assert!(errors("request.input.schema.json", &older).is_empty());
    assert!(!errors("request.schema.json", &older).is_empty());
    // What the reader refuses, the schemas refuse too (here, a bad option).
    let bad = json!({"messages": [], "options": {"max_tokens": "ten"}});
    assert!(RequestDocument::from_value(&bad).is_err());
    assert!(!errors("request.input.schema.json", &bad).is_empty());
}
