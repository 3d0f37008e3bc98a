//! Building agents, models and tools from the configuration.

use std::sync::Arc;
use std::time::Duration;

use parlance_agent::{
    Agent, Budget, Caps, ContextPolicy, ContextStrategy, GuardPoint, Guardrail, Limits,
    OnExhausted, OutputHold, Tool, ToolContext, ToolError,
};
use parlance_model::{Fallback, FallbackOn, Model, ModelOptions};
use parlance_providers::transport::SharedClient;
use parlance_providers::{ModelBuilder, ModelSpec, Provider, wire_format};
use serde_json::Value;

use parlance_config::{
    AgentConfig, AgentModel, BudgetConfig, CapsConfig, Config, ConfigError, ContextConfig,
    GuardrailConfig,
};

/// Why an agent, a model or a tool of the configuration (or of a request)
/// could not be made; each names the setting at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A bad model string, a missing key, a bad base URL or header (the
    /// providers' own error).
    #[error(transparent)]
    Provider(#[from] parlance_providers::BuildError),
    /// The model of `spec` could not be made.
    #[error("model {spec:?}: {source}")]
    Model {
        /// The model string.
        spec: String,
        /// Why.
        #[source]
        source: parlance_providers::BuildError,
    },
    /// `[providers.NAME] format` names no wire format.
    #[error(
        "providers.{provider}.format: unknown format {format:?} (expected openai-chat, openai-responses, anthropic or gemini)"
    )]
    UnknownFormat {
        /// The provider's name.
        provider: String,
        /// What it says.
        format: String,
    },
    /// A local model where a provider's was needed.
    #[error("model: {spec:?} is a local model, not a provider's")]
    NotRemote {
        /// The model string.
        spec: String,
    },
    /// A request named a local model no configured agent uses.
    #[error(
        "model: {spec:?} is not available: local models are set in the server's configuration, not in requests"
    )]
    LocalNotConfigured {
        /// The model string.
        spec: String,
    },
    /// The embedded model could not be loaded (or is not built in).
    #[error("{0}")]
    Local(String),
    /// `prices`: the file cannot be read as a price table, or a request
    /// named one.
    #[error("prices: {0}")]
    Prices(String),
    /// `resume`: neither `auto` nor `off`, or given in a request.
    #[error("resume: {0}")]
    Resume(String),
    /// `output_schema` is not a JSON Schema object.
    #[error("{0}")]
    OutputSchema(String),
    /// A guardrail's settings (`guardrails[N].field: what is wrong`).
    #[error("{0}")]
    Guardrail(String),
    /// The context policy's settings (`context.field: what is wrong`).
    #[error("{0}")]
    Context(String),
    /// A budget's settings (`budget.run.cost: what is wrong`).
    #[error("{0}")]
    Budget(String),
    /// An agent names a tool `[tools]` does not have.
    #[error("tools: no tool named {name:?} in the configuration")]
    UnknownTool {
        /// The tool's name.
        name: String,
    },
    /// `[tools.NAME] kind` is neither `external` nor `http`.
    #[error("tools.{name}.kind: expected external or http, got {kind:?}")]
    ToolKind {
        /// The tool.
        name: String,
        /// What it says.
        kind: String,
    },
    /// An `http` tool without its `url`.
    #[error("tools.{name}.url: required for an http tool")]
    ToolUrl {
        /// The tool.
        name: String,
    },
    /// A tool's schema is not JSON.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The agent's tools do not fit together (a duplicate name, a schema
    /// that is not one).
    #[error(transparent)]
    Tools(#[from] parlance_agent::ToolBoxError),
    /// An `[[mcp]]` table that cannot work (the message names it and the
    /// setting).
    #[error("{0}")]
    Mcp(String),
    /// `agents`: an agent `[agents]` does not have, or a circle of agents
    /// calling each other (the message names it).
    #[error("agents: {0}")]
    SubAgent(String),
    /// `handoffs`: an agent `[agents]` does not have.
    #[error("handoffs: {0}")]
    Handoff(String),
    /// An agent names an MCP server `[[mcp]]` does not have.
    #[error("mcp: no [[mcp]] server named {name:?} in the configuration")]
    UnknownMcp {
        /// The server's name.
        name: String,
    },
    /// An entry of a list of models (`model = [...]`).
    #[error("model[{index}]: {source}")]
    InList {
        /// Its position.
        index: usize,
        /// What is wrong with it.
        #[source]
        source: Box<BuildError>,
    },
    /// A fallback that cannot be made (an empty list, a bad
    /// `fallback_on`); the message names the setting.
    #[error("{0}")]
    Fallback(String),
    /// `[agents.NAME]`: what is wrong with it.
    #[error("agents.{agent}.{source}")]
    InAgent {
        /// The agent.
        agent: String,
        /// What is wrong.
        #[source]
        source: Box<BuildError>,
    },
}

impl BuildError {
    /// This error as one of `[agents.NAME]`.
    pub fn in_agent(self, agent: &str) -> BuildError {
        BuildError::InAgent {
            agent: agent.to_string(),
            source: Box::new(self),
        }
    }
}

/// The configured MCP servers (`[[mcp]]`) by name, none started yet.
pub type McpServers = std::collections::BTreeMap<String, parlance_mcp::McpServer>;

/// The `[[mcp]]` servers, checked (a bad one is an error naming it and
/// the setting); each starts when a run first needs its tools.
pub fn mcp_servers(config: &Config) -> Result<McpServers, BuildError> {
    let mut servers = McpServers::new();
    for (i, c) in config.mcp.iter().enumerate() {
        let server = parlance_mcp::McpServer::from_config(c)
            .map_err(|e| BuildError::Mcp(format!("mcp[{i}]: {e}")))?;
        if servers.insert(c.name.clone(), server).is_some() {
            return Err(BuildError::Mcp(format!(
                "mcp[{i}].name: {:?} names two [[mcp]] servers",
                c.name
            )));
        }
    }
    Ok(servers)
}

/// A model from `provider:model`: a provider named in `[providers]`, else
/// one of the registry's (`anthropic:claude-sonnet-4-5`, see
/// `parlance_providers::registry`); `local` is the embedded default model,
/// `local:NAME` a GGUF file or a model `parlance model list` shows (Ollama's
/// and LM Studio's included). A missing key is an error here, before any
/// request.
pub fn model(config: &Config, spec: &str) -> Result<Arc<dyn Model>, BuildError> {
    match ModelSpec::parse(spec)? {
        ModelSpec::Local { path } => local_model(path),
        ModelSpec::Remote { .. } => remote_model(config, spec),
    }
}

/// The agent's model: `model` alone, or a fallback over the list
/// (`model = ["anthropic:…", "openai:…"]`, tried in order) moving on by
/// `fallback_on`; `one` makes each model. Errors name the setting and the
/// entry (`model[1]: …`, `fallback_on[0]: …`).
pub fn agent_model(
    a: &AgentConfig,
    one: impl Fn(&str) -> Result<Arc<dyn Model>, BuildError>,
    cooldowns: Option<&Cooldowns>,
) -> Result<Arc<dyn Model>, BuildError> {
    let on = match &a.fallback_on {
        None => None,
        Some(kinds) => Some(
            FallbackOn::kinds(kinds)
                .map_err(|e| BuildError::Fallback(format!("fallback_on{e}")))?,
        ),
    };
    let specs = match &a.model {
        AgentModel::One(spec) if on.is_none() => return one(spec),
        AgentModel::One(_) => {
            return Err(BuildError::Fallback(
                "fallback_on: applies to a list of models (model = [\"…\", \"…\"]), not to one"
                    .into(),
            ));
        }
        AgentModel::List(specs) => specs,
    };
    let models = specs
        .iter()
        .enumerate()
        .map(|(index, spec)| {
            one(spec).map_err(|e| BuildError::InList {
                index,
                source: Box::new(e),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut fallback =
        Fallback::new(models).map_err(|e| BuildError::Fallback(format!("model: {e}")))?;
    if let Some(board) = cooldowns {
        fallback = fallback.shared_cooldowns(Arc::clone(board));
    }
    Ok(Arc::new(match on {
        Some(on) => fallback.on(on),
        None => fallback,
    }))
}

/// Whether `spec` names the embedded model (`local`, `local:PATH`): files
/// on the server, so only its configuration may name one.
pub fn is_local(spec: &str) -> bool {
    matches!(ModelSpec::parse(spec), Ok(ModelSpec::Local { .. }))
}

/// A local model loaded on tokio's blocking pool, so that a slow file (or
/// a FIFO) never stalls the runtime.
pub async fn load_local(spec: &str) -> Result<Arc<dyn Model>, BuildError> {
    let s = spec.to_string();
    tokio::task::spawn_blocking(move || model(&Config::default(), &s))
        .await
        .map_err(|e| BuildError::Local(format!("loading {spec}: {e}")))?
}

/// A provider's model; never touches a file (a local spec is refused).
pub fn remote_model(config: &Config, spec: &str) -> Result<Arc<dyn Model>, BuildError> {
    let (provider, model) = match ModelSpec::parse(spec)? {
        ModelSpec::Local { .. } => {
            return Err(BuildError::NotRemote { spec: spec.into() });
        }
        ModelSpec::Remote { provider, model } => (provider, model),
    };
    let builder = match config.providers.get(provider) {
        Some(p) => {
            let format = wire_format(&p.format).ok_or_else(|| BuildError::UnknownFormat {
                provider: provider.into(),
                format: p.format.clone(),
            })?;
            let mut b = match Provider::named(provider).filter(|d| d.format.name == format.name) {
                Some(defaults) => defaults.model(model),
                None => ModelBuilder::new(format, model),
            };
            if let Some(url) = &p.base_url {
                b = b.base_url(url);
            }
            if let Some(var) = &p.api_key_env {
                b = b.api_key_env(var);
            }
            b
        }
        None => ModelBuilder::from_spec(spec)?,
    };
    let model = builder.build().map_err(|source| BuildError::Model {
        spec: spec.into(),
        source,
    })?;
    Ok(Arc::new(model))
}

/// The embedded model: the default one, a GGUF file, or a model found in
/// Parlance's cache, Ollama's store or LM Studio's folder by name.
#[cfg(feature = "local")]
fn local_model(name: Option<&str>) -> Result<Arc<dyn Model>, BuildError> {
    let spec = match name {
        Some(n) => format!("local:{n}"),
        None => "local".to_string(),
    };
    Ok(Arc::new(
        parlance_local::LocalModel::from_spec(&spec)
            .map_err(|e| BuildError::Local(e.to_string()))?,
    ))
}

#[cfg(not(feature = "local"))]
fn local_model(_: Option<&str>) -> Result<Arc<dyn Model>, BuildError> {
    Err(BuildError::Local(
        "model \"local\": this server was built without the embedded model (the `local` feature)"
            .into(),
    ))
}

/// A tool from `[tools.NAME]`.
pub fn tool(config: &Config, name: &str, http: &SharedClient) -> Result<Tool, BuildError> {
    let t = config
        .tools
        .get(name)
        .ok_or_else(|| BuildError::UnknownTool { name: name.into() })?;
    let schema = t.schema(name)?;
    let tool = match t.kind.as_str() {
        // The client answers each call, as a reviewer would: the run waits.
        "external" => Tool::new(name, &t.description, |_: Value, _ctx: ToolContext| async {
            Err::<Value, _>(ToolError::new(
                "this tool is answered by the client: answer the call instead of approving it",
            ))
        })
        .needs_approval(),
        "http" => {
            let url = t
                .url
                .clone()
                .ok_or_else(|| BuildError::ToolUrl { name: name.into() })?;
            crate::http_tool::tool(
                name,
                &t.description,
                url,
                http.clone(),
                t.max_output_bytes
                    .unwrap_or(parlance_agent::DEFAULT_MAX_TOOL_OUTPUT),
                config
                    .max_connections_per_host
                    .unwrap_or(crate::http_tool::DEFAULT_CONNECTIONS_PER_HOST),
            )
        }
        other => {
            return Err(BuildError::ToolKind {
                name: name.into(),
                kind: other.into(),
            });
        }
    };
    let mut tool = tool.with_schema(schema);
    if t.needs_approval {
        tool = tool.needs_approval();
    }
    if let Some(n) = t.max_output_bytes {
        tool = tool.max_output(n);
    }
    Ok(match t.timeout_ms {
        Some(ms) => tool.timeout(Duration::from_millis(ms)),
        None => tool,
    })
}

/// An agent from its configuration (a local model is loaded here: for
/// the command line; the server loads them once, off its workers).
pub fn agent(
    config: &Config,
    name: Option<&str>,
    a: &AgentConfig,
    http: &SharedClient,
) -> Result<Agent, BuildError> {
    let mcp = mcp_servers(config)?;
    agent_with(
        config,
        name,
        a,
        &Parts {
            http,
            mcp: &mcp,
            one: &|spec| model(config, spec),
            approval_keys: &[],
            cooldowns: None,
            built: None,
        },
    )
}

/// The configured agents' names in an order in which each comes after the
/// agents it calls as tools (`agents = [...]`); an unknown name or a
/// circle is an error naming the agent and the circle.
pub fn build_order(config: &Config) -> Result<Vec<String>, BuildError> {
    fn visit(
        config: &Config,
        name: &str,
        path: &mut Vec<String>,
        out: &mut Vec<String>,
    ) -> Result<(), BuildError> {
        if out.iter().any(|n| n == name) {
            return Ok(());
        }
        if let Some(i) = path.iter().position(|n| n == name) {
            let mut circle = path[i..].to_vec();
            circle.push(name.to_string());
            return Err(BuildError::SubAgent(format!(
                "agents call or hand over to each other in a circle: {} (handoffs and agents used as tools form no circle)",
                circle.join(" -> ")
            ))
            .in_agent(&path[i]));
        }
        let a = &config.agents[name];
        path.push(name.to_string());
        let edges = a.agents.iter().map(|n| ("agents", n));
        for (i, (setting, sub)) in edges
            .enumerate()
            .chain(a.handoffs.iter().map(|n| ("handoffs", n)).enumerate())
        {
            if !config.agents.contains_key(sub) {
                let e = format!("[{i}]: no agent named {sub:?} in the configuration");
                return Err(match setting {
                    "agents" => BuildError::SubAgent(e),
                    _ => BuildError::Handoff(e),
                }
                .in_agent(name));
            }
            visit(config, sub, path, out)?;
        }
        path.pop();
        out.push(name.to_string());
        Ok(())
    }
    let mut out = Vec::new();
    for name in config.agents.keys() {
        visit(config, name, &mut Vec::new(), &mut out)?;
    }
    Ok(out)
}

/// Whether runs of a configured agent resume themselves after their
/// server died (`resume`: `auto`, the default, or `off`).
pub fn resumes(a: &AgentConfig) -> Result<bool, BuildError> {
    match a.resume.as_deref() {
        None | Some("auto") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(BuildError::Resume(format!(
            "expected \"auto\" or \"off\", not {other:?}"
        ))),
    }
}

/// Where fallbacks share their cooldowns (the server's store).
pub type Cooldowns = Arc<dyn parlance_model::SharedCooldowns>;

/// Makes a model from a model string (a provider's, or a loaded local one).
pub type ModelMaker<'a> = dyn Fn(&str) -> Result<Arc<dyn Model>, BuildError> + 'a;

/// What the agents built from one configuration share.
pub struct Parts<'a> {
    /// The HTTP client of `http` tools.
    pub http: &'a SharedClient,
    /// The `[[mcp]]` servers.
    pub mcp: &'a McpServers,
    /// Makes a model from a model string.
    pub one: &'a ModelMaker<'a>,
    /// Signs (the first) and verifies approval digests.
    pub approval_keys: &'a [Arc<[u8]>],
    /// Where fallbacks share their cooldowns, if anywhere.
    pub cooldowns: Option<&'a Cooldowns>,
    /// Agents already built, by name, for the agents that call them as
    /// tools (`agents = [...]`); one not there is built from the
    /// configuration.
    pub built: Option<&'a std::collections::HashMap<String, Agent>>,
}

/// An agent from its configuration, with the parts it shares.
pub fn agent_with(
    config: &Config,
    name: Option<&str>,
    a: &AgentConfig,
    parts: &Parts,
) -> Result<Agent, BuildError> {
    let Parts {
        http,
        mcp,
        one,
        approval_keys,
        cooldowns,
        built: _,
    } = *parts;
    let model = agent_model(a, one, cooldowns)?;
    let mut limits = Limits::default();
    if let Some(n) = a.max_model_calls {
        limits.max_model_calls = n;
    }
    if let Some(n) = a.max_invalid_arguments {
        limits.max_invalid_arguments = n;
    }
    if let Some(n) = a.output_retries {
        limits.output_retries = n;
    }
    if let Some(ms) = a.tool_timeout_ms {
        limits.tool_timeout = Duration::from_millis(ms);
    }
    if let Some(p) = a.on_tool_exception {
        limits.on_tool_exception = p;
    }
    if let Some(n) = a.max_tool_output_bytes {
        limits.max_tool_output = n;
    }
    if let Some(h) = &a.output_hold {
        limits.output_hold =
            OutputHold::parse(h).map_err(|e| BuildError::Guardrail(format!("output_hold: {e}")))?;
    }
    let mut b = Agent::builder(model).limits(limits).options(ModelOptions {
        max_tokens: a.max_tokens,
        temperature: a.temperature,
        top_p: a.top_p,
        top_k: a.top_k,
        seed: a.seed,
        extra: a.extra.clone(),
        ..Default::default()
    });
    if let Some(n) = name {
        b = b.name(n);
    }
    // The first key signs; the others (a rotated secret's) still verify.
    if let Some((k, previous)) = approval_keys.split_first() {
        b = b.approval_key(Arc::clone(k));
        for p in previous {
            b = b.previous_approval_key(Arc::clone(p));
        }
    }
    if let Some(i) = &a.instructions {
        b = b.instructions(i.clone());
    }
    if let Some(o) = &a.output_schema {
        if !o.schema.is_object() {
            return Err(BuildError::OutputSchema(format!(
                "output_schema.schema: expected a JSON Schema object, got {}",
                o.schema
            )));
        }
        let name = o.name.clone().unwrap_or_else(|| "output".into());
        b = b.output_schema(name, o.schema.clone());
    }
    if let Some(path) = &a.prices {
        let table = parlance_prices::PriceTable::from_file(path)
            .map_err(|e| BuildError::Prices(e.to_string()))?
            .then(parlance_prices::PriceTable::builtin().clone());
        b = b.prices(table);
    }
    if let Some(c) = &a.context {
        b = b.context(context_policy(c, one)?);
    }
    if let Some(budget) = budget(config.budget.as_ref(), a.budget.as_ref())? {
        b = b.budget(budget);
    }
    for (i, g) in a.guardrails.iter().enumerate() {
        for g in guardrails(g).map_err(|e| BuildError::Guardrail(format!("guardrails[{i}].{e}")))? {
            b = b.guardrail(g);
        }
    }
    for t in &a.tools {
        b = b.tool(tool(config, t, http)?);
    }
    for m in &a.mcp {
        let server = mcp
            .get(m)
            .ok_or_else(|| BuildError::UnknownMcp { name: m.clone() })?;
        b = b.toolset(server.clone());
    }
    for (i, sub) in a.agents.iter().enumerate() {
        let (agent, c) = linked(config, name, sub, parts)
            .map_err(|e| BuildError::SubAgent(format!("[{i}]: {e}")))?;
        let description = c
            .description
            .clone()
            .or_else(|| c.instructions.clone())
            .unwrap_or_else(|| format!("The {sub} agent: send it a task in full."));
        b = b.tool(agent?.as_tool(sub.clone(), description));
    }
    for (i, to) in a.handoffs.iter().enumerate() {
        let (agent, _) = linked(config, name, to, parts)
            .map_err(|e| BuildError::Handoff(format!("[{i}]: {e}")))?;
        b = b.handoff(agent?);
    }
    if let Some(d) = &a.description {
        b = b.description(d.clone());
    }
    Ok(b.build()?)
}

/// Another configured agent that agent `name` calls as a tool or hands
/// over to: the one already built, else built here (the command line: in
/// order, no circles). `Err`: no agent has that name (the message for the
/// setting); the inner result: building it failed.
fn linked<'c>(
    config: &'c Config,
    name: Option<&str>,
    other: &str,
    parts: &Parts,
) -> Result<(Result<Agent, BuildError>, &'c AgentConfig), String> {
    let Some(c) = config.agents.get(other) else {
        return Err(format!("no agent named {other:?} in the configuration"));
    };
    if let Some(agent) = parts.built.and_then(|m| m.get(other)) {
        return Ok((Ok(agent.clone()), c));
    }
    let built = match name {
        Some(n) => build_order(config).map_err(|e| e.in_agent(n)),
        None => Ok(Vec::new()),
    }
    .and_then(|_| agent_with(config, Some(other), c, parts).map_err(|e| e.in_agent(other)));
    Ok((built, c))
}

/// The server's `[budget]` and the agent's own together (the lower of two
/// limits holds; `stop` if either says so); `None` without either.
fn budget(
    server: Option<&BudgetConfig>,
    agent: Option<&BudgetConfig>,
) -> Result<Option<Budget>, BuildError> {
    let read = |c: &BudgetConfig, prefix: &str| -> Result<Budget, BuildError> {
        let caps = |c: Option<CapsConfig>| {
            let c = c.unwrap_or_default();
            Caps {
                tokens: c.tokens,
                cost: c.cost,
                model_calls: c.model_calls,
                tool_calls: c.tool_calls,
            }
        };
        let on_exhausted = match c.on_exhausted.as_deref() {
            None => OnExhausted::Answer,
            Some(s) => OnExhausted::parse(s)
                .map_err(|e| BuildError::Budget(format!("{prefix}.on_exhausted: {e}")))?,
        };
        let b = Budget {
            run: caps(c.run),
            thread: caps(c.thread),
            owner_day: caps(c.owner_day),
            owner_month: caps(c.owner_month),
            on_exhausted,
        };
        b.check().map_err(|e| {
            BuildError::Budget(format!(
                "{}: {}",
                e.field.replacen("budget", prefix, 1),
                e.message
            ))
        })?;
        Ok(b)
    };
    Ok(match (server, agent) {
        (None, None) => None,
        (Some(s), None) => Some(read(s, "budget")?),
        (None, Some(a)) => Some(read(a, "budget")?),
        (Some(s), Some(a)) => Some(read(a, "budget")?.within(&read(s, "budget")?)),
    })
}

/// Checks the server's `[budget]` (before any agent is built, so that
/// its error names it, not an agent).
pub fn server_budget(config: &Config) -> Result<(), BuildError> {
    budget(config.budget.as_ref(), None).map(drop)
}

/// `[agents.NAME.context]` as a policy; its writer's model is made by
/// `one`. The policy's ranges are checked when the agent is built.
fn context_policy(c: &ContextConfig, one: &ModelMaker) -> Result<ContextPolicy, BuildError> {
    let strategy = ContextStrategy::parse(&c.strategy)
        .map_err(|e| BuildError::Context(format!("context.strategy: {e}")))?;
    let mut p = match strategy {
        ContextStrategy::Fail => ContextPolicy::fail(),
        ContextStrategy::DropOldest => ContextPolicy::drop_oldest(),
        ContextStrategy::Compact => ContextPolicy::compact(),
    };
    p.window = c.window;
    if let Some(t) = c.trigger {
        p.trigger = t;
    }
    if let Some(k) = c.keep {
        p.keep = k;
    }
    if let Some(spec) = &c.model {
        if strategy != ContextStrategy::Compact {
            return Err(BuildError::Context(format!(
                "context.model: only a compact strategy writes summaries, not {}",
                strategy.as_str()
            )));
        }
        let m = one(spec).map_err(|e| BuildError::Context(format!("context.model: {e}")))?;
        p = p.model(m);
    }
    p.instructions = c.instructions.clone();
    p.check().map_err(|e| BuildError::Context(e.to_string()))?;
    Ok(p)
}

/// A built-in guardrail, one per point it runs at; the error names the
/// field (`kind: ...`).
fn guardrails(g: &GuardrailConfig) -> Result<Vec<Guardrail>, String> {
    let points = match &g.at {
        None => GuardPoint::ALL.to_vec(),
        Some(list) if list.is_empty() => return Err("at: name at least one point".into()),
        Some(list) => list
            .iter()
            .map(|p| GuardPoint::parse(p))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("at: {e}"))?,
    };
    let name = g.name.clone().unwrap_or_else(|| g.kind.clone());
    let pattern = || -> Result<regex::Regex, String> {
        let p = g.pattern.as_deref().ok_or("pattern: required")?;
        regex::Regex::new(p).map_err(|e| format!("pattern: {e}"))
    };
    let unused = |field: &str, set: bool| match set {
        true => Err(format!("{field}: not a setting of a {} guardrail", g.kind)),
        false => Ok(()),
    };
    let mut out = Vec::new();
    match g.kind.as_str() {
        "redact_secrets" => {
            unused("pattern", g.pattern.is_some())?;
            unused("replacement", g.replacement.is_some())?;
            unused("message", g.message.is_some())?;
            for p in points {
                out.push(Guardrail::redact(name.clone(), p, |s| {
                    let clean = crate::secrets::redact(s);
                    (clean != s).then(|| clean.into_owned())
                }));
            }
        }
        "redact" => {
            unused("message", g.message.is_some())?;
            let re = pattern()?;
            let with = g.replacement.clone().unwrap_or_else(|| "[redacted]".into());
            for p in points {
                out.push(Guardrail::redact_pattern(
                    name.clone(),
                    p,
                    re.clone(),
                    with.clone(),
                ));
            }
        }
        "block" => {
            unused("replacement", g.replacement.is_some())?;
            let re = pattern()?;
            let message = g
                .message
                .clone()
                .ok_or("message: required (what the user reads)")?;
            for p in points {
                out.push(Guardrail::block_pattern(
                    name.clone(),
                    p,
                    re.clone(),
                    message.clone(),
                ));
            }
        }
        other => {
            return Err(format!(
                "kind: unknown guardrail {other:?} (known: redact_secrets, redact, block)"
            ));
        }
    }
    Ok(out)
}
