//! The providers by name: each one's wire format, public base URL and the
//! environment variables of its key and base URL. The library, the server
//! and the CLI all read models from a string through this one table
//! (`"anthropic:claude-sonnet-4-5"`).

use std::fmt;

use crate::error::BuildError;
use crate::format::WireFormat;
use crate::{anthropic, bedrock, gemini, mistral, ollama, openai_chat, openai_responses};

/// A provider: an API (its wire format) at a base URL, with a key.
#[derive(Debug, Clone, Copy)]
pub struct Provider {
    /// The name in model strings (`anthropic` in `anthropic:claude-sonnet-4-5`).
    pub name: &'static str,
    /// Other names accepted for it (the wire format's own name).
    pub aliases: &'static [&'static str],
    /// The API it speaks.
    pub format: &'static WireFormat,
    /// The public API's base URL.
    pub base_url: &'static str,
    /// The variable that overrides the base URL.
    pub base_url_env: &'static str,
    /// The variables holding the key, the first set one wins. None: the
    /// server takes no key unless one is given (LM Studio, vLLM).
    pub api_key_env: &'static [&'static str],
    /// How its URLs are made and its key is sent: the format's own way, or
    /// Azure's.
    pub access: Access,
}

/// How a provider's URLs are made and its key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The base URL plus the format's path; the key the way the format
    /// sends it (`Authorization: Bearer`, `x-api-key`...).
    Standard,
    /// Azure OpenAI: the base URL is the resource's endpoint; requests go
    /// to its v1 API, or to the deployment URLs with an `api-version`; the
    /// key is sent in `api-key`, an Entra ID token as a bearer token (see
    /// [`crate::azure`]).
    Azure,
}

impl Provider {
    /// OpenAI Chat Completions (`openai:gpt-4o-mini`), and any server that
    /// speaks it (set `OPENAI_BASE_URL` or a base URL).
    pub const OPENAI: Provider = Provider {
        name: "openai",
        aliases: &["openai-chat"],
        format: &openai_chat::FORMAT,
        base_url: "https://api.openai.com/v1",
        base_url_env: "OPENAI_BASE_URL",
        api_key_env: &["OPENAI_API_KEY"],
        access: Access::Standard,
    };

    /// OpenAI Responses (`openai-responses:gpt-5`).
    pub const OPENAI_RESPONSES: Provider = Provider {
        name: "openai-responses",
        aliases: &[],
        format: &openai_responses::FORMAT,
        base_url: "https://api.openai.com/v1",
        base_url_env: "OPENAI_BASE_URL",
        api_key_env: &["OPENAI_API_KEY"],
        access: Access::Standard,
    };

    /// Anthropic Messages (`anthropic:claude-sonnet-4-5`).
    pub const ANTHROPIC: Provider = Provider {
        name: "anthropic",
        aliases: &[],
        format: &anthropic::FORMAT,
        base_url: "https://api.anthropic.com",
        base_url_env: "ANTHROPIC_BASE_URL",
        api_key_env: &["ANTHROPIC_API_KEY"],
        access: Access::Standard,
    };

    /// Google Gemini (`gemini:gemini-2.5-flash`).
    pub const GEMINI: Provider = Provider {
        name: "gemini",
        aliases: &[],
        format: &gemini::FORMAT,
        base_url: "https://generativelanguage.googleapis.com/v1beta",
        base_url_env: "GEMINI_BASE_URL",
        api_key_env: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        access: Access::Standard,
    };

    /// Azure OpenAI, Chat Completions (`azure:DEPLOYMENT`): the resource
    /// endpoint from `AZURE_OPENAI_ENDPOINT`, the key from
    /// `AZURE_OPENAI_API_KEY` or an Entra ID token from
    /// `AZURE_OPENAI_AD_TOKEN`.
    pub const AZURE: Provider = Provider {
        name: "azure",
        aliases: &["azure-openai"],
        format: &openai_chat::FORMAT,
        base_url: "",
        base_url_env: crate::azure::ENDPOINT_ENV,
        api_key_env: &[crate::azure::KEY_ENV],
        access: Access::Azure,
    };

    /// Azure OpenAI, Responses (`azure-responses:DEPLOYMENT`).
    pub const AZURE_RESPONSES: Provider = Provider {
        name: "azure-responses",
        aliases: &[],
        format: &openai_responses::FORMAT,
        base_url: "",
        base_url_env: crate::azure::ENDPOINT_ENV,
        api_key_env: &[crate::azure::KEY_ENV],
        access: Access::Azure,
    };

    /// DeepSeek (`deepseek:deepseek-reasoner`): its reasoning (`reasoning_content`)
    /// goes back to it, as its thinking mode requires after tool calls.
    pub const DEEPSEEK: Provider = Provider {
        name: "deepseek",
        aliases: &[],
        format: &openai_chat::DEEPSEEK,
        base_url: "https://api.deepseek.com",
        base_url_env: "DEEPSEEK_BASE_URL",
        api_key_env: &["DEEPSEEK_API_KEY"],
        access: Access::Standard,
    };

    /// OpenRouter (`openrouter:anthropic/claude-sonnet-4.5`): `reasoning_details`
    /// (signed or encrypted reasoning of the model behind it) go back
    /// unchanged; reasoning settings as its `reasoning` object.
    pub const OPENROUTER: Provider = Provider {
        name: "openrouter",
        aliases: &[],
        format: &openai_chat::OPENROUTER,
        base_url: "https://openrouter.ai/api/v1",
        base_url_env: "OPENROUTER_BASE_URL",
        api_key_env: &["OPENROUTER_API_KEY"],
        access: Access::Standard,
    };

    /// Groq (`groq:openai/gpt-oss-120b`).
    pub const GROQ: Provider = Provider {
        name: "groq",
        aliases: &[],
        format: &openai_chat::GROQ,
        base_url: "https://api.groq.com/openai/v1",
        base_url_env: "GROQ_BASE_URL",
        api_key_env: &["GROQ_API_KEY"],
        access: Access::Standard,
    };

    /// Together AI (`together:deepseek-ai/DeepSeek-R1`).
    pub const TOGETHER: Provider = Provider {
        name: "together",
        aliases: &["together-ai"],
        format: &openai_chat::TOGETHER,
        base_url: "https://api.together.xyz/v1",
        base_url_env: "TOGETHER_BASE_URL",
        api_key_env: &["TOGETHER_API_KEY"],
        access: Access::Standard,
    };

    /// Fireworks AI (`fireworks:accounts/fireworks/models/deepseek-r1`).
    pub const FIREWORKS: Provider = Provider {
        name: "fireworks",
        aliases: &[],
        format: &openai_chat::FIREWORKS,
        base_url: "https://api.fireworks.ai/inference/v1",
        base_url_env: "FIREWORKS_BASE_URL",
        api_key_env: &["FIREWORKS_API_KEY"],
        access: Access::Standard,
    };

    /// xAI (`xai:grok-4`).
    pub const XAI: Provider = Provider {
        name: "xai",
        aliases: &[],
        format: &openai_chat::XAI,
        base_url: "https://api.x.ai/v1",
        base_url_env: "XAI_BASE_URL",
        api_key_env: &["XAI_API_KEY"],
        access: Access::Standard,
    };

    /// Cerebras (`cerebras:gpt-oss-120b`).
    pub const CEREBRAS: Provider = Provider {
        name: "cerebras",
        aliases: &[],
        format: &openai_chat::CEREBRAS,
        base_url: "https://api.cerebras.ai/v1",
        base_url_env: "CEREBRAS_BASE_URL",
        api_key_env: &["CEREBRAS_API_KEY"],
        access: Access::Standard,
    };

    /// A vLLM server (`vllm:Qwen/Qwen3-8B`): no public base URL (set
    /// `VLLM_BASE_URL`, e.g. `http://localhost:8000/v1`); a key only if the
    /// server was started with one.
    pub const VLLM: Provider = Provider {
        name: "vllm",
        aliases: &[],
        format: &openai_chat::VLLM,
        base_url: "",
        base_url_env: "VLLM_BASE_URL",
        api_key_env: &["VLLM_API_KEY"],
        access: Access::Standard,
    };

    /// LM Studio's local server (`lmstudio:qwen/qwen3-8b`), no key.
    pub const LMSTUDIO: Provider = Provider {
        name: "lmstudio",
        aliases: &["lm-studio"],
        format: &openai_chat::LMSTUDIO,
        base_url: "http://localhost:1234/v1",
        base_url_env: "LMSTUDIO_BASE_URL",
        api_key_env: &[],
        access: Access::Standard,
    };

    /// Ollama's OpenAI-compatible endpoint (`ollama-openai:qwen3`), local by
    /// default (no key); `OLLAMA_API_KEY` for ollama.com.
    pub const OLLAMA_OPENAI: Provider = Provider {
        name: "ollama-openai",
        aliases: &[],
        format: &openai_chat::OLLAMA,
        base_url: "http://localhost:11434/v1",
        base_url_env: "OLLAMA_OPENAI_BASE_URL",
        api_key_env: &["OLLAMA_API_KEY"],
        access: Access::Standard,
    };

    /// Mistral (`mistral:mistral-large-latest`, `mistral:magistral-medium-latest`).
    pub const MISTRAL: Provider = Provider {
        name: "mistral",
        aliases: &[],
        format: &mistral::FORMAT,
        base_url: "https://api.mistral.ai/v1",
        base_url_env: "MISTRAL_BASE_URL",
        api_key_env: &["MISTRAL_API_KEY"],
        access: Access::Standard,
    };

    /// Ollama's native API (`ollama:llama3.2`): `http://localhost:11434`
    /// or `OLLAMA_HOST` (`host[:port]` or a URL); no key, or a bearer
    /// `OLLAMA_API_KEY` for Ollama's cloud (`OLLAMA_HOST=https://ollama.com`).
    pub const OLLAMA: Provider = Provider {
        name: "ollama",
        aliases: &[],
        format: &ollama::FORMAT,
        base_url: "http://localhost:11434",
        base_url_env: "OLLAMA_HOST",
        api_key_env: &["OLLAMA_API_KEY"],
        access: Access::Standard,
    };

    /// Amazon Bedrock Converse
    /// (`bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0`): a Bedrock API
    /// key (`AWS_BEARER_TOKEN_BEDROCK`) or SigV4 with AWS credentials; the
    /// region's endpoint (`{region}` from `AWS_REGION`...).
    pub const BEDROCK: Provider = Provider {
        name: "bedrock",
        aliases: &["bedrock-converse"],
        format: &bedrock::FORMAT,
        base_url: "https://bedrock-runtime.{region}.amazonaws.com",
        base_url_env: "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
        api_key_env: &["AWS_BEARER_TOKEN_BEDROCK"],
        access: Access::Standard,
    };

    /// The provider called `name` (or one of its aliases).
    pub fn named(name: &str) -> Option<Provider> {
        PROVIDERS
            .iter()
            .find(|p| p.name == name || p.aliases.contains(&name))
            .copied()
    }
}

/// Every provider, in documentation order.
pub const PROVIDERS: &[Provider] = &[
    Provider::OPENAI,
    Provider::OPENAI_RESPONSES,
    Provider::ANTHROPIC,
    Provider::GEMINI,
    Provider::MISTRAL,
    Provider::OLLAMA,
    Provider::AZURE,
    Provider::AZURE_RESPONSES,
    Provider::DEEPSEEK,
    Provider::OPENROUTER,
    Provider::GROQ,
    Provider::TOGETHER,
    Provider::FIREWORKS,
    Provider::XAI,
    Provider::CEREBRAS,
    Provider::VLLM,
    Provider::LMSTUDIO,
    Provider::OLLAMA_OPENAI,
    Provider::BEDROCK,
];

/// The name of the embedded local model in model strings. It is built by
/// the layer that has `parlance-local` (the `local` feature of
/// `parlance-ai`, the server, the CLI), not here.
pub const LOCAL: &str = "local";

/// A model string, read: `provider:model`, `local` or `local:PATH`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSpec<'a> {
    /// A model behind an HTTP API: the provider's name and the model id.
    Remote {
        /// The provider's name, as written.
        provider: &'a str,
        /// The model id (it may hold `:` itself).
        model: &'a str,
    },
    /// The embedded model: the default one, or a GGUF file.
    Local {
        /// `PATH` in `local:PATH`.
        path: Option<&'a str>,
    },
}

impl<'a> ModelSpec<'a> {
    /// Reads `spec`; it names no provider yet (see `ModelBuilder::from_spec`).
    pub fn parse(spec: &'a str) -> Result<ModelSpec<'a>, BuildError> {
        if spec == LOCAL {
            return Ok(ModelSpec::Local { path: None });
        }
        let bad = |why: &str| BuildError::BadSpec {
            spec: spec.to_string(),
            why: why.to_string(),
        };
        let (provider, model) = spec
            .split_once(':')
            .ok_or_else(|| bad("expected provider:model, e.g. anthropic:claude-sonnet-4-5"))?;
        if provider == LOCAL {
            return match model {
                "" => Err(bad("no file after local:")),
                path => Ok(ModelSpec::Local { path: Some(path) }),
            };
        }
        if provider.is_empty() {
            return Err(bad("no provider before the colon"));
        }
        if model.is_empty() {
            return Err(bad("no model after the colon"));
        }
        Ok(ModelSpec::Remote { provider, model })
    }
}

impl fmt::Display for ModelSpec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Remote { provider, model } => write!(f, "{provider}:{model}"),
            ModelSpec::Local { path: None } => f.write_str(LOCAL),
            ModelSpec::Local { path: Some(p) } => write!(f, "{LOCAL}:{p}"),
        }
    }
}

/// The names a model string may start with, for error messages.
pub fn provider_names() -> String {
    let mut names: Vec<&str> = PROVIDERS.iter().map(|p| p.name).collect();
    names.push(LOCAL);
    names.join(", ")
}
