//! The providers by name: each one's wire format, public base URL and the
//! environment variables of its key and base URL. The library, the server
//! and the CLI all read models from a string through this one table
//! (`"anthropic:claude-sonnet-4-5"`).

use std::fmt;

use crate::error::BuildError;
use crate::format::WireFormat;
use crate::{anthropic, gemini, openai_chat, openai_responses};

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
    /// The variables holding the key, the first set one wins.
    pub api_key_env: &'static [&'static str],
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
    };

    /// OpenAI Responses (`openai-responses:gpt-5`).
    pub const OPENAI_RESPONSES: Provider = Provider {
        name: "openai-responses",
        aliases: &[],
        format: &openai_responses::FORMAT,
        base_url: "https://api.openai.com/v1",
        base_url_env: "OPENAI_BASE_URL",
        api_key_env: &["OPENAI_API_KEY"],
    };

    /// Anthropic Messages (`anthropic:claude-sonnet-4-5`).
    pub const ANTHROPIC: Provider = Provider {
        name: "anthropic",
        aliases: &[],
        format: &anthropic::FORMAT,
        base_url: "https://api.anthropic.com",
        base_url_env: "ANTHROPIC_BASE_URL",
        api_key_env: &["ANTHROPIC_API_KEY"],
    };

    /// Google Gemini (`gemini:gemini-2.5-flash`).
    pub const GEMINI: Provider = Provider {
        name: "gemini",
        aliases: &[],
        format: &gemini::FORMAT,
        base_url: "https://generativelanguage.googleapis.com/v1beta",
        base_url_env: "GEMINI_BASE_URL",
        api_key_env: &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
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
pub const PROVIDERS: [Provider; 4] = [
    Provider::OPENAI,
    Provider::OPENAI_RESPONSES,
    Provider::ANTHROPIC,
    Provider::GEMINI,
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
