//! What the handlers share: the configuration, the store, the agents
//! built once, the callers' tokens and the server's keys.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRef;
use parlance_agent::Agent;
use parlance_model::Model;
use parlance_providers::HttpConfig;
use parlance_providers::transport::SharedClient;
use parlance_store::{Redactor, Store};

use crate::StartError;
use crate::auth::Tokens;
use crate::config::Config;
use crate::signing::{self, Signer};

/// Everything the handlers share.
pub struct AppState {
    /// The configuration the server started with.
    pub config: Config,
    /// The thread store.
    pub store: Store,
    /// The configured agents, by name.
    pub agents: HashMap<String, Agent>,
    /// The same, as a runner finds a run's agent.
    pub by_name: parlance_runtime::AgentsByName,
    /// Local models of the configuration, loaded once, shared by all runs.
    pub local_models: HashMap<String, Arc<dyn Model>>,
    /// Who may call, by bearer token.
    pub tokens: Tokens,
    /// Signs paused runs and approval digests.
    pub signer: Signer,
    /// Scrubs the configured secrets from every answer.
    pub redactor: Arc<Redactor>,
    /// The HTTP client of `http` tools: the process's shared one.
    pub http: SharedClient,
    /// The `[[mcp]]` servers, shared by the agents that name them.
    pub mcp: parlance_assemble::McpServers,
    /// Where the agents' fallbacks share their cooldowns: the store, so
    /// every server of it skips a model one of them saw rate limited.
    pub cooldowns: parlance_assemble::Cooldowns,
    /// The server's identity (written on every run it claims), locked
    /// while it lives.
    pub identity: crate::identity::Identity,
    /// Carries on the runs of the store whose server died, with the
    /// configured agents that resume (`resume = "auto"`).
    pub resumer: parlance_runtime::Resumer,
    /// The connections and runs admitted at once (`admission`).
    pub limits: crate::admission::Limits,
    /// Turns for the requests that run an agent.
    pub admission: Arc<crate::admission::Admission>,
    /// The runs this server streams, for clients that reconnect.
    pub live: Arc<crate::live::LiveRuns>,
    /// Temporal, when it carries the runs (`executor = "temporal"`).
    pub temporal: Option<parlance_temporal::Temporal>,
}

/// Shared state for the handlers.
pub type Shared = Arc<AppState>;

impl FromRef<Shared> for Tokens {
    fn from_ref(state: &Shared) -> Tokens {
        state.tokens.clone()
    }
}

impl AppState {
    /// A runner of `agent` on the store, which knows the configured agents
    /// by name (a sub-agent's run decided apart then carries its parent on).
    pub fn runner(&self, agent: Agent) -> crate::executor::Runner {
        // On Temporal, a configured agent is run by name by the workers; an
        // agent given in a request, even one named as a configured one, is not.
        let configured = match &self.temporal {
            Some(_) => agent
                .name()
                .filter(|n| {
                    self.agents
                        .get(*n)
                        .is_some_and(|a| a.settings() == agent.settings())
                })
                .map(str::to_string),
            None => None,
        };
        let local = parlance_runtime::ThreadRunner::new(self.store.clone(), agent)
            .with_agents(Arc::clone(&self.by_name));
        crate::executor::Runner::new(local, self.temporal.clone(), configured)
    }

    /// On Temporal with `[temporal] worker` (the default), a worker of the
    /// task queue in this process, running the configured agents; `None`
    /// otherwise. Every entry point that takes runs starts it (`serve`,
    /// `mcp serve`): a run started where no worker polls would wait.
    pub fn start_worker(&self) -> Result<Option<parlance_temporal::Worker>, StartError> {
        let Some(t) = &self.temporal else {
            return Ok(None);
        };
        if self.config.temporal.worker == Some(false) {
            tracing::info!(task_queue = %t.settings().task_queue, "runs are carried by Temporal's workers (none in this process)");
            return Ok(None);
        }
        let max_attempts = self
            .config
            .store
            .resume_attempts
            .unwrap_or(parlance_runtime::DEFAULT_MAX_ATTEMPTS);
        let w = t.worker(Arc::clone(&self.by_name), max_attempts)?;
        tracing::info!(
            task_queue = %t.settings().task_queue,
            "runs are carried by Temporal, with a worker in this process"
        );
        Ok(Some(w))
    }

    /// Stops the MCP servers (their processes, their sessions).
    pub async fn shutdown(&self) {
        futures::future::join_all(self.mcp.values().map(|s| s.shutdown())).await;
    }

    /// The store opened (and migrated, its dead runs swept), every local
    /// model of the configuration loaded once (off the async workers),
    /// every agent of the configuration built (a bad one is an error
    /// naming it).
    pub async fn new(config: Config) -> Result<AppState, StartError> {
        let url = config.store.url_or_default().to_string();
        let store_error = |source| StartError::Store {
            url: url.clone(),
            source,
        };
        let mut store = Store::open(&url).await.map_err(store_error)?;
        if let Some(ms) = config.store.lease_ms {
            store = store.with_lease(Duration::from_millis(ms.max(1)));
        }
        let identity = crate::identity::Identity::acquire(
            config
                .store
                .identity_dir
                .as_deref()
                .map(std::path::Path::new),
        );
        // A dead run is left a lease's time to a server that can carry it
        // on (every server looks every third of a lease) before a touch
        // of its thread marks it interrupted.
        let lease = store.lease();
        let store = store.with_holder(&identity.id).with_resume_grace(lease);
        let swept = store.sweep_expired().await.map_err(store_error)?;
        if !swept.is_empty() {
            tracing::warn!(
                count = swept.len(),
                "runs whose process died were marked interrupted"
            );
        }
        let secret = match &config.secret {
            Some(s) if !s.is_empty() => s.clone(),
            _ => store
                .setting_or_init("signing_secret", signing::new_secret)
                .await
                .map_err(store_error)?,
        };
        let signer = Signer::rotated(&secret, &config.previous_secrets);
        let redactor = Arc::new(Redactor::new(parlance_assemble::secrets::collect(
            &config, &secret,
        )));
        parlance_assemble::secrets::install(Arc::clone(&redactor));
        let store = store.with_redactor((*redactor).clone());
        // Built in the background: reading the system's certificates
        // would otherwise delay the first answer by milliseconds.
        let http = SharedClient::new(&HttpConfig::default());
        let mut local_models = HashMap::new();
        for a in config.agents.values() {
            for spec in a.model_specs() {
                if parlance_assemble::is_local(spec) && !local_models.contains_key(spec) {
                    let m = parlance_assemble::load_local(spec).await?;
                    local_models.insert(spec.clone(), m);
                }
            }
        }
        let mcp = parlance_assemble::mcp_servers(&config)?;
        parlance_assemble::server_budget(&config)?;
        let cooldowns: parlance_assemble::Cooldowns =
            Arc::new(parlance_runtime::StoreCooldowns::new(store.clone()));
        let mut agents = HashMap::new();
        let mut resuming = Vec::new();
        for name in parlance_assemble::build_order(&config)? {
            let a = &config.agents[&name];
            let name = &name;
            let one = |spec: &str| match local_models.get(spec) {
                Some(m) => Ok(Arc::clone(m)),
                None => parlance_assemble::remote_model(&config, spec),
            };
            let agent = parlance_assemble::agent_with(
                &config,
                Some(name),
                a,
                &parlance_assemble::Parts {
                    http: &http,
                    mcp: &mcp,
                    one: &one,
                    approval_keys: &signer.approval_keys(),
                    cooldowns: Some(&cooldowns),
                    built: Some(&agents),
                },
            )
            .map_err(|e| e.in_agent(name))?;
            if parlance_assemble::resumes(a).map_err(|e| e.in_agent(name))? {
                resuming.push(agent.clone());
            }
            agents.insert(name.clone(), agent);
        }
        let resumer = parlance_runtime::Resumer::new(store.clone(), resuming).max_attempts(
            config
                .store
                .resume_attempts
                .unwrap_or(parlance_runtime::DEFAULT_MAX_ATTEMPTS),
        );
        let limits = crate::admission::Limits::new(&config, crate::admission::open_files());
        let config_queue = config
            .run_queue_ms
            .map_or(crate::admission::DEFAULT_QUEUE, Duration::from_millis);
        let by_name: parlance_runtime::AgentsByName = {
            let agents = agents.clone();
            Arc::new(move |name: &str| agents.get(name).cloned())
        };
        let temporal = match config.executor {
            crate::config::Executor::Builtin => None,
            crate::config::Executor::Temporal => Some(
                parlance_temporal::Temporal::connect(temporal_settings(&config), store.clone())
                    .await
                    .map_err(StartError::Temporal)?,
            ),
        };
        Ok(AppState {
            tokens: Tokens::new(&config.auth),
            config,
            store,
            agents,
            by_name,
            local_models,
            signer,
            redactor,
            http,
            mcp,
            cooldowns,
            identity,
            resumer,
            limits,
            admission: Arc::new(crate::admission::Admission::new(limits.runs, config_queue)),
            live: Default::default(),
            temporal,
        })
    }
}

/// `[temporal]` with its defaults.
fn temporal_settings(config: &Config) -> parlance_temporal::Settings {
    let t = &config.temporal;
    let d = parlance_temporal::Settings::default();
    parlance_temporal::Settings {
        address: t.address.clone().unwrap_or(d.address),
        namespace: t.namespace.clone().unwrap_or(d.namespace),
        task_queue: t.task_queue.clone().unwrap_or(d.task_queue),
        heartbeat: t
            .heartbeat_ms
            .map_or(d.heartbeat, |ms| Duration::from_millis(ms.max(100))),
    }
}
