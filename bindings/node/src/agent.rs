//! The agent: built once from a model, its settings (read by the
//! bindings' shared reader, `parlance_bindings::settings`) and tools.
//! Every way to run is one work description (`parlance_bindings::Work`)
//! given to `run` (a promise of the response's canonical JSON, which the
//! package wraps in `Response`) or `stream` (events).

use std::sync::Arc;
use std::time::Duration;

use napi::Env;
use napi::bindgen_prelude::{AsyncBlock, Either, Either3, Function};
use napi_derive::napi;
use parlance::agent::ArgValidator;
use parlance::{Agent, Model, Tool, ToolContext};
use parlance_bindings::settings::{AgentSettings, GivenModel};
use parlance_bindings::toolset::{HostToolset, Listed};
use parlance_bindings::{Dialect, Events, Work, run};
use serde_json::Value;

use crate::checkpoint::NativeCheckpoint;
use crate::errors::{bind, config_error, parse, text_of};
use crate::host::{CallArgs, Host, RunTag, call_tool};
use crate::js_call::{Failure, JsFunction};
use crate::mcp::{Given, Hosted, NativeToolsetList};
use crate::models::NativeModel;
use crate::store::NativeStore;
use crate::stream::NativeStream;
use crate::task::run_promise;

/// A guardrail as the package describes it; its check stays in
/// JavaScript, reached through the agent's one guardrail caller by index.
#[napi(object)]
pub struct GuardDef {
    /// Its name.
    pub name: String,
    /// `input`, `toolCall` or `output`.
    pub point: String,
}

/// The agent's guardrails: each calls `judge` with `{index, check}`.
fn guardrails(
    defs: Vec<GuardDef>,
    judge: Arc<JsFunction>,
) -> napi::Result<Vec<parlance::Guardrail>> {
    defs.into_iter()
        .enumerate()
        .map(|(index, def)| {
            let at =
                parlance_bindings::guardrail::point(&def.point, Dialect::Node).map_err(bind)?;
            let judge = Arc::clone(&judge);
            let check = Arc::new(move |check: Value| {
                let judge = Arc::clone(&judge);
                let argument = serde_json::json!({"index": index, "check": check}).to_string();
                Box::pin(async move {
                    match judge.invoke(argument).await {
                        Ok(text) => serde_json::from_str::<Value>(&text)
                            .map_err(|e| format!("its verdict is not readable: {e}")),
                        Err(Failure::Thrown { name, message }) => {
                            Err(format!("threw {name}: {message}"))
                        }
                        Err(Failure::Gone(message)) => Err(message),
                    }
                }) as futures::future::BoxFuture<'static, Result<Value, String>>
            });
            Ok(parlance_bindings::guardrail::host_guardrail(
                &def.name,
                at,
                Dialect::Node,
                check,
            ))
        })
        .collect()
}

/// A tool as the package describes it; the function stays in JavaScript.
#[napi(object)]
pub struct ToolDef {
    /// The name the model calls it by.
    pub name: String,
    /// What the model reads about it.
    pub description: String,
    /// The input JSON Schema, as JSON text.
    pub schema: String,
    /// Its own timeout, in milliseconds.
    pub timeout_ms: Option<f64>,
    /// `"always"`, or `"predicate"` (the package asks the tool's function).
    pub needs_approval: Option<String>,
    /// Calls with invalid arguments it tolerates per run.
    pub max_invalid_arguments: Option<u32>,
}

/// A duration in milliseconds (a tool's own timeout).
fn millis(what: &str, ms: f64) -> napi::Result<Duration> {
    Dialect::Node
        .duration(what, &ms.into())
        .map_err(crate::errors::bind)
}

/// Compiles a tool's schema: an error names the tool (thrown where the
/// tool is defined, not when an agent is built).
#[napi(catch_unwind)]
pub fn check_tool_schema(name: String, schema: String) -> napi::Result<()> {
    let schema = parse(&format!("tool {name}: parameters"), &schema)?;
    ArgValidator::new(&name, &schema)
        .map(drop)
        .map_err(|e| config_error(format!("tool {name}: {e}")))
}

fn tool(host: &Arc<Host>, index: u32, def: ToolDef) -> napi::Result<Tool> {
    let schema = parse(&format!("tool {}: parameters", def.name), &def.schema)?;
    if def.name.is_empty() {
        return Err(config_error("a tool needs a name"));
    }
    let h = Arc::clone(host);
    let mut tool = Tool::new(
        def.name.clone(),
        def.description,
        move |args: Value, ctx: ToolContext| call_tool(Arc::clone(&h), index, args, ctx),
    )
    .with_schema(schema)
    // The function runs on Node's main thread: dropping the call at a
    // timeout aborts its AbortSignal but cannot stop the JavaScript.
    .detached();
    if let Some(ms) = def.timeout_ms {
        tool = tool.timeout(millis(&format!("tool {}: timeout", def.name), ms)?);
    }
    if let Some(n) = def.max_invalid_arguments {
        tool = tool.max_invalid_arguments(n);
    }
    match def.needs_approval.as_deref() {
        None => {}
        Some("always") => tool = tool.needs_approval(),
        Some("predicate") => {
            let h = Arc::clone(host);
            tool = tool.needs_approval_if(move |args| h.needs_approval(index, args));
        }
        Some(other) => {
            return Err(config_error(format!(
                "tool {}: needsApproval: unknown kind {other:?}",
                def.name
            )));
        }
    }
    Ok(tool)
}

/// A tool description as the package's toolset lists it (`tool._def()`).
fn tool_def(v: &Value) -> Result<ToolDef, String> {
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    Ok(ToolDef {
        name: text("name").ok_or("a tool without a name")?,
        description: text("description").unwrap_or_default(),
        schema: text("schema").ok_or("a tool without a schema")?,
        timeout_ms: v.get("timeoutMs").and_then(Value::as_f64),
        needs_approval: text("needsApproval"),
        max_invalid_arguments: v
            .get("maxInvalidArguments")
            .and_then(Value::as_u64)
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
    })
}

/// What the Standard Schema's `validate` said of a structured answer:
/// `null` (it fits) or `[{path, message}]`.
fn judged(answer: Result<String, Failure>) -> Result<(), Vec<String>> {
    let text = match answer {
        Ok(text) => text,
        Err(Failure::Thrown { name, message }) => {
            return Err(vec![format!(
                "(output): the schema's validate threw {name}: {message}"
            )]);
        }
        Err(Failure::Gone(message)) => return Err(vec![message]),
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Null) => Ok(()),
        Ok(problems) => {
            Err(parlance_bindings::output::problem_lines(&problems).unwrap_or_else(|e| vec![e]))
        }
        Err(e) => Err(vec![format!(
            "(output): the schema's issues are not readable: {e}"
        )]),
    }
}

/// A JavaScript toolset: asked (with the run's tag, for its `deps`)
/// before each model call; its tools are the agent's host's, by their
/// index in the package's registry of the agent's tools.
fn hosted_toolset(host: &Arc<Host>, h: &Hosted) -> HostToolset {
    let (host, f) = (Arc::clone(host), Arc::clone(&h.list));
    HostToolset::new(&h.name, h.prefix.clone(), move || {
        let (host, f) = (Arc::clone(&host), Arc::clone(&f));
        Box::pin(async move {
            let tag = parlance::agent::current_deps::<RunTag>().map_or(0, |t| t.0);
            let text = match f
                .invoke(serde_json::json!({ "tag": tag }).to_string())
                .await
            {
                Ok(text) => text,
                Err(Failure::Thrown { name, message }) => {
                    return Err(format!("its function threw {name}: {message}"));
                }
                Err(Failure::Gone(message)) => return Err(message),
            };
            let listed: Vec<Value> =
                serde_json::from_str(&text).map_err(|e| format!("its list is not JSON: {e}"))?;
            listed
                .iter()
                .map(|item| {
                    let index = item
                        .get("index")
                        .and_then(Value::as_u64)
                        .ok_or("a listed tool without its index")?;
                    let def = tool_def(item.get("def").unwrap_or(&Value::Null))?;
                    let tool = tool(&host, index as u32, def).map_err(|e| text_of(&e))?;
                    Ok(Listed {
                        key: index,
                        tool,
                        keep: Box::new(()),
                    })
                })
                .collect()
        })
    })
}

/// A model from a string or a `Model`.
pub fn model_from(model: Either<String, &NativeModel>) -> napi::Result<Arc<dyn Model>> {
    match model {
        Either::A(spec) => parlance::model(&spec).map_err(|e| bind(e.into())),
        Either::B(m) => Ok(Arc::clone(&m.model)),
    }
}

/// A list of models given to an agent, tried in order (a fallback): the
/// package adds each entry with its index, which its error names.
#[napi]
#[derive(Default)]
pub struct NativeModelList {
    models: Vec<Arc<dyn Model>>,
}

#[napi]
impl NativeModelList {
    /// An empty list.
    #[napi(constructor)]
    pub fn new() -> Self {
        NativeModelList::default()
    }

    /// Adds entry `index`: a model string or a `Model`.
    #[napi(catch_unwind)]
    pub fn push(&mut self, model: Either<String, &NativeModel>, index: u32) -> napi::Result<()> {
        let m = match model {
            Either::A(spec) => parlance::model(&spec).map_err(|e| {
                let mut e: parlance_bindings::BindError = e.into();
                e.text = format!("model[{index}]: {}", e.text);
                bind(e)
            })?,
            Either::B(m) => Arc::clone(&m.model),
        };
        self.models.push(m);
        Ok(())
    }
}

/// An agent of the Rust core (the package's `Agent` wraps it).
#[napi]
pub struct NativeAgent {
    agent: Agent,
}

/// Other agents given to an agent: as its tools (`agent.asTool(...)`)
/// and as agents it may hand the conversation to (`handoffs`), in order.
#[napi]
#[derive(Default)]
pub struct NativeAgentLinks {
    tools: Vec<parlance::Tool>,
    handoffs: Vec<Agent>,
}

#[napi]
impl NativeAgentLinks {
    /// An empty list.
    #[napi(constructor)]
    pub fn new() -> Self {
        NativeAgentLinks::default()
    }

    /// Adds an agent this one may hand the conversation to.
    #[napi]
    pub fn push_handoff(&mut self, agent: &NativeAgent) {
        self.handoffs.push(agent.agent.clone());
    }

    /// Adds `agent` as the tool `name`, described by `description`, its
    /// calls' timeout `timeout_ms` (else the caller's tool timeout).
    #[napi(catch_unwind)]
    pub fn push(
        &mut self,
        agent: &NativeAgent,
        name: String,
        description: String,
        timeout_ms: Option<f64>,
    ) -> napi::Result<()> {
        if name.is_empty() {
            return Err(bind(parlance_bindings::BindError::config(
                "asTool: a tool needs a name",
            )));
        }
        let mut tool = agent.agent.as_tool(name, description);
        if let Some(ms) = timeout_ms {
            if !(ms.is_finite() && ms > 0.0) {
                return Err(bind(parlance_bindings::BindError::config(format!(
                    "asTool: timeout must be a positive number of milliseconds, got {ms}"
                ))));
            }
            tool = tool.timeout(std::time::Duration::from_secs_f64(ms / 1000.0));
        }
        self.tools.push(tool);
        Ok(())
    }
}

#[napi]
impl NativeAgent {
    /// Builds the agent; `call`, `abort` and `approve` are the package's
    /// dispatcher functions (see `host.rs`).
    #[napi(constructor, catch_unwind)]
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        settings: String,
        model: Either3<String, &NativeModel, &NativeModelList>,
        tools: Vec<ToolDef>,
        call: Function<'_, CallArgs, ()>,
        abort: Function<'_, i64, ()>,
        approve: Function<'_, (u32, String), bool>,
        toolsets: Option<&NativeToolsetList>,
        output_check: Option<Function<'_, (i64, String), ()>>,
        output_check_abort: Option<Function<'_, i64, ()>>,
        guards: Option<Vec<GuardDef>>,
        guard_check: Option<Function<'_, (i64, String), ()>>,
        guard_abort: Option<Function<'_, i64, ()>>,
        context_model: Option<Either<String, &NativeModel>>,
        shared_cooldowns: Option<&crate::store::NativeStore>,
        links: Option<&NativeAgentLinks>,
    ) -> napi::Result<Self> {
        let mut s = AgentSettings::read(&parse("agent settings", &settings)?, Dialect::Node)
            .map_err(bind)?;
        if let Some(store) = shared_cooldowns {
            s.share_cooldowns(store.store.clone());
        }
        if let Some(m) = context_model {
            s.takes_context_model().map_err(bind)?;
            let m = match m {
                Either::A(spec) => parlance::model(&spec).map_err(|e| {
                    let mut e: parlance_bindings::BindError = e.into();
                    e.text = format!("context.model: {}", e.text);
                    bind(e)
                })?,
                Either::B(m) => Arc::clone(&m.model),
            };
            s.context_model(m).map_err(bind)?;
        }
        let host = Host::new(call, abort, approve)?;
        let given = match model {
            Either3::A(spec) => GivenModel::One(model_from(Either::A(spec))?),
            Either3::B(m) => GivenModel::One(Arc::clone(&m.model)),
            Either3::C(list) => GivenModel::List(list.models.clone()),
        };
        let model = s.model(given, Dialect::Node).map_err(bind)?;
        let mut b = s.builder(model);
        for (i, def) in tools.into_iter().enumerate() {
            b = b.tool(tool(&host, i as u32, def)?);
        }
        if let Some(links) = links {
            for t in &links.tools {
                b = b.tool(t.clone());
            }
            for a in &links.handoffs {
                b = b.handoff(a.clone());
            }
        }
        for given in toolsets.map(|t| t.toolsets.as_slice()).unwrap_or_default() {
            match given {
                Given::Mcp(server) => b = b.toolset(server.clone()),
                Given::Hosted(h) => b = b.toolset(hosted_toolset(&host, h)),
            }
        }
        if let (Some(call), Some(abort)) = (output_check, output_check_abort) {
            let f = Arc::new(JsFunction::new(call, abort, "outputSchema".into())?);
            b = b.output_validator(move |v| {
                let f = Arc::clone(&f);
                Box::pin(async move { judged(f.invoke(v.to_string()).await) })
            });
        }
        if let (Some(defs), Some(call), Some(abort)) = (guards, guard_check, guard_abort) {
            let judge = Arc::new(JsFunction::new(call, abort, "guardrail".into())?);
            for g in guardrails(defs, judge)? {
                b = b.guardrail(g);
            }
        }
        let agent = b.build().map_err(|e| config_error(e.to_string()))?;
        Ok(NativeAgent { agent })
    }

    /// The agent's settings as recorded with each run (JSON text).
    #[napi(getter)]
    pub fn settings(&self) -> String {
        self.agent.settings().to_string()
    }

    /// Runs `work` (JSON text: see `parlance_bindings::Work::read`; with
    /// `store`, on a stored thread): a promise of the response's
    /// canonical JSON. Refused decisions reject with a `DecisionError`.
    #[napi(catch_unwind)]
    pub fn run(
        &self,
        env: &Env,
        tag: u32,
        work: String,
        store: Option<&NativeStore>,
        cancellable: Option<bool>,
        checkpoint: Option<&NativeCheckpoint>,
    ) -> napi::Result<AsyncBlock<String>> {
        let work = self.work(&work, store, checkpoint)?;
        let agent = self.agent.with_deps(RunTag(tag));
        run_promise(env, tag, cancellable.unwrap_or(false), async move {
            let response = run::complete(&agent, work).await.map_err(bind)?;
            Ok(parlance::format::to_json(&response))
        })
    }

    /// `work` as a stream of events, started on the first pull.
    #[napi(catch_unwind)]
    pub fn stream(
        &self,
        tag: u32,
        work: String,
        store: Option<&NativeStore>,
        checkpoint: Option<&NativeCheckpoint>,
    ) -> napi::Result<NativeStream> {
        let work = self.work(&work, store, checkpoint)?;
        let agent = self.agent.with_deps(RunTag(tag));
        Ok(NativeStream::new(Events::lazy(agent, work)))
    }
}

impl NativeAgent {
    fn work(
        &self,
        text: &str,
        store: Option<&NativeStore>,
        checkpoint: Option<&NativeCheckpoint>,
    ) -> napi::Result<Work> {
        let v = parse("work", text)?;
        let work = Work::read(&v, store.map(|s| s.store.clone()), Dialect::Node).map_err(bind)?;
        match checkpoint {
            Some(c) => work
                .checkpoint(Arc::clone(&c.checkpoint), Dialect::Node)
                .map_err(bind),
            None => Ok(work),
        }
    }
}
