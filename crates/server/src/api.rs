//! What the handlers share: the request types, reading their parts (the
//! agent, the input, earlier turns, a thread the caller owns), and what
//! every answer goes through before it leaves (artifacts stripped for
//! non-operators, secrets scrubbed).

use parlance_agent::Agent;
use parlance_format::{Decision, Message, Response, Turn};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::auth::Principal;
use crate::config::AgentConfig;
use crate::error::ApiError;
use crate::state::AppState;

/// An agent named in the configuration, or given inline.
#[derive(Debug, Clone, JsonSchema)]
#[serde(untagged)]
pub enum AgentSpec {
    /// The name of an agent in the server's configuration.
    Named(String),
    /// An agent given in the request.
    Inline(Box<AgentConfig>),
}

impl<'de> Deserialize<'de> for AgentSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = AgentSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an agent's name or an agent object {\"model\": ...}")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<AgentSpec, E> {
                Ok(AgentSpec::Named(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<AgentSpec, A::Error> {
                // Read as the config type itself, so an unknown or wrong
                // field is named (`agent.colour: unknown field`).
                AgentConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(|c| AgentSpec::Inline(Box::new(c)))
            }
        }
        d.deserialize_any(V)
    }
}

/// The new input: a text (one user message) or messages.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum InputSpec {
    /// One user message.
    Text(String),
    /// Canonical messages.
    Messages(#[schemars(with = "Vec<Message>")] Vec<Value>),
}

/// `POST /v1/runs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// Which agent runs.
    pub agent: AgentSpec,
    /// What is new this turn.
    pub input: InputSpec,
    /// Earlier turns (stateless multi-turn); only their `messages` reach the model.
    #[serde(default)]
    #[schemars(with = "Vec<Turn>")]
    pub turns: Vec<Value>,
    /// Run on a stored thread instead (stateful multi-turn). The run goes
    /// on to its end whatever the client does; its outcome is stored.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Answer with server-sent events.
    #[serde(default)]
    pub stream: bool,
}

/// `POST /v1/runs/{id}/decisions`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionsRequest {
    /// One decision per call decided now.
    #[schemars(with = "Vec<Decision>")]
    pub decisions: Vec<Value>,
    /// Stateless runs: the paused response, as it was returned (with its
    /// `signature`).
    #[serde(default)]
    #[schemars(with = "Option<Response>")]
    pub paused: Option<Value>,
    /// Stateless runs: the turns before the paused one.
    #[serde(default)]
    #[schemars(with = "Vec<Turn>")]
    pub turns: Vec<Value>,
    /// Stateless runs: the agent the run was paused with. Runs on threads
    /// resume with the agent recorded with them; if given, it must be that
    /// same agent.
    #[serde(default)]
    pub agent: Option<AgentSpec>,
    /// Answer with server-sent events.
    #[serde(default)]
    pub stream: bool,
}

/// `POST /v1/threads/{id}/retry`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryRequest {
    /// The agent (default: the one that made the failed run).
    #[serde(default)]
    pub agent: Option<AgentSpec>,
    /// Answer with server-sent events.
    #[serde(default)]
    pub stream: bool,
}

/// `POST /v1/threads`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewThread {
    /// The application's data.
    #[serde(default)]
    pub metadata: Option<Value>,
}

/// `GET /v1/threads` paging.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListQuery {
    /// Start after this thread id.
    pub after: Option<String>,
    /// At most this many (default 50).
    pub limit: Option<u32>,
}

/// `DELETE /v1/threads/{id}` options.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteQuery {
    /// Operators: delete even while a run waits for decisions on the
    /// thread (one whose record is damaged cannot be decided).
    #[serde(default)]
    pub force: bool,
}

/// The agent a request names.
pub fn agent_for(state: &AppState, spec: &AgentSpec, path: &str) -> Result<Agent, ApiError> {
    match spec {
        AgentSpec::Named(name) => {
            state.agents.get(name).cloned().ok_or_else(|| {
                ApiError::invalid_request(format!("{path}: no agent named {name:?}"))
            })
        }
        AgentSpec::Inline(cfg) => {
            // Stored with its runs (their settings): it must read back.
            for (key, v) in &cfg.extra {
                parlance_format::within_depth(v, parlance_format::MAX_VALUE_DEPTH - 1)
                    .then_some(())
                    .ok_or_else(|| {
                        ApiError::invalid_request(format!(
                            "{path}.extra.{key}: nested deeper than {} levels of arrays and objects (the format's limit)",
                            parlance_format::MAX_VALUE_DEPTH
                        ))
                    })?;
            }
            inline_agent(state, cfg).map_err(|e| ApiError::invalid_request(format!("{path}.{e}")))
        }
    }
}

/// The input as messages.
pub fn input_messages(input: &InputSpec) -> Result<Vec<Message>, ApiError> {
    match input {
        InputSpec::Text(t) => Ok(vec![Message::user(t.clone())]),
        InputSpec::Messages(v) => {
            parlance_format::messages_from_value(&Value::Array(v.clone()), "input")
                .map_err(|e| ApiError::invalid_request(e.to_string()))
        }
    }
}

/// Earlier turns, read with their paths (the format's one reader of
/// turns, as in Python and Node).
pub fn turns(v: &[Value]) -> Result<Vec<Turn>, ApiError> {
    parlance_format::turns_from_value(&Value::Array(v.to_vec()), "turns")
        .map_err(|e| ApiError::invalid_request(e.to_string()))
}

/// A thread the caller may see (others get 404, as if it did not exist).
pub async fn owned_thread(
    state: &AppState,
    who: &Principal,
    id: &str,
) -> Result<parlance_store::Thread, ApiError> {
    let t = state.store.thread(id).await?;
    if !who.operator && t.owner != who.subject {
        return Err(ApiError::not_found(&format!("thread {id}")));
    }
    Ok(t)
}

/// What `who` may read of `value` (an answer, an event's data):
/// artifacts are for operators only; secrets for nobody.
pub fn outbound(state: &AppState, who: &Principal, mut value: Value) -> Value {
    if !who.operator {
        strip_artifacts(&mut value);
    }
    parlance_assemble::secrets::redact_value(&state.redactor, value)
}

fn strip_artifacts(v: &mut Value) {
    match v {
        Value::Object(m) => {
            if m.get("type").and_then(Value::as_str) == Some("tool_result")
                && let Some(Value::Object(r)) = m.get_mut("tool_result")
            {
                r.remove("artifact");
            }
            m.values_mut().for_each(strip_artifacts);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_artifacts),
        _ => {}
    }
}

/// An agent given in a request: a provider's model only. Local models
/// (files on the server) come from the configuration alone: a request may
/// name one only if a configured agent already uses it (then it shares
/// the loaded model). The answer is the same whether or not the file
/// exists, and no file is opened.
pub fn inline_agent(
    state: &AppState,
    a: &parlance_config::AgentConfig,
) -> Result<Agent, parlance_assemble::BuildError> {
    if a.prices.is_some() {
        // A request must not make the server read a file it names.
        return Err(parlance_assemble::BuildError::Prices(
            "set in the server's configuration, not in requests".into(),
        ));
    }
    if a.resume.is_some() {
        return Err(parlance_assemble::BuildError::Resume(
            "set in the server's configuration, not in requests (an agent given in a request is not known after its server died)".into(),
        ));
    }
    let one = |spec: &str| {
        if parlance_assemble::is_local(spec) {
            state.local_models.get(spec).cloned().ok_or_else(|| {
                parlance_assemble::BuildError::LocalNotConfigured { spec: spec.into() }
            })
        } else {
            parlance_assemble::remote_model(&state.config, spec)
        }
    };
    parlance_assemble::agent_with(
        &state.config,
        None,
        a,
        &parlance_assemble::Parts {
            http: &state.http,
            mcp: &state.mcp,
            one: &one,
            approval_keys: &state.signer.approval_keys(),
            cooldowns: Some(&state.cooldowns),
            built: Some(&state.agents),
        },
    )
}
