use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// What a model is told about a tool: its name, what it does and the JSON
/// Schema its arguments must satisfy.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does, written for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema (2020-12) of the arguments object.
    pub input_schema: Value,
    /// Ask the provider to hold the model to the schema exactly (OpenAI
    /// `strict`), when it can.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// A prompt-cache breakpoint after this tool's definition (Anthropic
    /// `cache_control` on a tool): the tools up to here may be cached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_point: Option<crate::CachePoint>,
}

impl ToolSpec {
    /// A tool spec with a description.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: Some(description.into()),
            input_schema,
            strict: None,
            cache_point: None,
        }
    }
}
