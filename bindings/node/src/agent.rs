//! The agent: built once from a model, instructions, tools and limits.
//! Each run is a future on the runtime, handed to JavaScript as a promise
//! of the response's canonical JSON (the package wraps it in `Response`),
//! or read as events (`stream`).

use std::sync::Arc;
use std::time::Duration;

use napi::Env;
use napi::bindgen_prelude::{AsyncBlock, Either, Function};
use napi_derive::napi;
use parlance::agent::ArgValidator;
use parlance::{Agent, Limits, Model, ModelOptions, OnToolException, Resume, Tool, ToolContext};
use serde_json::Value;

use crate::errors::{build_error, config_error, decision_error, parse};
use crate::host::{CallArgs, Host, RunTag, call_tool};
use crate::input;
use crate::models::NativeModel;
use crate::stream::NativeStream;
use crate::task::run_promise;

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

/// How a run is started (besides its input).
#[napi(object)]
pub struct RunOptions {
    /// Earlier turns, as JSON text of a list.
    pub turns: Option<String>,
    /// The run's id.
    pub run_id: Option<String>,
    /// The thread the run belongs to.
    pub thread_id: Option<String>,
    /// Whether `cancelRun(tag)` may stop it.
    pub cancellable: Option<bool>,
}

/// Settings of an agent (JSON from the package, camelCase).
struct Settings {
    name: Option<String>,
    instructions: Option<String>,
    limits: Limits,
    options: ModelOptions,
    output_schema: Option<(String, Value)>,
}

fn millis(what: &str, v: &Value) -> napi::Result<Duration> {
    match v.as_f64() {
        Some(ms) if ms.is_finite() && ms > 0.0 => Ok(Duration::from_secs_f64(ms / 1000.0)),
        _ => Err(config_error(format!(
            "{what}: expected a positive number of milliseconds, got {v}"
        ))),
    }
}

fn count(what: &str, v: &Value, min: u64) -> napi::Result<u32> {
    match v.as_u64() {
        Some(n) if n >= min && n <= u64::from(u32::MAX) => Ok(n as u32),
        _ => Err(config_error(format!(
            "{what}: expected a whole number of at least {min}, got {v}"
        ))),
    }
}

/// `onToolException`, in either spelling.
pub fn policy(v: &Value) -> napi::Result<OnToolException> {
    match v.as_str() {
        Some("returnToModel" | "return_to_model") => Ok(OnToolException::ReturnToModel),
        Some("returnGeneric" | "return_generic") => Ok(OnToolException::ReturnGeneric),
        Some("fail") => Ok(OnToolException::Fail),
        _ => Err(config_error(format!(
            "onToolException: expected one of \"returnToModel\", \"returnGeneric\", \"fail\" (or their snake_case spellings), got {v}"
        ))),
    }
}

impl Settings {
    fn read(text: &str) -> napi::Result<Settings> {
        let v = parse("agent settings", text)?;
        let Value::Object(map) = v else {
            return Err(config_error("agent settings: expected an object"));
        };
        let mut s = Settings {
            name: None,
            instructions: None,
            limits: Limits::default(),
            options: ModelOptions::default(),
            output_schema: None,
        };
        for (key, v) in &map {
            if v.is_null() {
                continue;
            }
            match key.as_str() {
                "name" => s.name = Some(string(key, v)?),
                "instructions" => s.instructions = Some(string(key, v)?),
                "onToolException" => s.limits.on_tool_exception = policy(v)?,
                "toolTimeout" => s.limits.tool_timeout = millis(key, v)?,
                "maxModelCalls" => s.limits.max_model_calls = count(key, v, 1)?,
                "maxInvalidArguments" => s.limits.max_invalid_arguments = count(key, v, 0)?,
                "toolConcurrency" => s.limits.tool_concurrency = Some(count(key, v, 1)? as usize),
                "modelSettings" => {
                    s.options = serde_json::from_value(v.clone())
                        .map_err(|e| config_error(format!("modelSettings: {e}")))?
                }
                "outputSchema" => {
                    let name = v.get("name").and_then(Value::as_str).unwrap_or("output");
                    let Some(schema) = v.get("schema").filter(|s| s.is_object()) else {
                        return Err(config_error(
                            "outputSchema: expected {name?, schema} with a JSON Schema object",
                        ));
                    };
                    s.output_schema = Some((name.to_string(), schema.clone()));
                }
                other => {
                    return Err(config_error(format!(
                        "agent settings: unknown setting {other:?}"
                    )));
                }
            }
        }
        Ok(s)
    }
}

fn string(what: &str, v: &Value) -> napi::Result<String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| config_error(format!("{what}: expected a string, got {v}")))
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
        tool = tool.timeout(millis(&format!("tool {}: timeout", def.name), &ms.into())?);
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

/// A model from a string or a `Model`.
pub fn model_from(model: Either<String, &NativeModel>) -> napi::Result<Arc<dyn Model>> {
    match model {
        Either::A(spec) => parlance::model(&spec).map_err(|e| build_error(&e)),
        Either::B(m) => Ok(Arc::clone(&m.model)),
    }
}

/// An agent of the Rust core (the package's `Agent` wraps it).
#[napi]
pub struct NativeAgent {
    agent: Agent,
}

#[napi]
impl NativeAgent {
    /// Builds the agent; `call`, `abort` and `approve` are the package's
    /// dispatcher functions (see `host.rs`).
    #[napi(constructor, catch_unwind)]
    pub fn new(
        settings: String,
        model: Either<String, &NativeModel>,
        tools: Vec<ToolDef>,
        call: Function<'_, CallArgs, ()>,
        abort: Function<'_, i64, ()>,
        approve: Function<'_, (u32, String), bool>,
    ) -> napi::Result<Self> {
        let s = Settings::read(&settings)?;
        let host = Host::new(call, abort, approve)?;
        let mut b = Agent::builder(model_from(model)?)
            .limits(s.limits)
            .options(s.options);
        if let Some(i) = s.instructions {
            b = b.instructions(i);
        }
        if let Some(n) = s.name {
            b = b.name(n);
        }
        if let Some((name, schema)) = s.output_schema {
            b = b.output_schema(name, schema);
        }
        for (i, def) in tools.into_iter().enumerate() {
            b = b.tool(tool(&host, i as u32, def)?);
        }
        let agent = b.build().map_err(|e| config_error(e.to_string()))?;
        Ok(NativeAgent { agent })
    }

    /// The agent's settings as recorded with each run (JSON text).
    #[napi(getter)]
    pub fn settings(&self) -> String {
        self.agent.settings().to_string()
    }

    /// A run: a promise of the response's canonical JSON.
    #[napi(catch_unwind)]
    pub fn run(
        &self,
        env: &Env,
        tag: u32,
        input: String,
        options: RunOptions,
    ) -> napi::Result<AsyncBlock<String>> {
        let cancellable = options.cancellable.unwrap_or(false);
        let input = self.input(&input, options)?;
        let agent = self.agent.with_deps(RunTag(tag));
        run_promise(env, tag, cancellable, async move {
            let response = agent.run(input).await;
            Ok(parlance::format::to_json(&response))
        })
    }

    /// A run as a stream of events.
    #[napi(catch_unwind)]
    pub fn stream(
        &self,
        tag: u32,
        input: String,
        options: RunOptions,
    ) -> napi::Result<NativeStream> {
        let input = self.input(&input, options)?;
        let agent = self.agent.with_deps(RunTag(tag));
        Ok(NativeStream::new(move || Ok(agent.run(input).stream())))
    }

    /// Applies decisions to a paused run and goes on: a promise of the
    /// response's JSON; refused decisions reject with a `DecisionError`.
    #[napi(catch_unwind)]
    pub fn resume(
        &self,
        env: &Env,
        tag: u32,
        paused: String,
        decisions: String,
        turns: Option<String>,
        cancellable: Option<bool>,
    ) -> napi::Result<AsyncBlock<String>> {
        let resume = resume_of(&paused, &decisions, turns.as_deref())?;
        let agent = self.agent.with_deps(RunTag(tag));
        run_promise(env, tag, cancellable.unwrap_or(false), async move {
            let response = agent.resume(resume).await.map_err(|e| decision_error(&e))?;
            Ok(parlance::format::to_json(&response))
        })
    }

    /// `resume` as a stream of events.
    #[napi(catch_unwind)]
    pub fn resume_stream(
        &self,
        tag: u32,
        paused: String,
        decisions: String,
        turns: Option<String>,
    ) -> napi::Result<NativeStream> {
        let resume = resume_of(&paused, &decisions, turns.as_deref())?;
        let agent = self.agent.with_deps(RunTag(tag));
        Ok(NativeStream::new(move || {
            agent
                .resume(resume)
                .stream()
                .map_err(|e| decision_error(&e))
        }))
    }
}

impl NativeAgent {
    fn input(&self, input: &str, options: RunOptions) -> napi::Result<parlance::RunInput> {
        let mut run = input::run_input(input)?;
        run.turns = input::turns(options.turns.as_deref())?;
        run.run_id = options.run_id;
        run.thread_id = options.thread_id;
        Ok(run)
    }

    /// The Rust agent, for runs on a thread, carrying the run's tag.
    pub fn tagged(&self, tag: u32) -> Agent {
        self.agent.with_deps(RunTag(tag))
    }
}

fn resume_of(paused: &str, decisions: &str, turns: Option<&str>) -> napi::Result<Resume> {
    Ok(Resume {
        turns: input::turns(turns)?,
        paused: input::paused(paused)?,
        decisions: input::decisions(decisions)?,
    })
}
