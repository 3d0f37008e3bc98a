use std::sync::Arc;

use parlance_format::{Message, ToolSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One model call: the context, the tools offered, the options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    /// The conversation, system messages included, in order.
    pub messages: Vec<Message>,
    /// The tools the model may call. Shared: every run of an agent
    /// offers the same specs, so each run's request points at them
    /// instead of holding a copy (`vec![...].into()` makes one).
    pub tools: Arc<[ToolSpec]>,
    /// Sampling, limits, tool choice, reasoning, output schema.
    pub options: ModelOptions,
}

/// Which tool calls the model may make.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// A call to this tool.
    Tool(String),
}

/// How hard a reasoning model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// No reasoning where the model allows it.
    None,
    /// The least.
    Minimal,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Higher (OpenAI and Anthropic `xhigh`).
    #[serde(rename = "xhigh")]
    XHigh,
    /// The most (`max`).
    Max,
}

impl Effort {
    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::None => "none",
            Effort::Minimal => "minimal",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::XHigh => "xhigh",
            Effort::Max => "max",
        }
    }

    /// Parses the canonical spelling.
    pub fn parse(s: &str) -> Option<Effort> {
        [
            Effort::None,
            Effort::Minimal,
            Effort::Low,
            Effort::Medium,
            Effort::High,
            Effort::XHigh,
            Effort::Max,
        ]
        .into_iter()
        .find(|e| e.as_str() == s)
    }
}

/// Reasoning ("thinking") settings; each provider maps what it supports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reasoning {
    /// Effort level (OpenAI `reasoning_effort`, Gemini `thinkingLevel`, Anthropic `effort`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    /// Token budget (Anthropic `budget_tokens`, Gemini `thinkingBudget`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u32>,
    /// Turn reasoning on and ask for readable reasoning or summaries where
    /// the provider can give them (Anthropic adaptive thinking, Gemini
    /// `includeThoughts`, OpenAI reasoning summaries).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_thoughts: bool,
    /// How detailed a reasoning summary to ask for (OpenAI Responses
    /// `reasoning.summary`: `auto`, `concise`, `detailed`); implies
    /// `include_thoughts` where the provider has no such setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["auto", "concise", "detailed", null]))]
    pub summary: Option<String>,
}

impl Reasoning {
    /// The values `summary` may take.
    pub const SUMMARIES: [&'static str; 3] = ["auto", "concise", "detailed"];

    /// Whether readable reasoning is asked for (`include_thoughts`, or a summary).
    pub fn wants_thoughts(&self) -> bool {
        self.include_thoughts || self.summary.is_some()
    }
}

/// A JSON Schema the final answer must satisfy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputSchema {
    /// A name for the schema (some providers require one).
    pub name: String,
    /// The JSON Schema.
    pub schema: Value,
    /// What the output is for, told to the model (OpenAI `description`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Hold the model to the schema exactly (OpenAI `strict`), when the
    /// provider can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

impl OutputSchema {
    /// A schema with a name, nothing else.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        OutputSchema {
            name: name.into(),
            schema,
            description: None,
            strict: None,
        }
    }
}

/// Options of a model call. Unset options are left to the provider.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelOptions {
    /// Output token limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Top-k sampling (Anthropic, Gemini).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// Sampling seed, where supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Which tool calls are allowed (unset: the provider's default, auto).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Whether several tool calls may come in one turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Reasoning settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<Reasoning>,
    /// Structured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<OutputSchema>,
    /// Fields for one provider or one API, merged into its request body:
    /// by provider (`{"openai": {"store": true}}`: every API of that
    /// provider) or by API, the wire format's name
    /// (`{"openai-responses": {"include": [...]}}`: that API only; applied
    /// after the provider's). A request read from a provider's body files
    /// the fields Parlance has no name for under its API, so they never
    /// reach another API, not even the same vendor's.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, Map<String, Value>>")]
    pub extra: Map<String, Value>,
}
