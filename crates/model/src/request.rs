use parlance_format::{Message, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One model call: the context, the tools offered, the options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    /// The conversation, system messages included, in order.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Sampling, limits, tool choice, reasoning, output schema.
    pub options: ModelOptions,
}

/// Which tool calls the model may make.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    #[serde(default)]
    pub include_thoughts: bool,
}

/// A JSON Schema the final answer must satisfy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// A name for the schema (some providers require one).
    pub name: String,
    /// The JSON Schema.
    pub schema: Value,
}

/// Options of a model call. Unset options are left to the provider.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// Provider-specific fields, by provider: `{"openai": {"store": true}}`.
    /// Each adapter merges only its own provider's object into the request
    /// body, so options written for one provider never reach another.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}
