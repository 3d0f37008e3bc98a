//! The server's configuration: a TOML file, every setting also from the
//! environment (which wins).
//!
//! ```toml
//! listen = "127.0.0.1:8080"
//!
//! [store]
//! url = "sqlite://./parlance.db"      # or postgres://...
//!
//! [[auth.tokens]]                     # or: auth = "none" (no tokens, any address)
//! token = "secret-1"
//! subject = "team-a"
//! operator = false                    # operators see artifacts and every thread
//!
//! [providers.openai]
//! format = "openai-chat"              # openai-chat, openai-responses, anthropic, gemini
//! base_url = "https://api.openai.com/v1"
//! api_key_env = "OPENAI_API_KEY"
//!
//! [agents.support]
//! model = "openai:gpt-4o"             # provider name : model id
//! instructions = "You help with orders."
//! tools = ["lookup_order", "refund"]
//! max_model_calls = 10
//! tool_timeout_ms = 60000
//!
//! [tools.lookup_order]                # the server POSTs the validated arguments
//! kind = "http"
//! url = "http://127.0.0.1:9000/lookup"
//! description = "Look up an order."
//! input_schema = '{"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}'
//! needs_approval = false              # true: each call waits for a person's decision
//!
//! [tools.refund]                      # the client answers each call
//! kind = "external"
//! description = "Refund an order."
//! input_schema = '{"type": "object"}'
//! ```
//!
//! Environment: `PARLANCE_LISTEN`, `PARLANCE_STORE_URL`,
//! `PARLANCE_API_TOKENS` (`subject=token,subject=token`),
//! `PARLANCE_OPERATOR_TOKENS` (same form), `PARLANCE_MAX_BODY_BYTES`; and
//! any setting at all as `PARLANCE__` + its path with `__` between the parts
//! (`PARLANCE__AGENTS__SUPPORT__MODEL=anthropic:claude-sonnet-4-5`,
//! `PARLANCE__PROVIDERS__OPENAI__BASE_URL=...`); the value is read as a TOML
//! value when it is one (`10`, `true`, `["a", "b"]`), else as a string.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Address to listen on (default `127.0.0.1:8080`).
    #[serde(default)]
    pub listen: Option<String>,
    /// The thread store.
    #[serde(default)]
    pub store: StoreConfig,
    /// Who may call the API.
    #[serde(default)]
    pub auth: AuthConfig,
    /// The secret the server signs paused runs and approval digests with
    /// (default: one generated once and kept in the store, shared by every
    /// server on that store). `PARLANCE_SECRET` in the environment.
    #[serde(default)]
    pub secret: Option<String>,
    /// HTTP tools: requests at once per host, all tools together (default
    /// 64); more calls wait their turn.
    #[serde(default)]
    pub max_connections_per_host: Option<usize>,
    /// Largest request body accepted, in bytes (default 2 MiB).
    #[serde(default)]
    pub max_body_bytes: Option<usize>,
    /// Model providers by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Agents by name.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// Tools that need no Rust code, by name.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolConfig>,
}

/// Where threads are stored.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// `sqlite://PATH`, a file path, or `postgres://...` (default `./parlance.db`).
    pub url: Option<String>,
    /// How long a running run holds its thread without a heartbeat, in
    /// milliseconds (default 30,000; renewed every third of it).
    pub lease_ms: Option<u64>,
}

/// Who may call the API: `[[auth.tokens]]`, or `auth = "none"`.
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// The accepted tokens.
    pub tokens: Vec<TokenConfig>,
    /// `auth = "none"`: no token needed, even on a non-loopback address
    /// (logged as a warning). Without tokens and without this, the server
    /// listens only on loopback addresses.
    pub none: bool,
}

/// `[auth]` as written: a table, or the word `none`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AuthTable {
    #[serde(default)]
    tokens: Vec<TokenConfig>,
    #[serde(default)]
    mode: Option<String>,
}

fn auth_mode(mode: &str) -> Result<bool, String> {
    match mode {
        "none" => Ok(true),
        "tokens" => Ok(false),
        other => Err(format!(
            "auth: expected \"none\" or \"tokens\", got {other:?}"
        )),
    }
}

impl<'de> Deserialize<'de> for AuthConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = AuthConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"none\" or a table with tokens")
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<AuthConfig, E> {
                Ok(AuthConfig {
                    tokens: Vec::new(),
                    none: auth_mode(v).map_err(E::custom)?,
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<AuthConfig, A::Error> {
                let t = AuthTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                let none = match &t.mode {
                    Some(m) => auth_mode(m).map_err(A::Error::custom)?,
                    None => false,
                };
                Ok(AuthConfig {
                    tokens: t.tokens,
                    none,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// One bearer token.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// The token itself.
    pub token: String,
    /// Whose it is: threads are owned by subjects.
    pub subject: String,
    /// Operators see every thread and the artifacts.
    #[serde(default)]
    pub operator: bool,
}

/// A model provider.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The wire format: openai-chat, openai-responses, anthropic, gemini.
    pub format: String,
    /// Base URL (defaults to the provider's public API).
    pub base_url: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
}

/// An agent.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// `provider:model`, the provider named in `[providers]` or a wire
    /// format with its default settings (`anthropic:claude-sonnet-4-5`).
    pub model: String,
    /// System instructions.
    pub instructions: Option<String>,
    /// Tool names from `[tools]`.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Model calls per run.
    pub max_model_calls: Option<u32>,
    /// Invalid-argument calls tolerated per run.
    pub max_invalid_arguments: Option<u32>,
    /// Tool timeout.
    pub tool_timeout_ms: Option<u64>,
    /// `return_to_model`, `return_generic` or `fail`.
    #[schemars(with = "Option<String>")]
    pub on_tool_exception: Option<parlance_agent::OnToolException>,
    /// Output token limit.
    pub max_tokens: Option<u32>,
    /// Sampling temperature (0: greedy); unset, the provider's default.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Top-k sampling.
    pub top_k: Option<u32>,
    /// Sampling seed, where supported.
    pub seed: Option<u64>,
    /// Provider-specific options by provider, as in a request's
    /// `options.extra`: `[agents.NAME.extra.local] repeat_penalty = 1.0`.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// The most a tool's result may hold, in bytes of JSON (default 1 MiB).
    pub max_tool_output_bytes: Option<usize>,
}

/// A tool the server runs without Rust code.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolConfig {
    /// `external` (the client answers the call) or `http` (the server POSTs
    /// the validated arguments to `url`).
    pub kind: String,
    /// What the model reads.
    pub description: String,
    /// JSON Schema of the arguments, as JSON text.
    pub input_schema: String,
    /// `http`: where to POST.
    pub url: Option<String>,
    /// `http`: the call's timeout (default: the agent's).
    pub timeout_ms: Option<u64>,
    /// The most this tool's result may hold, in bytes (default: the
    /// agent's; an http tool reads no more than this, 1 MiB by default).
    pub max_output_bytes: Option<usize>,
    /// `http`: every call waits for a person's decision first (approve,
    /// edit, reject or answer; the approval inbox at `/ui`). `external`
    /// tools always wait.
    #[serde(default)]
    pub needs_approval: bool,
}

impl ToolConfig {
    /// The parsed input schema.
    pub fn schema(&self, name: &str) -> Result<Value, String> {
        serde_json::from_str(&self.input_schema)
            .map_err(|e| format!("tools.{name}.input_schema: not JSON: {e}"))
    }
}

impl Config {
    /// Reads a TOML file (none: defaults) and applies the environment.
    pub fn load(path: Option<&str>) -> Result<Config, String> {
        let (text, origin) = match path {
            Some(p) => (
                std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"))?,
                p.to_string(),
            ),
            None => (String::new(), "the environment".to_string()),
        };
        let vars: Vec<(String, String)> = std::env::vars().collect();
        let mut c =
            Config::from_toml_with_env(&text, &vars).map_err(|e| format!("{origin}: {e}"))?;
        c.apply_env(|k| std::env::var(k).ok())?;
        Ok(c)
    }

    /// Parses TOML, then sets every `PARLANCE__A__B=value` of `vars` at
    /// the path `a.b` before reading the settings.
    pub fn from_toml_with_env(text: &str, vars: &[(String, String)]) -> Result<Config, String> {
        let mut doc: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut overrides: Vec<&(String, String)> = vars
            .iter()
            .filter(|(k, _)| k.starts_with("PARLANCE__"))
            .collect();
        overrides.sort();
        for (key, value) in overrides {
            let path: Vec<String> = key["PARLANCE__".len()..]
                .split("__")
                .map(str::to_lowercase)
                .collect();
            let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
                .ok()
                .and_then(|mut t| t.remove("v"))
                .unwrap_or_else(|| toml::Value::String(value.clone()));
            let mut table = &mut doc;
            for (i, part) in path.iter().enumerate() {
                if i + 1 == path.len() {
                    table.insert(part.clone(), parsed.clone());
                    break;
                }
                let entry = table
                    .entry(part.clone())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                table = entry
                    .as_table_mut()
                    .ok_or_else(|| format!("{key}: {part} is not a table"))?;
            }
        }
        toml::Value::Table(doc)
            .try_into::<Config>()
            .map_err(|e| e.to_string())
    }

    /// Applies environment settings (through `get`, for tests).
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Result<(), String> {
        if let Some(v) = get("PARLANCE_LISTEN") {
            self.listen = Some(v);
        }
        if let Some(v) = get("PARLANCE_SECRET") {
            self.secret = Some(v);
        }
        if let Some(v) = get("PARLANCE_STORE_URL") {
            self.store.url = Some(v);
        }
        if let Some(v) = get("PARLANCE_MAX_BODY_BYTES") {
            self.max_body_bytes = Some(
                v.parse()
                    .map_err(|_| format!("PARLANCE_MAX_BODY_BYTES: not a number: {v:?}"))?,
            );
        }
        for (var, operator) in [
            ("PARLANCE_API_TOKENS", false),
            ("PARLANCE_OPERATOR_TOKENS", true),
        ] {
            if let Some(list) = get(var) {
                for pair in list.split(',').filter(|p| !p.trim().is_empty()) {
                    let (subject, token) = pair.split_once('=').ok_or_else(|| {
                        format!("{var}: expected subject=token pairs, got {pair:?}")
                    })?;
                    self.auth.tokens.push(TokenConfig {
                        token: token.trim().to_string(),
                        subject: subject.trim().to_string(),
                        operator,
                    });
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_setting_comes_from_the_environment() {
        let text = "listen = \"127.0.0.1:1\"\n[agents.support]\nmodel = \"openai-chat:gpt-4o\"\n";
        let vars = vec![
            (
                "PARLANCE__AGENTS__SUPPORT__MODEL".to_string(),
                "anthropic:claude-sonnet-4-5".to_string(),
            ),
            (
                "PARLANCE__AGENTS__SUPPORT__MAX_MODEL_CALLS".to_string(),
                "4".to_string(),
            ),
            (
                "PARLANCE__PROVIDERS__LOCAL__FORMAT".to_string(),
                "openai-chat".to_string(),
            ),
            (
                "PARLANCE__PROVIDERS__LOCAL__BASE_URL".to_string(),
                "http://127.0.0.1:9/v1".to_string(),
            ),
            ("PARLANCE__LISTEN".to_string(), "127.0.0.1:2".to_string()),
            ("OTHER".to_string(), "x".to_string()),
        ];
        let c = Config::from_toml_with_env(text, &vars).unwrap();
        assert_eq!(c.listen.as_deref(), Some("127.0.0.1:2"));
        assert_eq!(c.agents["support"].model, "anthropic:claude-sonnet-4-5");
        assert_eq!(c.agents["support"].max_model_calls, Some(4));
        assert_eq!(
            c.providers["local"].base_url.as_deref(),
            Some("http://127.0.0.1:9/v1")
        );
        let bad = vec![(
            "PARLANCE__AGENTS__SUPPORT__COLOUR".to_string(),
            "red".to_string(),
        )];
        let e = Config::from_toml_with_env(text, &bad).unwrap_err();
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn token_lists_from_the_environment() {
        let mut c = Config::default();
        c.apply_env(|k| (k == "PARLANCE_API_TOKENS").then(|| "alice=t1, bob=t2".to_string()))
            .unwrap();
        assert_eq!(c.auth.tokens.len(), 2);
        assert_eq!(
            (
                c.auth.tokens[1].subject.as_str(),
                c.auth.tokens[1].token.as_str()
            ),
            ("bob", "t2")
        );
        let e = Config::default()
            .apply_env(|k| (k == "PARLANCE_API_TOKENS").then(|| "nope".to_string()))
            .unwrap_err();
        assert_eq!(
            e,
            "PARLANCE_API_TOKENS: expected subject=token pairs, got \"nope\""
        );
    }
}
