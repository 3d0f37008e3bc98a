//! The published JSON Schema (2020-12) of the canonical format, generated
//! from the Rust types. The files under `schema/` at the repository root
//! are these values; a test fails when they drift.

use schemars::{JsonSchema, generate::SchemaSettings};
use serde_json::Value;

use crate::{Block, Decision, FORMAT_VERSION, Message, Response, ToolSpec};

/// Base of every schema `$id`; the major version is part of the path.
pub const SCHEMA_BASE: &str = "https://parlance.dev/schema/v1/";

/// Every published schema as `(file name, schema)`.
pub fn all() -> Vec<(&'static str, Value)> {
    vec![
        (
            "message.schema.json",
            generate::<Message>("message.schema.json", "Parlance message"),
        ),
        (
            "content-block.schema.json",
            generate::<Block>("content-block.schema.json", "Parlance content block"),
        ),
        (
            "tool-spec.schema.json",
            generate::<ToolSpec>("tool-spec.schema.json", "Parlance tool spec"),
        ),
        (
            "response.schema.json",
            generate::<Response>("response.schema.json", "Parlance response envelope"),
        ),
        (
            "decision.schema.json",
            generate::<Decision>("decision.schema.json", "Parlance approval decision"),
        ),
    ]
}

/// The schema of one published type, by file name (`message.schema.json`).
pub fn by_name(name: &str) -> Option<Value> {
    all().into_iter().find(|(n, _)| *n == name).map(|(_, v)| v)
}

fn generate<T: JsonSchema>(file: &str, title: &str) -> Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = schema.to_value();
    close_blocks(&mut value);
    let obj = value.as_object_mut().expect("a root schema is an object");
    // Put $schema, $id, title and version first so the files read well.
    let mut out = serde_json::Map::new();
    out.insert(
        "$schema".into(),
        obj.remove("$schema")
            .unwrap_or_else(|| "https://json-schema.org/draft/2020-12/schema".into()),
    );
    out.insert("$id".into(), Value::String(format!("{SCHEMA_BASE}{file}")));
    obj.remove("title");
    out.insert("title".into(), Value::String(title.into()));
    out.insert(
        "x-parlance-format-version".into(),
        Value::String(FORMAT_VERSION.into()),
    );
    for (k, v) in std::mem::take(obj) {
        out.insert(k, v);
    }
    Value::Object(out)
}

/// A block is an object whose fields come partly from its variant (`type`)
/// and partly from its payload; `unevaluatedProperties: false` on each
/// variant refuses unknown fields, as the reader does.
fn close_blocks(root: &mut Value) {
    let block = if root.get("title").and_then(Value::as_str) == Some("Block") {
        Some(root)
    } else {
        root.get_mut("$defs").and_then(|d| d.get_mut("Block"))
    };
    if let Some(Value::Array(variants)) = block.and_then(|b| b.get_mut("oneOf")) {
        for v in variants {
            if let Value::Object(v) = v {
                v.insert("unevaluatedProperties".into(), Value::Bool(false));
            }
        }
    }
}
