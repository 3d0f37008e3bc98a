//! The published JSON Schema (2020-12) of the canonical format, generated
//! from the Rust types. The files under `schema/` at the repository root
//! are these values; a test fails when they drift.
//!
//! Two kinds: `NAME.schema.json` is the canonical form, what Parlance
//! writes (check your own output with it); `NAME.input.schema.json` is
//! what the readers accept (the canonical form and the older shapes: a
//! flat `tool_call` with `args`, a flat `tool_result`, `reasoning` blocks,
//! a bare string as `content`), for validating documents before giving
//! them to Parlance in another language.

use schemars::{JsonSchema, generate::SchemaSettings};
use serde_json::{Map, Value, json};

use crate::{Block, Decision, FORMAT_VERSION, Message, Response, ToolSpec};

/// A conversation document: an array of messages, or an object with the
/// messages and the tools offered.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // a shape for the schema only
enum ConversationDocument {
    /// The messages alone.
    Messages(Vec<Message>),
    /// The messages and the tools.
    Object(ConversationObject),
}

/// The object form of a conversation.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ConversationObject {
    /// The messages, in order.
    messages: Vec<Message>,
    /// The tools offered to the model.
    #[serde(default)]
    tools: Vec<ToolSpec>,
}

/// Base of every schema `$id`; the major version is part of the path.
pub const SCHEMA_BASE: &str = "https://parlance.dev/schema/v1/";

/// Every published schema of this crate as `(file name, schema)`: the
/// canonical ones, then the input ones (see the module's documentation).
/// The request document's are `parlance_model::schema::all()`.
pub fn all() -> Vec<(&'static str, Value)> {
    let canonical = vec![
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
            "conversation.schema.json",
            generate::<ConversationDocument>("conversation.schema.json", "Parlance conversation"),
        ),
        (
            "response.schema.json",
            generate::<Response>("response.schema.json", "Parlance response envelope"),
        ),
        (
            "decision.schema.json",
            generate::<Decision>("decision.schema.json", "Parlance approval decision"),
        ),
    ];
    let mut out = canonical.clone();
    for (file, schema) in canonical {
        if let Some(input) = input_name(file) {
            out.push((input, input_schema(&schema, input)));
        }
    }
    out
}

/// The input schema's file name for a canonical one that holds blocks.
pub fn input_name(file: &str) -> Option<&'static str> {
    Some(match file {
        "message.schema.json" => "message.input.schema.json",
        "content-block.schema.json" => "content-block.input.schema.json",
        "conversation.schema.json" => "conversation.input.schema.json",
        "response.schema.json" => "response.input.schema.json",
        "decision.schema.json" => "decision.input.schema.json",
        "request.schema.json" => "request.input.schema.json",
        _ => return None,
    })
}

/// The schema of one published type, by file name (`message.schema.json`).
pub fn by_name(name: &str) -> Option<Value> {
    all().into_iter().find(|(n, _)| *n == name).map(|(_, v)| v)
}

/// The schema of `T` as published: draft 2020-12, with the format's
/// `$id` under [`SCHEMA_BASE`], a title and `x-parlance-format-version`.
pub fn generate<T: JsonSchema>(file: &str, title: &str) -> Value {
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

/// What the readers accept, as JSON Schema: `canonical` widened with the
/// older shapes (a flat `tool_call` with `args` or `arguments`, a flat
/// `tool_result`, `reasoning` blocks with `reasoning` or `text`) and a bare
/// string wherever a list of blocks is expected. `null` for an optional
/// field is already allowed by the canonical schemas.
pub fn input_schema(canonical: &Value, file: &str) -> Value {
    let mut v = canonical.clone();
    v["$id"] = Value::String(format!("{SCHEMA_BASE}{file}"));
    if let Some(t) = v.get("title").and_then(Value::as_str) {
        v["title"] = Value::String(format!("{t} (input: canonical and older shapes)"));
    }
    // Blocks: the root (content-block) or a definition.
    let defs_at_root = v.get("$defs").cloned().unwrap_or_default();
    let legacy = legacy_blocks(&defs_at_root);
    if v.get("title")
        .and_then(Value::as_str)
        .is_some_and(|t| t.starts_with("Parlance content block"))
    {
        if let Some(Value::Array(variants)) = v.get_mut("oneOf") {
            variants.extend(legacy);
        }
    } else if let Some(Value::Array(variants)) = v.pointer_mut("/$defs/Block/oneOf") {
        variants.extend(legacy);
    }
    strings_as_blocks(&mut v);
    v
}

/// The older block shapes, built from the canonical definitions so that
/// their fields stay the same.
fn legacy_blocks(defs: &Value) -> Vec<Value> {
    let props = |name: &str| -> Map<String, Value> {
        defs.pointer(&format!("/{name}/properties"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let required = |name: &str| -> Vec<Value> {
        defs.pointer(&format!("/{name}/required"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut call = props("ToolCall");
    call.insert("type".into(), json!({"const": "tool_call"}));
    let args = call.get("arguments").cloned().unwrap_or(json!({}));
    call.insert("args".into(), args);
    let flat_call = json!({
        "type": "object",
        "description": "Older shape: a flat tool call, its arguments under `arguments` or `args`.",
        "properties": call,
        "required": ["type", "id", "name"],
        "oneOf": [{"required": ["arguments"]}, {"required": ["args"]}],
        "additionalProperties": false,
    });
    let mut result = props("ToolResult");
    result.insert("type".into(), json!({"const": "tool_result"}));
    let mut result_required = vec![json!("type")];
    result_required.extend(required("ToolResult"));
    let flat_result = json!({
        "type": "object",
        "description": "Older shape: a flat tool result.",
        "properties": result,
        "required": result_required,
        "additionalProperties": false,
    });
    let mut thinking = props("Thinking");
    let text = thinking
        .remove("thinking")
        .unwrap_or(json!({"type": "string"}));
    thinking.insert("type".into(), json!({"const": "reasoning"}));
    thinking.insert("reasoning".into(), text.clone());
    thinking.insert("text".into(), text);
    let reasoning = json!({
        "type": "object",
        "description": "Older shape: `reasoning` for `thinking`, its text under `reasoning` or `text`.",
        "properties": thinking,
        "required": ["type"],
        "oneOf": [{"required": ["reasoning"]}, {"required": ["text"]}],
        "additionalProperties": false,
    });
    vec![flat_call, flat_result, reasoning]
}

/// Every `{"type": "array", "items": {"$ref": ".../Block"}}` also takes a
/// string (one text block).
fn strings_as_blocks(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let is_blocks = m.get("type") == Some(&json!("array"))
                && m.get("items")
                    .and_then(|i| i.get("$ref"))
                    .and_then(Value::as_str)
                    .is_some_and(|r| r.ends_with("/Block") || r == "#");
            if is_blocks {
                let description = m.remove("description");
                let list = Value::Object(std::mem::take(m));
                m.insert("anyOf".into(), json!([list, {"type": "string"}]));
                if let Some(d) = description {
                    m.insert("description".into(), d);
                }
                return;
            }
            m.values_mut().for_each(strings_as_blocks);
        }
        Value::Array(a) => a.iter_mut().for_each(strings_as_blocks),
        _ => {}
    }
}
