//! The agent: built once from a model, its settings (read by the
//! bindings' shared reader, `parlance_bindings::settings`) and tools.
//! Every way to run is one [`PyWork`] (built by `Work.run`, `Work.resume`,
//! `Work.on_thread`...) given to one of three entries: `run` (an
//! awaitable), `run_blocking` (waited for with the GIL released) and
//! `stream` (an async iterator of events).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use parlance::{Agent, Model, OnToolException, RunInput};
use parlance_bindings::settings::{AgentSettings, GivenModel};
use parlance_bindings::{Dialect, Events, ThreadJob, Work, run};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::convert::{from_py, to_py};
use crate::errors::{bind_error, bind_error_attached, config_error};
use crate::events::PyRunStream;
use crate::input;
use crate::mcp::PyMcpServer;
use crate::models::PyModel;
use crate::outcome::finish;
use crate::response::PyResponse;
use crate::runtime::{awaitable, block_on, copy_context, running_loop};
use crate::store::PyStore;
use crate::tools::{PyTool, RunCtx};
use crate::toolset::PyToolset;

/// An agent of the Rust core (``parlance.Agent`` wraps it).
#[pyclass(module = "parlance._core", name = "Agent", frozen)]
pub struct PyAgent {
    agent: Agent,
    output_type: Option<Py<PyAny>>,
    keep_failures: bool,
    has_async_tools: bool,
}

/// A model from a string or a `Model`.
pub fn model_from(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<Arc<dyn Model>> {
    if let Some(m) = crate::model_host::python_model(py, model)? {
        return Ok(m);
    }
    if let Ok(m) = model.cast::<PyModel>() {
        return Ok(Arc::clone(&m.get().model));
    }
    if let Ok(s) = model.cast::<PyString>() {
        return parlance::model(&s.to_cow()?).map_err(|e| bind_error(py, e.into()));
    }
    Err(config_error(
        py,
        format!(
            "model: expected a model string (\"openai:gpt-4o-mini\") or a Model, got {}",
            crate::convert::type_name(model)
        ),
    ))
}

/// An agent's model: one (a string or a `Model`), or a list or tuple of
/// them, tried in order (a fallback; an entry's error names its index);
/// and whether any of them is an `async def` model.
fn given_model(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<(GivenModel, bool)> {
    if !(model.is_instance_of::<PyList>() || model.is_instance_of::<PyTuple>()) {
        let wants_loop = crate::model_host::wants_loop(py, model);
        return Ok((GivenModel::One(model_from(py, model)?), wants_loop));
    }
    let mut models = Vec::new();
    let mut wants_loop = false;
    for (i, item) in model.try_iter()?.enumerate() {
        let item = item?;
        wants_loop |= crate::model_host::wants_loop(py, &item);
        let m = model_from(py, &item)
            .map_err(|e| config_error(py, format!("model[{i}]: {}", e.value(py))))?;
        models.push(m);
    }
    Ok((GivenModel::List(models), wants_loop))
}

/// The run's check of a structured answer: the package's pydantic check
/// (``value -> None | [{path, message}]``), on a worker thread with the
/// GIL. What it raises is a problem the model reads too.
fn output_validator(
    check: Py<PyAny>,
) -> impl Fn(serde_json::Value) -> futures::future::BoxFuture<'static, Result<(), Vec<String>>>
+ Send
+ Sync
+ 'static {
    let check = Arc::new(check);
    move |value| {
        let check = Arc::clone(&check);
        Box::pin(async move {
            let judged = tokio::task::spawn_blocking(move || {
                Python::attach(|py| -> Result<(), Vec<String>> {
                    let raised = |e: PyErr| vec![format!("(output): the validator raised {e}")];
                    let v = to_py(py, &value).map_err(raised)?;
                    let out = check.bind(py).call1((v,)).map_err(raised)?;
                    if out.is_none() {
                        return Ok(());
                    }
                    let problems = from_py(&out, "(problems)").map_err(raised)?;
                    Err(parlance_bindings::output::problem_lines(&problems)
                        .unwrap_or_else(|e| vec![e]))
                })
            })
            .await;
            judged.unwrap_or_else(|e| Err(vec![format!("(output): the validator failed: {e}")]))
        })
    }
}

/// What a run does, built once and given to `Agent.run`, `run_blocking`
/// or `stream` (which take it: a work runs once).
#[pyclass(module = "parlance._core", name = "Work", frozen)]
pub struct PyWork(Mutex<Option<Work>>);

impl PyWork {
    fn new(w: Work) -> PyWork {
        PyWork(Mutex::new(Some(w)))
    }

    fn take(&self, py: Python<'_>) -> PyResult<Work> {
        self.0
            .lock()
            .expect("not poisoned")
            .take()
            .ok_or_else(|| config_error(py, "work: already run (build a new one for each run)"))
    }
}

fn thread(store: &PyStore, job: ThreadJob) -> PyWork {
    PyWork::new(Work::Thread {
        store: store.store.clone(),
        job,
    })
}

fn run_input(
    py: Python<'_>,
    input: Option<&Bound<'_, PyAny>>,
    turns: Option<&Bound<'_, PyAny>>,
    run_id: Option<String>,
    thread_id: Option<String>,
) -> PyResult<RunInput> {
    let mut run = match input {
        Some(i) => input::run_input(py, i)?,
        None => RunInput::default(),
    };
    run.turns = input::turns(py, turns)?;
    run.run_id = run_id;
    run.thread_id = thread_id;
    Ok(run)
}

#[pymethods]
impl PyWork {
    /// A new run: input, earlier turns, ids.
    #[staticmethod]
    #[pyo3(signature = (input, *, turns = None, run_id = None, thread_id = None))]
    fn run(
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        turns: Option<&Bound<'_, PyAny>>,
        run_id: Option<String>,
        thread_id: Option<String>,
    ) -> PyResult<PyWork> {
        Ok(PyWork::new(Work::Run(run_input(
            py,
            Some(input),
            turns,
            run_id,
            thread_id,
        )?)))
    }

    /// A failed run again from its history (the failed turn last).
    #[staticmethod]
    #[pyo3(signature = (turns, *, run_id = None, thread_id = None))]
    fn retry(
        py: Python<'_>,
        turns: &Bound<'_, PyAny>,
        run_id: Option<String>,
        thread_id: Option<String>,
    ) -> PyResult<PyWork> {
        Ok(PyWork::new(Work::Retry(run_input(
            py,
            None,
            Some(turns),
            run_id,
            thread_id,
        )?)))
    }

    /// Decisions for a paused run (a `Response`, its dict or its JSON).
    #[staticmethod]
    #[pyo3(signature = (paused, decisions, *, turns = None))]
    fn resume(
        py: Python<'_>,
        paused: &Bound<'_, PyAny>,
        decisions: &Bound<'_, PyAny>,
        turns: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyWork> {
        Ok(PyWork::new(Work::Resume(Box::new(parlance::Resume {
            turns: input::turns(py, turns)?,
            paused: input::paused(py, paused)?,
            decisions: input::decisions(py, decisions)?,
        }))))
    }

    /// New input on a stored thread.
    #[staticmethod]
    fn on_thread(
        py: Python<'_>,
        store: PyRef<'_, PyStore>,
        thread_id: String,
        input: &Bound<'_, PyAny>,
    ) -> PyResult<PyWork> {
        let input = input::run_input(py, input)?.input;
        Ok(thread(
            &store,
            ThreadJob::Run {
                thread: thread_id,
                input,
            },
        ))
    }

    /// The thread's last run again (refused unless it failed).
    #[staticmethod]
    fn retry_thread(store: PyRef<'_, PyStore>, thread_id: String) -> PyWork {
        thread(&store, ThreadJob::Retry { thread: thread_id })
    }

    /// A run whose process died, taken over and carried on from its last
    /// committed step.
    #[staticmethod]
    #[pyo3(signature = (store, run_id, max_attempts = 3))]
    fn carry_on(
        py: Python<'_>,
        store: PyRef<'_, PyStore>,
        run_id: String,
        max_attempts: i64,
    ) -> PyResult<PyWork> {
        let Some(max_attempts) = u32::try_from(max_attempts)
            .ok()
            .filter(|n| (1..=1000).contains(n))
        else {
            return Err(config_error(
                py,
                format!("max_attempts: expected a whole number from 1 to 1000, got {max_attempts}"),
            ));
        };
        Ok(thread(
            &store,
            ThreadJob::CarryOn {
                run: run_id,
                max_attempts,
            },
        ))
    }

    /// Decisions for a run paused on a stored thread (from any process).
    #[staticmethod]
    fn resume_thread(
        py: Python<'_>,
        store: PyRef<'_, PyStore>,
        run_id: String,
        decisions: &Bound<'_, PyAny>,
    ) -> PyResult<PyWork> {
        let decisions = input::decisions(py, decisions)?;
        Ok(thread(
            &store,
            ThreadJob::Resume {
                run: run_id,
                decisions,
            },
        ))
    }
}

#[pymethods]
impl PyAgent {
    /// ``settings``: the agent's settings as a dict (``instructions``,
    /// ``tool_timeout`` in seconds, ... — see ``parlance.Agent``).
    #[new]
    #[pyo3(signature = (model, tools, settings, output_type = None, toolsets = Vec::new(), *, output_check = None, guardrails = Vec::new(), context_model = None, shared_cooldowns = None, handoffs = Vec::new()))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn new(
        py: Python<'_>,
        model: &Bound<'_, PyAny>,
        tools: Vec<PyRef<'_, PyTool>>,
        settings: &Bound<'_, PyAny>,
        output_type: Option<Py<PyAny>>,
        toolsets: Vec<Bound<'_, PyAny>>,
        output_check: Option<Py<PyAny>>,
        guardrails: Vec<PyRef<'_, crate::guardrail::PyGuardrail>>,
        context_model: Option<Bound<'_, PyAny>>,
        shared_cooldowns: Option<PyRef<'_, crate::store::PyStore>>,
        handoffs: Vec<PyRef<'_, PyAgent>>,
    ) -> PyResult<Self> {
        let mut settings = AgentSettings::read(&from_py(settings, "settings")?, Dialect::Python)
            .map_err(|e| bind_error(py, e))?;
        if let Some(store) = shared_cooldowns {
            settings.share_cooldowns(store.store.clone());
        }
        if let Some(m) = context_model {
            settings
                .takes_context_model()
                .map_err(|e| bind_error(py, e))?;
            let m = model_from(py, &m)
                .map_err(|e| config_error(py, format!("context.model: {}", e.value(py))))?;
            settings.context_model(m).map_err(|e| bind_error(py, e))?;
        }
        let keep_failures = settings.limits.on_tool_exception == OnToolException::Fail;
        let (given, wants_loop) = given_model(py, model)?;
        // An `async def` model runs on the caller's loop too.
        // A toolset's tools (or its function) may be `async def`.
        let has_async_tools = tools.iter().any(|t| t.is_async)
            || wants_loop
            || toolsets.iter().any(|t| t.is_instance_of::<PyToolset>())
            || guardrails.iter().any(|g| g.is_async)
            // A run handed over goes on with the other agent's tools.
            || handoffs.iter().any(|h| h.has_async_tools);
        let model = settings
            .model(given, Dialect::Python)
            .map_err(|e| bind_error(py, e))?;
        let mut b = settings.builder(model);
        for t in &tools {
            b = b.tool(t.tool.clone());
        }
        for (i, t) in toolsets.iter().enumerate() {
            if let Ok(s) = t.cast::<PyMcpServer>() {
                b = b.toolset(s.get().server.clone());
            } else if let Ok(s) = t.cast::<PyToolset>() {
                b = b.toolset(Arc::clone(&s.get().toolset));
            } else {
                return Err(config_error(
                    py,
                    format!(
                        "toolsets[{i}]: expected an McpServer or a Toolset, got {}",
                        crate::convert::type_name(t)
                    ),
                ));
            }
        }
        if let Some(check) = output_check {
            b = b.output_validator(output_validator(check));
        }
        for g in &guardrails {
            b = b.guardrail(g.guardrail.clone());
        }
        for h in &handoffs {
            b = b.handoff(h.agent.clone());
        }
        let agent = b.build().map_err(|e| config_error(py, e.to_string()))?;
        Ok(PyAgent {
            agent,
            output_type,
            keep_failures,
            has_async_tools,
        })
    }

    /// Whether any tool is an ``async def`` (such a run needs an event loop).
    #[getter]
    fn has_async_tools(&self) -> bool {
        self.has_async_tools
    }

    /// This agent as a tool of another, ``name`` described by
    /// ``description`` (see ``parlance.Agent.as_tool``).
    #[pyo3(signature = (name, description, timeout = None))]
    fn as_tool(
        &self,
        py: Python<'_>,
        name: String,
        description: String,
        timeout: Option<f64>,
    ) -> PyResult<crate::tools::PyTool> {
        if name.is_empty() {
            return Err(config_error(py, "as_tool: a tool needs a name"));
        }
        let mut tool = self.agent.as_tool(name, description);
        if let Some(t) = timeout {
            tool = crate::tools::with_timeout(py, tool, t)?;
        }
        // Its run needs the parent's event loop when its own tools do.
        Ok(crate::tools::PyTool {
            tool,
            is_async: self.has_async_tools,
        })
    }

    /// The agent's settings as recorded with each run.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.agent.settings())
    }

    /// Runs ``work``: an awaitable of its ``Response`` (a failed run
    /// raises ``RunError``; refused decisions ``DecisionError``).
    #[pyo3(signature = (work, *, deps = None, checkpoint = None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        work: &PyWork,
        deps: Option<Py<PyAny>>,
        checkpoint: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (work, ctx) = self.prepare(py, work, deps, checkpoint, true)?;
        let (agent, output_type) = (self.agent.with_deps(Arc::clone(&ctx)), self.output_type());
        awaitable(py, "agent.run()", async move {
            let response = run::complete(&agent, work).await;
            Python::attach(|py| match response {
                Ok(r) => finish(py, r, &ctx, output_type),
                Err(e) => Err(bind_error(py, e)),
            })
        })
    }

    /// ``run``, waited for with the GIL released (no event loop: ``def``
    /// tools only).
    #[pyo3(signature = (work, *, deps = None, checkpoint = None))]
    fn run_blocking(
        &self,
        py: Python<'_>,
        work: &PyWork,
        deps: Option<Py<PyAny>>,
        checkpoint: Option<Py<PyAny>>,
    ) -> PyResult<PyResponse> {
        let (work, ctx) = self.prepare(py, work, deps, checkpoint, false)?;
        let agent = self.agent.with_deps(Arc::clone(&ctx));
        let response = block_on(py, async move {
            run::complete(&agent, work)
                .await
                .map_err(bind_error_attached)
        })?;
        finish(py, response, &ctx, self.output_type())
    }

    /// ``work`` as an async iterator of events (refused decisions of a
    /// stateless resume raise here; a thread's, at the first event).
    #[pyo3(signature = (work, *, deps = None, checkpoint = None))]
    fn stream(
        &self,
        py: Python<'_>,
        work: &PyWork,
        deps: Option<Py<PyAny>>,
        checkpoint: Option<Py<PyAny>>,
    ) -> PyResult<PyRunStream> {
        let (work, ctx) = self.prepare(py, work, deps, checkpoint, true)?;
        let agent = self.agent.with_deps(Arc::clone(&ctx));
        let _rt = crate::runtime::runtime().enter();
        let events = Events::start(agent, work).map_err(|e| bind_error(py, e))?;
        Ok(PyRunStream::new(events, ctx, self.output_type()))
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.agent)
    }
}

impl PyAgent {
    fn output_type(&self) -> Option<Py<PyAny>> {
        Python::attach(|py| self.output_type.as_ref().map(|t| t.clone_ref(py)))
    }

    /// The work and its run's context, with the checkpoint function
    /// (when given) receiving each step.
    fn prepare(
        &self,
        py: Python<'_>,
        work: &PyWork,
        deps: Option<Py<PyAny>>,
        checkpoint: Option<Py<PyAny>>,
        with_loop: bool,
    ) -> PyResult<(Work, Arc<RunCtx>)> {
        let work = work.take(py)?;
        let Some(f) = checkpoint else {
            return Ok((work, self.ctx(py, deps, with_loop, false)?));
        };
        if !f.bind(py).is_callable() {
            return Err(config_error(
                py,
                format!(
                    "checkpoint: expected a function of each step, got {}",
                    crate::convert::type_name(f.bind(py))
                ),
            ));
        }
        let is_async = crate::checkpoint::is_async(py, f.bind(py))?;
        let ctx = self.ctx(py, deps, with_loop, is_async)?;
        let c = crate::checkpoint::checkpoint(f, is_async, Arc::clone(&ctx));
        let work = work
            .checkpoint(c, Dialect::Python)
            .map_err(|e| bind_error(py, e))?;
        Ok((work, ctx))
    }

    /// The run's context for its tools: with `with_loop`, the running
    /// loop and the caller's context variables (async tools, and an
    /// async checkpoint when `async_checkpoint`, run there).
    pub fn ctx(
        &self,
        py: Python<'_>,
        deps: Option<Py<PyAny>>,
        with_loop: bool,
        async_checkpoint: bool,
    ) -> PyResult<Arc<RunCtx>> {
        let (event_loop, context) = if with_loop && (self.has_async_tools || async_checkpoint) {
            (
                Some(running_loop(py, "agent.run()")?.unbind()),
                Some(copy_context(py)?.unbind()),
            )
        } else {
            (None, None)
        };
        Ok(Arc::new(RunCtx {
            event_loop,
            context,
            deps,
            keep_failures: self.keep_failures,
            failures: Mutex::new(HashMap::new()),
        }))
    }
}
