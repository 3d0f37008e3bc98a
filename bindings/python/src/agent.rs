//! The agent: built once from a model, instructions, tools and limits;
//! each run is a future on the runtime, handed to Python as an awaitable
//! (`run`), waited for with the GIL released (`run_blocking`), or read as
//! events (`stream`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use parlance::{Agent, Limits, Model, ModelOptions, OnToolException, Resume, RunInput};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::convert::{from_py, to_py};
use crate::errors::{build_error, config_error, decision_error};
use crate::events::PyRunStream;
use crate::input;
use crate::models::PyModel;
use crate::outcome::finish;
use crate::response::PyResponse;
use crate::runtime::{awaitable, block_on, copy_context, running_loop};
use crate::store::{PyStore, ThreadWork, on_thread};
use crate::tools::{PyTool, RunCtx};

/// An agent of the Rust core (``parlance.Agent`` wraps it).
#[pyclass(module = "parlance._core", name = "Agent", frozen)]
pub struct PyAgent {
    agent: Agent,
    output_type: Option<Py<PyAny>>,
    keep_failures: bool,
    has_async_tools: bool,
}

fn policy(py: Python<'_>, s: &str) -> PyResult<OnToolException> {
    match s {
        "return_to_model" => Ok(OnToolException::ReturnToModel),
        "return_generic" => Ok(OnToolException::ReturnGeneric),
        "fail" => Ok(OnToolException::Fail),
        other => Err(config_error(
            py,
            format!(
                "on_tool_exception: expected one of return_to_model, return_generic, fail, got {other:?}"
            ),
        )),
    }
}

fn seconds(py: Python<'_>, what: &str, s: f64) -> PyResult<Duration> {
    if s.is_finite() && s > 0.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(config_error(
            py,
            format!("{what}: expected a positive number of seconds, got {s}"),
        ))
    }
}

/// A model from a string or a `Model`.
pub fn model_from(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<Arc<dyn Model>> {
    if let Ok(m) = model.cast::<PyModel>() {
        return Ok(Arc::clone(&m.get().model));
    }
    if let Ok(s) = model.cast::<PyString>() {
        return parlance::model(&s.to_cow()?).map_err(|e| build_error(py, &e));
    }
    Err(config_error(
        py,
        format!(
            "model: expected a model string (\"openai:gpt-4o-mini\") or a Model, got {}",
            crate::convert::type_name(model)
        ),
    ))
}

#[pymethods]
impl PyAgent {
    #[new]
    #[pyo3(signature = (model, *, instructions = None, tools = Vec::new(), name = None,
        output_schema = None, output_type = None, on_tool_exception = "return_to_model",
        tool_timeout = None, max_model_calls = None, max_invalid_arguments = None,
        tool_concurrency = None, model_settings = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        model: &Bound<'_, PyAny>,
        instructions: Option<String>,
        tools: Vec<PyRef<'_, PyTool>>,
        name: Option<String>,
        output_schema: Option<(String, Bound<'_, PyAny>)>,
        output_type: Option<Py<PyAny>>,
        on_tool_exception: &str,
        tool_timeout: Option<f64>,
        max_model_calls: Option<u32>,
        max_invalid_arguments: Option<u32>,
        tool_concurrency: Option<usize>,
        model_settings: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut limits = Limits {
            on_tool_exception: policy(py, on_tool_exception)?,
            ..Limits::default()
        };
        if let Some(t) = tool_timeout {
            limits.tool_timeout = seconds(py, "tool_timeout", t)?;
        }
        if let Some(n) = max_model_calls {
            limits.max_model_calls = n;
        }
        if let Some(n) = max_invalid_arguments {
            limits.max_invalid_arguments = n;
        }
        if let Some(0) = tool_concurrency {
            return Err(config_error(py, "tool_concurrency: expected at least 1"));
        }
        limits.tool_concurrency = tool_concurrency;
        let options = match model_settings {
            None => ModelOptions::default(),
            Some(s) => serde_json::from_value::<ModelOptions>(from_py(s, "model_settings")?)
                .map_err(|e| config_error(py, format!("model_settings: {e}")))?,
        };
        let keep_failures = limits.on_tool_exception == OnToolException::Fail;
        let has_async_tools = tools.iter().any(|t| t.is_async);
        let mut b = Agent::builder(model_from(py, model)?)
            .limits(limits)
            .options(options);
        if let Some(i) = instructions {
            b = b.instructions(i);
        }
        if let Some(n) = name {
            b = b.name(n);
        }
        for t in &tools {
            b = b.tool(t.tool.clone());
        }
        if let Some((name, schema)) = output_schema {
            b = b.output_schema(name, from_py(&schema, "output_schema")?);
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

    /// The agent's settings as recorded with each run.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.agent.settings())
    }

    /// A run, as an awaitable of its ``Response``.
    #[pyo3(signature = (input, *, turns = None, run_id = None, thread_id = None, deps = None))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        input: &Bound<'py, PyAny>,
        turns: Option<&Bound<'py, PyAny>>,
        run_id: Option<String>,
        thread_id: Option<String>,
        deps: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let input = self.input(py, input, turns, run_id, thread_id)?;
        let ctx = self.ctx(py, deps, true)?;
        let (agent, output_type) = (self.agent.with_deps(Arc::clone(&ctx)), self.output_type());
        awaitable(py, "agent.run()", async move {
            let response = agent.run(input).await;
            Python::attach(|py| finish(py, response, &ctx, output_type))
        })
    }

    /// A run, waited for with the GIL released (no event loop: ``def``
    /// tools only).
    #[pyo3(signature = (input, *, turns = None, run_id = None, thread_id = None, deps = None))]
    fn run_blocking(
        &self,
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        turns: Option<&Bound<'_, PyAny>>,
        run_id: Option<String>,
        thread_id: Option<String>,
        deps: Option<Py<PyAny>>,
    ) -> PyResult<PyResponse> {
        let input = self.input(py, input, turns, run_id, thread_id)?;
        let ctx = self.ctx(py, deps, false)?;
        let agent = self.agent.with_deps(Arc::clone(&ctx));
        let response = block_on(py, async move { Ok(agent.run(input).await) })?;
        finish(py, response, &ctx, self.output_type())
    }

    /// A run as an async iterator of events.
    #[pyo3(signature = (input, *, turns = None, run_id = None, thread_id = None, deps = None))]
    fn stream(
        &self,
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        turns: Option<&Bound<'_, PyAny>>,
        run_id: Option<String>,
        thread_id: Option<String>,
        deps: Option<Py<PyAny>>,
    ) -> PyResult<PyRunStream> {
        let input = self.input(py, input, turns, run_id, thread_id)?;
        let ctx = self.ctx(py, deps, true)?;
        let agent = self.agent.with_deps(Arc::clone(&ctx));
        let _rt = crate::runtime::runtime().enter();
        let stream = agent.run(input).stream();
        Ok(PyRunStream::new(stream, ctx, self.output_type()))
    }

    /// Applies decisions to a paused run and goes on: an awaitable of the
    /// ``Response``; refused decisions raise ``DecisionError``.
    #[pyo3(signature = (paused, decisions, *, turns = None, deps = None))]
    fn resume<'py>(
        &self,
        py: Python<'py>,
        paused: &Bound<'py, PyAny>,
        decisions: &Bound<'py, PyAny>,
        turns: Option<&Bound<'py, PyAny>>,
        deps: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let resume = resume_of(py, paused, decisions, turns)?;
        let ctx = self.ctx(py, deps, true)?;
        let (agent, output_type) = (self.agent.with_deps(Arc::clone(&ctx)), self.output_type());
        awaitable(py, "agent.resume()", async move {
            let result = agent.resume(resume).await;
            Python::attach(|py| match result {
                Ok(r) => finish(py, r, &ctx, output_type),
                Err(e) => Err(decision_error(py, &e)),
            })
        })
    }

    /// ``resume``, waited for with the GIL released.
    #[pyo3(signature = (paused, decisions, *, turns = None, deps = None))]
    fn resume_blocking(
        &self,
        py: Python<'_>,
        paused: &Bound<'_, PyAny>,
        decisions: &Bound<'_, PyAny>,
        turns: Option<&Bound<'_, PyAny>>,
        deps: Option<Py<PyAny>>,
    ) -> PyResult<PyResponse> {
        let resume = resume_of(py, paused, decisions, turns)?;
        let ctx = self.ctx(py, deps, false)?;
        let agent = self.agent.with_deps(Arc::clone(&ctx));
        let result = block_on(py, async move { Ok(agent.resume(resume).await) })?;
        match result {
            Ok(r) => finish(py, r, &ctx, self.output_type()),
            Err(e) => Err(decision_error(py, &e)),
        }
    }

    /// ``resume`` as an async iterator of events.
    #[pyo3(signature = (paused, decisions, *, turns = None, deps = None))]
    fn resume_stream(
        &self,
        py: Python<'_>,
        paused: &Bound<'_, PyAny>,
        decisions: &Bound<'_, PyAny>,
        turns: Option<&Bound<'_, PyAny>>,
        deps: Option<Py<PyAny>>,
    ) -> PyResult<PyRunStream> {
        let resume = resume_of(py, paused, decisions, turns)?;
        let ctx = self.ctx(py, deps, true)?;
        let agent = self.agent.with_deps(Arc::clone(&ctx));
        let _rt = crate::runtime::runtime().enter();
        let stream = agent
            .resume(resume)
            .stream()
            .map_err(|e| decision_error(py, &e))?;
        Ok(PyRunStream::new(stream, ctx, self.output_type()))
    }

    /// A run on a stored thread with new input: an awaitable of its
    /// ``Response``, or with ``blocking`` the response itself.
    #[pyo3(signature = (store, thread_id, input, *, deps = None, blocking = false))]
    fn run_on_thread<'py>(
        &self,
        py: Python<'py>,
        store: PyRef<'py, PyStore>,
        thread_id: String,
        input: &Bound<'py, PyAny>,
        deps: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let messages = input::run_input(py, input)?.input;
        self.on_thread(
            py,
            &store,
            ThreadWork::Run(thread_id, messages),
            deps,
            blocking,
        )
    }

    /// The thread's last run again, from its last committed step (a failed
    /// tool call runs again; refused when the last run completed).
    #[pyo3(signature = (store, thread_id, *, deps = None, blocking = false))]
    fn retry_on_thread<'py>(
        &self,
        py: Python<'py>,
        store: PyRef<'py, PyStore>,
        thread_id: String,
        deps: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.on_thread(py, &store, ThreadWork::Retry(thread_id), deps, blocking)
    }

    /// Applies decisions to a run paused on a stored thread (from any
    /// process: the store has everything).
    #[pyo3(signature = (store, run_id, decisions, *, deps = None, blocking = false))]
    fn resume_on_thread<'py>(
        &self,
        py: Python<'py>,
        store: PyRef<'py, PyStore>,
        run_id: String,
        decisions: &Bound<'py, PyAny>,
        deps: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let decisions = input::decisions(py, decisions)?;
        self.on_thread(
            py,
            &store,
            ThreadWork::Resume(run_id, decisions),
            deps,
            blocking,
        )
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.agent)
    }
}

impl PyAgent {
    fn on_thread<'py>(
        &self,
        py: Python<'py>,
        store: &PyStore,
        work: ThreadWork,
        deps: Option<Py<PyAny>>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ctx = self.ctx(py, deps, !blocking)?;
        let agent = self.agent.with_deps(Arc::clone(&ctx));
        let (store, output_type) = (store.store.clone(), self.output_type());
        let run = async move {
            let response = on_thread(store, agent, work).await?;
            Python::attach(|py| finish(py, response, &ctx, output_type))
        };
        if blocking {
            let r = block_on(py, run)?;
            Ok(Bound::new(py, r)?.into_any())
        } else {
            awaitable(py, "agent.run()", run)
        }
    }
}

fn resume_of(
    py: Python<'_>,
    paused: &Bound<'_, PyAny>,
    decisions: &Bound<'_, PyAny>,
    turns: Option<&Bound<'_, PyAny>>,
) -> PyResult<Resume> {
    Ok(Resume {
        turns: input::turns(py, turns)?,
        paused: input::paused(py, paused)?,
        decisions: input::decisions(py, decisions)?,
    })
}

impl PyAgent {
    fn input(
        &self,
        py: Python<'_>,
        input: &Bound<'_, PyAny>,
        turns: Option<&Bound<'_, PyAny>>,
        run_id: Option<String>,
        thread_id: Option<String>,
    ) -> PyResult<RunInput> {
        let mut run = input::run_input(py, input)?;
        run.turns = input::turns(py, turns)?;
        run.run_id = run_id;
        run.thread_id = thread_id;
        Ok(run)
    }

    fn output_type(&self) -> Option<Py<PyAny>> {
        Python::attach(|py| self.output_type.as_ref().map(|t| t.clone_ref(py)))
    }

    /// The run's context for its tools: with `with_loop`, the running
    /// loop and the caller's context variables (async tools run there).
    pub fn ctx(
        &self,
        py: Python<'_>,
        deps: Option<Py<PyAny>>,
        with_loop: bool,
    ) -> PyResult<Arc<RunCtx>> {
        let (event_loop, context) = if with_loop && self.has_async_tools {
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

    /// The Rust agent (for thread runs).
    pub fn agent(&self) -> &Agent {
        &self.agent
    }
}
