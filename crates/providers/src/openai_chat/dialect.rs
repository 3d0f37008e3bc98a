//! What an OpenAI-compatible host does differently from OpenAI's own Chat
//! Completions: the provider name its answers carry, whether and how it
//! takes reasoning back, and how it takes reasoning settings. Each preset
//! of the registry (DeepSeek, OpenRouter, Groq...) speaks Chat Completions
//! through one of these; the wire is otherwise OpenAI's. See
//! docs/providers.md for each host's documented behaviour and sources.
//!
//! Reading is the same for all: reasoning text comes from
//! `reasoning_content` or `reasoning` (whichever the host sends), in
//! responses and stream deltas, or, when there is neither, from
//! `<think>…</think>` at the start of the text (see `think_tags`). The thinking block is marked with the
//! host's provider name, so that reasoning from one host is never sent to
//! another (the rule for opaque data in docs/providers.md).

/// How a host takes earlier reasoning back in an assistant message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// Not at all: thinking is dropped with a warning (OpenAI, and the
    /// hosts that document no way back).
    Never,
    /// As text in `field` of the assistant message: `reasoning_content`
    /// (DeepSeek: required on turns with tool calls in thinking mode,
    /// ignored on the others) or `reasoning` (Ollama). With
    /// `required_with_calls`, a message with tool calls and no reasoning of
    /// this host's gets `""`.
    Text {
        /// The message field.
        field: &'static str,
        /// Whether a tool-call turn must carry the field.
        required_with_calls: bool,
    },
    /// As the `reasoning_details` items it returned, unchanged
    /// (OpenRouter: signatures and encrypted reasoning of the model behind
    /// it).
    ReasoningDetails,
    /// As `<think>…</think>` before the text of the message's content (the
    /// hosts of open-weight reasoning models, whose chat templates read the
    /// tags; what their own clients send).
    ThinkTags,
}

/// How a host takes the request's reasoning settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningParam {
    /// `reasoning_effort` (OpenAI's); a token budget is dropped.
    Effort,
    /// OpenRouter's `reasoning` object: `{"effort"}` or `{"max_tokens"}`.
    Object,
}

/// One host's differences.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// The provider name on its messages and their opaque data.
    pub provider: &'static str,
    /// How it takes reasoning back.
    pub replay: Replay,
    /// How it takes reasoning settings.
    pub reasoning: ReasoningParam,
    /// Whether it can return reasoning text (OpenAI's Chat never does).
    pub returns_reasoning: bool,
    /// Whether its `completion_tokens` leaves out the reasoning tokens
    /// (xAI's), which canonical `output_tokens` includes.
    pub completion_excludes_reasoning: bool,
}

impl Dialect {
    const fn host(provider: &'static str) -> Dialect {
        Dialect {
            provider,
            replay: Replay::Never,
            reasoning: ReasoningParam::Effort,
            returns_reasoning: true,
            completion_excludes_reasoning: false,
        }
    }
}

/// OpenAI's own API.
pub const OPENAI: Dialect = Dialect {
    returns_reasoning: false,
    ..Dialect::host(super::PROVIDER)
};
/// DeepSeek (`reasoning_content`, sent back).
pub const DEEPSEEK: Dialect = Dialect {
    replay: Replay::Text {
        field: "reasoning_content",
        required_with_calls: true,
    },
    ..Dialect::host("deepseek")
};
/// OpenRouter (`reasoning` text and `reasoning_details`, sent back).
pub const OPENROUTER: Dialect = Dialect {
    replay: Replay::ReasoningDetails,
    reasoning: ReasoningParam::Object,
    ..Dialect::host("openrouter")
};
/// Groq (`reasoning`, or `<think>` in the text with `reasoning_format:
/// raw`; sent back as `<think>` in the text).
pub const GROQ: Dialect = Dialect {
    replay: Replay::ThinkTags,
    ..Dialect::host("groq")
};
/// Together AI (`reasoning`, or `<think>` in the text of DeepSeek-R1 and
/// Qwen models; sent back as `<think>` in the text).
pub const TOGETHER: Dialect = Dialect {
    replay: Replay::ThinkTags,
    ..Dialect::host("together")
};
/// Fireworks AI (`reasoning_content`).
pub const FIREWORKS: Dialect = Dialect::host("fireworks");
/// xAI (`reasoning_content` from the models that return it; reasoning
/// tokens counted beside `completion_tokens`, not in it).
pub const XAI: Dialect = Dialect {
    completion_excludes_reasoning: true,
    ..Dialect::host("xai")
};
/// Cerebras (`reasoning`, sent back in the same field).
pub const CEREBRAS: Dialect = Dialect {
    replay: Replay::Text {
        field: "reasoning",
        required_with_calls: false,
    },
    ..Dialect::host("cerebras")
};
/// vLLM (`reasoning_content`, `reasoning` in newer releases).
pub const VLLM: Dialect = Dialect::host("vllm");
/// LM Studio (`reasoning_content`).
pub const LMSTUDIO: Dialect = Dialect::host("lmstudio");
/// Ollama's OpenAI-compatible endpoint (`reasoning`, sent back).
pub const OLLAMA: Dialect = Dialect {
    replay: Replay::Text {
        field: "reasoning",
        required_with_calls: false,
    },
    ..Dialect::host("ollama")
};
