use schemars::JsonSchema;
use serde::Serialize;

/// Token counts of one model call (or the sum over a run).
///
/// `input_tokens` is the whole input, cached part included, whatever the
/// provider's own convention; `cached_tokens` is the part read from cache.
/// `output_tokens` includes reasoning tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// All input tokens, including those read from or written to a cache.
    pub input_tokens: u64,
    /// All output tokens, including reasoning/thinking tokens.
    pub output_tokens: u64,
    /// The part of `input_tokens` read from the provider's prompt cache.
    #[serde(default)]
    pub cached_tokens: u64,
    /// The part of `input_tokens` written to the provider's prompt cache, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// The part of `output_tokens` spent on reasoning, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

impl Usage {
    /// Adds another usage to this one (for run totals). Sums saturate at
    /// `u64::MAX`: counts come from providers and are not trusted to be
    /// small.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
        self.cache_write_tokens = add_opt(self.cache_write_tokens, other.cache_write_tokens);
        self.reasoning_tokens = add_opt(self.reasoning_tokens, other.reasoning_tokens);
    }
}

fn add_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    }
}

/// Why the model stopped, normalised across providers. The provider's own
/// value is kept beside it in the message (`finish_reason_raw`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model finished its answer (or hit a stop sequence).
    Stop,
    /// The model asked for one or more tool calls.
    ToolCalls,
    /// The output token limit (or the context window) was reached.
    Length,
    /// The provider withheld or cut the output (safety, refusal, recitation).
    ContentFilter,
    /// The provider reported an error in place of a finish.
    Error,
    /// Anything else (the raw value says what).
    Other,
}

impl FinishReason {
    /// All values, in documentation order.
    pub const ALL: [FinishReason; 6] = [
        FinishReason::Stop,
        FinishReason::ToolCalls,
        FinishReason::Length,
        FinishReason::ContentFilter,
        FinishReason::Error,
        FinishReason::Other,
    ];

    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Error => "error",
            FinishReason::Other => "other",
        }
    }

    /// Parses the canonical spelling.
    pub fn parse(s: &str) -> Option<FinishReason> {
        FinishReason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}
