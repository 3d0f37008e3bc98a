//! The published JSON Schema of the canonical request document
//! ([`crate::RequestDocument`]): `schema/request.schema.json` (what
//! Parlance writes) and `schema/request.input.schema.json` (what it reads,
//! older shapes included). With the format's own schemas, [`all`] is every
//! file under `schema/`; a test fails when they drift.

use parlance_format::{Message, ToolSpec, schema as format_schema};
use schemars::JsonSchema;
use serde_json::Value;

use crate::ModelOptions;

/// A model call written down: the conversation, the tools, the options,
/// the model and whether to stream. A bare array is just the messages.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code, clippy::large_enum_variant)] // a shape for the schema only
enum RequestDocumentSchema {
    /// The messages alone.
    Messages(Vec<Message>),
    /// The whole request.
    Object(RequestObject),
}

/// The object form of a request document.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct RequestObject {
    /// The model the request names.
    model: Option<String>,
    /// Whether the request asks for a stream (omitted when false).
    #[serde(default)]
    stream: bool,
    /// The conversation, system messages included, in order.
    messages: Vec<Message>,
    /// The tools the model may call.
    #[serde(default)]
    tools: Vec<ToolSpec>,
    /// Sampling, limits, tool choice, reasoning, output schema, and fields
    /// for one provider or API.
    #[serde(default)]
    options: ModelOptions,
}

/// The request document's schemas: canonical, then input.
pub fn request() -> Vec<(&'static str, Value)> {
    let file = "request.schema.json";
    let canonical = format_schema::generate::<RequestDocumentSchema>(file, "Parlance request");
    let input_file = format_schema::input_name(file).expect("request has an input schema");
    let input = format_schema::input_schema(&canonical, input_file);
    vec![(file, canonical), (input_file, input)]
}

/// Every published schema (the format's and the request document's), as
/// `(file name, schema)`: what `parlance schema` prints and `schema/` holds.
pub fn all() -> Vec<(&'static str, Value)> {
    let mut out = format_schema::all();
    out.extend(request());
    out
}

/// One published schema by file name (`request.schema.json`).
pub fn by_name(name: &str) -> Option<Value> {
    all().into_iter().find(|(n, _)| *n == name).map(|(_, v)| v)
}
