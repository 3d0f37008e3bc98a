//! Parlance's application configuration: a TOML file, every setting also
//! from the environment (which wins). `parlance serve` reads it, and so do
//! `parlance run`, `parlance chat` and `parlance threads` (the same agents,
//! providers, tools and store), which is why it is a crate of its own
//! rather than a module of the server.
//!
//! ```toml
//! listen = "127.0.0.1:8080"
//! secret = "..."                      # signs sessions and approvals (default: kept in the store)
//! previous_secrets = ["..."]          # after a rotation: still accepted
//!
//! [store]
//! url = "sqlite://./parlance.db"      # (the default) or postgres://...
//!
//! [[auth.tokens]]                     # or: auth = "none" (no tokens, any address)
//! token = "secret-1"
//! subject = "team-a"
//! operator = false                    # operators see artifacts and every thread
//!
//! [providers.openai]
//! format = "openai-chat"              # openai-chat, openai-responses, anthropic, gemini, mistral, ollama
//! base_url = "https://api.openai.com/v1"
//! api_key_env = "OPENAI_API_KEY"
//!
//! [agents.support]
//! model = "openai:gpt-4o"             # provider name : model id
//! # model = ["anthropic:claude-sonnet-4-5", "openai:gpt-4o"]   # a fallback, tried in order
//! # fallback_on = ["rate_limited", "overloaded", "server", "timeout"]
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
//!
//! [sessions]                          # the inbox's sessions (these are the defaults)
//! login_attempts_per_address = 30     # per minute; more get 429 with Retry-After
//! login_attempts_per_subject = 20     # logins with one subject's tokens per minute
//! max_live_streams = 8                # live pages (SSE) open at once per session
//!
//! [[mcp]]                             # an MCP server; agents: mcp = ["files"]
//! name = "files"
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
//! ```
//!
//! Environment: `PARLANCE_LISTEN`, `PARLANCE_STORE_URL`,
//! `PARLANCE_API_TOKENS` (`subject=token,subject=token`),
//! `PARLANCE_OPERATOR_TOKENS` (same form), `PARLANCE_MAX_BODY_BYTES`; and
//! any setting at all as `PARLANCE__` + its path with `__` between the parts
//! (`PARLANCE__AGENTS__SUPPORT__MODEL=anthropic:claude-sonnet-4-5`,
//! `PARLANCE__PROVIDERS__OPENAI__BASE_URL=...`); the value is read as a TOML
//! value when it is one (`10`, `true`, `["a", "b"]`), else as a string.

mod error;
mod load;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

pub use error::ConfigError;

/// Where threads are stored when nothing says otherwise: `parlance.db` in
/// the working directory (SQLite).
pub const DEFAULT_STORE_URL: &str = "sqlite://./parlance.db";

/// The store URL a command uses: its own flag (`--store`), else
/// `PARLANCE_STORE_URL`, else [`DEFAULT_STORE_URL`].
pub fn store_url(flag: Option<String>) -> String {
    flag.or_else(|| std::env::var("PARLANCE_STORE_URL").ok())
        .unwrap_or_else(|| DEFAULT_STORE_URL.to_string())
}

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Address to listen on (default `127.0.0.1:8080`).
    #[serde(default)]
    pub listen: Option<String>,
    /// Host names the server answers to besides IP addresses and
    /// `localhost` (its public name behind a proxy, say); `"*"` for any.
    /// Other names get `421` (a page re-pointed at this server by DNS
    /// rebinding sends its own).
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Origins (`https://parlance.example.com`) whose pages may send
    /// requests that change something, besides the server's own (`http(s)://`
    /// and its `Host`); others get `403`.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
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
    /// Earlier secrets, still accepted after a rotation: sessions they
    /// signed stay valid until they expire, and runs that paused before
    /// the rotation stay decidable (new signatures use `secret`). Remove
    /// one once no run paused before the rotation waits any more.
    #[serde(default)]
    pub previous_secrets: Vec<String>,
    /// The inbox's sessions: login attempts and live streams.
    #[serde(default)]
    pub sessions: SessionsConfig,
    /// HTTP tools: requests at once per host, all tools together (default
    /// 64); more calls wait their turn.
    #[serde(default)]
    pub max_connections_per_host: Option<usize>,
    /// Largest request body accepted, in bytes (default 2 MiB).
    #[serde(default)]
    pub max_body_bytes: Option<usize>,
    /// Client connections open at once (default: half the open-file
    /// limit); more wait in the kernel's queue until one closes.
    #[serde(default)]
    pub max_connections: Option<usize>,
    /// Requests that run an agent (a run, a decision, a retry) in progress
    /// at once (default: a quarter of the open-file limit); more wait
    /// for a turn, then get `503` with `Retry-After`.
    #[serde(default)]
    pub max_runs: Option<usize>,
    /// How long a request beyond `max_runs` waits for a turn, in
    /// milliseconds (default 10,000; at most `max_runs` wait at once).
    #[serde(default)]
    pub run_queue_ms: Option<u64>,
    /// Model providers by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    /// Limits on what every run of this server may spend, per run, per
    /// thread and per thread owner (the subject of the token that created
    /// it) per UTC day and month: they apply to every agent, configured
    /// or given in a request, together with the agent's own `budget`
    /// (the lower of two limits holds).
    pub budget: Option<BudgetConfig>,
    /// Agents by name.
    #[serde(default)]
    pub agents: BTreeMap<String, AgentConfig>,
    /// Tools that need no Rust code, by name.
    #[serde(default)]
    pub tools: BTreeMap<String, ToolConfig>,
    /// MCP servers (`[[mcp]]`), whose tools agents name with `mcp = [...]`.
    #[serde(default)]
    pub mcp: Vec<parlance_mcp::McpConfig>,
    /// Who carries the runs: the server itself (`builtin`, the default),
    /// or Temporal (`temporal`, see `[temporal]`); `parlance serve
    /// --executor` overrides it.
    #[serde(default)]
    pub executor: Executor,
    /// Where Temporal is, for `executor = "temporal"`.
    #[serde(default)]
    pub temporal: TemporalConfig,
}

/// Who carries the runs of `parlance serve`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Executor {
    /// The server, on the store alone: its own runs, and those of dead
    /// servers of the store (`resume = "auto"`).
    #[default]
    Builtin,
    /// Temporal: a thread is a workflow, a run's segments activities of
    /// the workers of `[temporal] task_queue` (docs/temporal.md).
    Temporal,
}

impl std::str::FromStr for Executor {
    type Err = String;
    fn from_str(s: &str) -> Result<Executor, String> {
        match s {
            "builtin" => Ok(Executor::Builtin),
            "temporal" => Ok(Executor::Temporal),
            other => Err(format!(
                "unknown executor {other:?}: expected \"builtin\" or \"temporal\""
            )),
        }
    }
}

/// Temporal, the run executor past one database primary (`[temporal]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemporalConfig {
    /// The frontend's `host:port` (default `127.0.0.1:7233`).
    pub address: Option<String>,
    /// The namespace (default `default`).
    pub namespace: Option<String>,
    /// The task queue of Parlance's workflows and activities (default
    /// `parlance`); every worker of it must have the same agents.
    pub task_queue: Option<String>,
    /// How long an activity goes without a heartbeat before Temporal
    /// gives its run to another worker, in milliseconds (default 10,000).
    pub heartbeat_ms: Option<u64>,
    /// Whether this server runs a worker too (default true); `false` for
    /// servers that only take requests.
    pub worker: Option<bool>,
}

/// Limits of the inbox's sessions (`[sessions]`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionsConfig {
    /// Login attempts one address may make per minute (default
    /// [`DEFAULT_LOGINS_PER_ADDRESS`]); more get `429` with `Retry-After`.
    pub login_attempts_per_address: Option<u32>,
    /// Logins with one subject's tokens per minute, from anywhere (default
    /// [`DEFAULT_LOGINS_PER_SUBJECT`]).
    pub login_attempts_per_subject: Option<u32>,
    /// Live streams (server-sent events of the inbox, a run, a thread) one
    /// session may hold open at once (default [`DEFAULT_LIVE_STREAMS`]);
    /// the next gets `429` until one closes.
    pub max_live_streams: Option<usize>,
}

/// Login attempts per address per minute, by default.
pub const DEFAULT_LOGINS_PER_ADDRESS: u32 = 30;
/// Logins per subject per minute, by default.
pub const DEFAULT_LOGINS_PER_SUBJECT: u32 = 20;
/// Live streams per session, by default.
pub const DEFAULT_LIVE_STREAMS: usize = 8;

/// Where threads are stored.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// `sqlite://PATH`, a file path, or `postgres://...` (default
    /// [`DEFAULT_STORE_URL`]).
    pub url: Option<String>,
    /// How long a running run holds its thread without a heartbeat, in
    /// milliseconds (default 30,000; renewed every third of it).
    pub lease_ms: Option<u64>,
    /// How many times in a row a run whose process died is taken over at
    /// the same step before it is given up as `interrupted` (default 3).
    pub resume_attempts: Option<u32>,
    /// Where the server keeps its identity, which survives its restarts so
    /// that it takes over its own dead runs at once (default
    /// `$XDG_STATE_HOME/parlance`, else `~/.local/state/parlance`).
    pub identity_dir: Option<String>,
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

impl StoreConfig {
    /// The configured URL, else [`DEFAULT_STORE_URL`].
    pub fn url_or_default(&self) -> &str {
        self.url.as_deref().unwrap_or(DEFAULT_STORE_URL)
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
    /// The wire format: openai-chat, openai-responses, anthropic, gemini, mistral, ollama.
    pub format: String,
    /// Base URL (defaults to the provider's public API).
    pub base_url: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
}

/// An agent's structured output.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputSchemaConfig {
    /// Its name, sent to the provider (default `output`).
    pub name: Option<String>,
    /// A JSON Schema (an object).
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub schema: serde_json::Value,
}

/// A built-in guardrail of an agent (the packages take functions of
/// their own as well).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardrailConfig {
    /// `redact_secrets` (the server's secret scrubber: its tokens, signing
    /// secret and provider keys become `[redacted]`), `redact` (each match
    /// of `pattern` becomes `replacement`) or `block` (a match of
    /// `pattern` ends the run with `message`).
    pub kind: String,
    /// Its name in the records (default: the kind).
    pub name: Option<String>,
    /// Where it runs: any of `input`, `tool_call`, `output` (default: all
    /// three).
    pub at: Option<Vec<String>>,
    /// A regular expression (Rust `regex` syntax; `redact` and `block`).
    pub pattern: Option<String>,
    /// What a match becomes (`redact`; default `[redacted]`).
    pub replacement: Option<String>,
    /// The message for the user (`block`).
    pub message: Option<String>,
}

/// An agent.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// `provider:model`, the provider named in `[providers]` or a wire
    /// format with its default settings (`anthropic:claude-sonnet-4-5`);
    /// or a list of them, tried in order (a fallback: the next is asked
    /// when one is rate limited, overloaded, failing or timing out).
    pub model: AgentModel,
    /// With a list of models: the kinds of model error that move on to
    /// the next (default `rate_limited`, `overloaded`, `server`,
    /// `timeout`, `network`, `context_too_long`; never
    /// `invalid_request`, `authentication`, `permission`).
    pub fallback_on: Option<Vec<String>>,
    /// System instructions.
    pub instructions: Option<String>,
    /// Tool names from `[tools]`.
    #[serde(default)]
    pub tools: Vec<String>,
    /// MCP servers from `[[mcp]]`, by name: all their tools are offered.
    #[serde(default)]
    pub mcp: Vec<String>,
    /// Other agents of `[agents]` this one calls as tools, by name: each
    /// is a tool of that name, described to the model by its
    /// `description`; its runs are kept on threads of their own.
    #[serde(default)]
    pub agents: Vec<String>,
    /// What this agent does, for the agents that call it as a tool or
    /// hand conversations to it.
    pub description: Option<String>,
    /// Agents of `[agents]` this one may hand the conversation to, by
    /// name: each is offered as a tool `transfer_to_NAME`; the rest of the
    /// run, and the thread's next turns, are then that agent's.
    #[serde(default)]
    pub handoffs: Vec<String>,
    /// Model calls per run.
    pub max_model_calls: Option<u32>,
    /// Invalid-argument calls tolerated per run.
    pub max_invalid_arguments: Option<u32>,
    /// The final answer must be JSON satisfying this schema; it becomes
    /// the response's `output` (`[agents.NAME.output_schema] name =
    /// "order"`, and `schema` a JSON Schema as a TOML table).
    pub output_schema: Option<OutputSchemaConfig>,
    /// Final answers that do not fit the output schema sent back to the
    /// model with the problems, per run (default 1; 0: fail at once).
    pub output_retries: Option<u32>,
    /// Guardrails, run in order at their points (`[[agents.NAME.guardrails]]`).
    #[serde(default)]
    pub guardrails: Vec<GuardrailConfig>,
    /// How a streamed answer waits for the output guardrails: `answer`
    /// (default: all of it checked first) or `sentence`.
    pub output_hold: Option<String>,
    /// How runs keep their context inside the model's window
    /// (`[agents.NAME.context] strategy = "compact"`); unset, the thread
    /// is sent as it is.
    pub context: Option<ContextConfig>,
    /// What its runs may spend (`[agents.NAME.budget.run] cost = 0.5`),
    /// besides the server's `[budget]`.
    pub budget: Option<BudgetConfig>,
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
    /// A JSON price table file (genai-prices' format, relative to the
    /// working directory) for the messages' `cost`, consulted before the
    /// built-in table. Configuration only: an agent given in a request
    /// cannot name a file on the server.
    pub prices: Option<String>,
    /// `auto` (default): a run of this agent whose server died is carried
    /// on by a server of the store from its last committed step; `off`:
    /// it is marked `interrupted` and waits for a retry. Configuration
    /// only (an agent given in a request is not known after its server
    /// died).
    pub resume: Option<String>,
}

/// A budget (`[budget]`, `[agents.NAME.budget]`): limits per scope, and
/// what a run does at one.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    /// Each run's limits.
    pub run: Option<CapsConfig>,
    /// Each thread's, over all its runs.
    pub thread: Option<CapsConfig>,
    /// Each thread owner's, over all their threads, per UTC day.
    pub owner_day: Option<CapsConfig>,
    /// Each thread owner's, over all their threads, per UTC month.
    pub owner_month: Option<CapsConfig>,
    /// At a limit: `answer` (default: one last model call without tools,
    /// so the user learns where things stand) or `stop`. Either way the
    /// run ends `failed`, code `budget_exhausted`.
    pub on_exhausted: Option<String>,
}

/// The limits of one budget scope; unset: no limit.
#[derive(Debug, Clone, Copy, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CapsConfig {
    /// Input plus output tokens.
    pub tokens: Option<u64>,
    /// US dollars (priced models only: give others a token limit).
    pub cost: Option<f64>,
    /// Model calls.
    pub model_calls: Option<u64>,
    /// Tool calls the model asked for.
    pub tool_calls: Option<u64>,
}

/// `[agents.NAME.context]`: past `trigger` of the model's window, fail,
/// drop the oldest turns, or compact them into a summary.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextConfig {
    /// `fail`, `drop_oldest` or `compact`.
    pub strategy: String,
    /// The model's window in tokens (default: the price table's).
    pub window: Option<u64>,
    /// The share of the window past which the policy acts (default 0.8).
    pub trigger: Option<f64>,
    /// The share of the window the newest messages keep after a cut
    /// (default 0.25).
    pub keep: Option<f64>,
    /// The `provider:model` that writes summaries (default: the agent's).
    pub model: Option<String>,
    /// The instructions summaries are written with.
    pub instructions: Option<String>,
}

impl AgentConfig {
    /// Every model string the agent uses: its model (or list), then its
    /// summaries' writer.
    pub fn model_specs(&self) -> impl Iterator<Item = &String> {
        let writer = self.context.as_ref().and_then(|c| c.model.as_ref());
        self.model.specs().iter().chain(writer)
    }
}

/// An agent's `model`: one `provider:model`, or a list tried in order.
#[derive(Debug, Clone, PartialEq, Eq, schemars::JsonSchema)]
#[schemars(untagged)]
pub enum AgentModel {
    /// `model = "openai:gpt-4o"`.
    One(String),
    /// `model = ["anthropic:claude-sonnet-4-5", "openai:gpt-4o"]`: a
    /// fallback.
    List(Vec<String>),
}

impl Default for AgentModel {
    fn default() -> Self {
        AgentModel::One(String::new())
    }
}

impl AgentModel {
    /// Every model string, in order (one for `One`).
    pub fn specs(&self) -> &[String] {
        match self {
            AgentModel::One(s) => std::slice::from_ref(s),
            AgentModel::List(l) => l,
        }
    }
}

impl std::fmt::Display for AgentModel {
    /// The string, or the list's strings joined by commas.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.specs().join(","))
    }
}

impl From<String> for AgentModel {
    fn from(s: String) -> Self {
        AgentModel::One(s)
    }
}

impl PartialEq<&str> for AgentModel {
    /// One model, this one.
    fn eq(&self, other: &&str) -> bool {
        matches!(self, AgentModel::One(s) if s == other)
    }
}

impl From<&str> for AgentModel {
    fn from(s: &str) -> Self {
        AgentModel::One(s.to_string())
    }
}

impl<'de> Deserialize<'de> for AgentModel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = AgentModel;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a model string (\"openai:gpt-4o\") or a list of them")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<AgentModel, E> {
                Ok(AgentModel::One(v.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<AgentModel, A::Error> {
                let mut list = Vec::new();
                while let Some(v) = seq.next_element::<Value>()? {
                    match v {
                        Value::String(s) => list.push(s),
                        other => {
                            return Err(serde::de::Error::custom(format!(
                                "model[{}]: expected a model string, got {other}",
                                list.len(),
                            )));
                        }
                    }
                }
                Ok(AgentModel::List(list))
            }
        }
        d.deserialize_any(V)
    }
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
    pub fn schema(&self, name: &str) -> Result<Value, ConfigError> {
        serde_json::from_str(&self.input_schema).map_err(|e| ConfigError::ToolSchema {
            tool: name.to_string(),
            message: e.to_string(),
        })
    }
}
