//! Python functions as tools of the Rust engine. The engine validates the
//! arguments, applies timeouts and the exception policy, and runs the
//! calls of a turn concurrently; this module only calls the function:
//! an `async def` on the caller's event loop (a task there, cancelled when
//! the engine gives up on it), a `def` on one of the runtime's worker
//! threads (holding the GIL only while Python runs).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use parlance::agent::ArgValidator;
use parlance::{ArgumentProblem, Block, PathStep, Tool, ToolContext, ToolError, ToolFailure};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyString;
use serde_json::Value;

use crate::call::{PendingCall, start_on_loop};
use crate::convert::{from_py, to_py};
use crate::errors::{arguments_refused_class, config_error, tool_error_class};

/// What one run hands its tools (through `Agent::with_deps`): the
/// caller's loop and context variables, the user's `deps`, and the
/// exceptions of failed tools (the `__cause__` of a `fail` run's error).
pub struct RunCtx {
    pub event_loop: Option<Py<PyAny>>,
    pub context: Option<Py<PyAny>>,
    pub deps: Option<Py<PyAny>>,
    pub keep_failures: bool,
    pub failures: Mutex<HashMap<String, PyErr>>,
}

type Outcome = Result<Vec<Block>, ToolFailure>;

/// What a tool sees of its call: ids, the deadline, whether it was
/// cancelled, and the run's ``deps``.
#[pyclass(module = "parlance", name = "ToolContext", frozen)]
pub struct PyToolContext {
    run_id: Arc<str>,
    thread_id: Option<Arc<str>>,
    call_id: Arc<str>,
    tool_name: String,
    remaining_at: (std::time::Instant, Duration),
    cancel: tokio_util::sync::CancellationToken,
    deps: Option<Py<PyAny>>,
}

#[pymethods]
impl PyToolContext {
    /// The run's id.
    #[getter]
    fn run_id(&self) -> &str {
        &self.run_id
    }
    /// The thread's id, when the run is on one.
    #[getter]
    fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }
    /// The tool call's id.
    #[getter]
    fn call_id(&self) -> &str {
        &self.call_id
    }
    /// A key that is the same every time this call runs again (the thread,
    /// or off a thread the run, and the call's id): hand it to what the
    /// tool changes (an ``Idempotency-Key`` header) so it happens once.
    #[getter]
    fn idempotency_key(&self) -> String {
        parlance::agent::idempotency_key(&self.run_id, self.thread_id.as_deref(), &self.call_id)
    }
    /// The tool's name.
    #[getter]
    fn tool_name(&self) -> &str {
        &self.tool_name
    }
    /// Seconds left before the call times out (never below 0).
    #[getter]
    fn remaining(&self) -> f64 {
        let (at, left) = self.remaining_at;
        left.saturating_sub(at.elapsed()).as_secs_f64()
    }
    /// When the call times out, on the ``time.monotonic()`` clock.
    #[getter]
    fn deadline(&self, py: Python<'_>) -> PyResult<f64> {
        let now: f64 = py.import("time")?.call_method0("monotonic")?.extract()?;
        Ok(now + self.remaining())
    }
    /// True once the call timed out or its run stopped: a long ``def`` tool
    /// (which cannot be interrupted) should check it and return.
    #[getter]
    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
    /// What the caller passed as ``deps`` to the run (``None`` otherwise).
    #[getter]
    fn deps<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        match &self.deps {
            Some(d) => d.bind(py).clone(),
            None => py.None().into_bound(py),
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "ToolContext(run_id={:?}, call_id={:?}, tool_name={:?})",
            &*self.run_id, &*self.call_id, self.tool_name
        )
    }
}

fn context(ctx: &ToolContext, tool: &str, run: Option<&RunCtx>, py: Python<'_>) -> PyToolContext {
    let left = ctx
        .deadline
        .saturating_duration_since(tokio::time::Instant::now());
    PyToolContext {
        run_id: ctx.run_id.clone(),
        thread_id: ctx.thread_id.clone(),
        call_id: ctx.call_id.clone(),
        tool_name: tool.to_string(),
        remaining_at: (std::time::Instant::now(), left),
        cancel: ctx.cancel.clone(),
        deps: run.and_then(|r| r.deps.as_ref()).map(|d| d.clone_ref(py)),
    }
}

fn is_a(value: &Bound<'_, PyAny>, class: PyResult<&Bound<'_, PyAny>>) -> bool {
    class
        .map(|c| value.is_instance(c).unwrap_or(false))
        .unwrap_or(false)
}

/// A `ToolError`, raised or returned: its message goes back to the model.
fn tool_error(value: &Bound<'_, PyAny>) -> Option<ToolFailure> {
    if !is_a(value, tool_error_class(value.py())) {
        return None;
    }
    let message = value.str().map(|s| s.to_string()).unwrap_or_default();
    Some(ToolFailure::Tool(ToolError::new(message)))
}

/// What pydantic refused in the arguments (`_ArgumentsRefused.problems`:
/// `(location, message)` pairs) as the engine's problems.
fn refused(value: &Bound<'_, PyAny>) -> Option<ToolFailure> {
    if !is_a(value, arguments_refused_class(value.py())) {
        return None;
    }
    let pairs: Vec<(Bound<'_, PyAny>, String)> = value.getattr("problems").ok()?.extract().ok()?;
    let problems = pairs.into_iter().map(|(loc, message)| {
        let steps = match from_py(&loc, "(location)") {
            Ok(Value::Array(steps)) => steps,
            _ => Vec::new(),
        };
        ArgumentProblem::new(steps.iter().map(PathStep::from_json), message)
    });
    Some(ToolFailure::InvalidArguments(problems.collect()))
}

/// A Python exception as the engine's outcome: `ToolError` goes back to
/// the model, arguments pydantic refused are invalid arguments, anything
/// else is unexpected (its class name and message), and is kept for the
/// run's error when the policy is `fail`.
pub fn failure(py: Python<'_>, err: PyErr, run: Option<&RunCtx>, call_id: &str) -> ToolFailure {
    if let Some(known) = tool_error(err.value(py)).or_else(|| refused(err.value(py))) {
        return known;
    }
    let message = err
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    let error_type = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    // The process's own lack of descriptors or memory is not the tool's
    // failure: the run stops as `server_resources`, the model never reads it.
    let short_of_resources = err.is_instance_of::<pyo3::exceptions::PyMemoryError>(py)
        || (err.is_instance_of::<pyo3::exceptions::PyOSError>(py) && short_of(py, &err));
    if let Some(run) = run.filter(|r| r.keep_failures) {
        run.failures
            .lock()
            .expect("not poisoned")
            .insert(call_id.to_string(), err);
    }
    if short_of_resources {
        return ToolFailure::server_resources(format!("{error_type}: {message}"));
    }
    ToolFailure::unexpected(error_type, message)
}

/// Whether an `OSError` says the process ran short: its `errno` is one of
/// `errno.EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM` (this system's numbers).
fn short_of(py: Python<'_>, err: &PyErr) -> bool {
    let Ok(n) = err
        .value(py)
        .getattr("errno")
        .and_then(|n| n.extract::<i64>())
    else {
        return false;
    };
    let Ok(errno) = py.import("errno") else {
        return false;
    };
    ["EMFILE", "ENFILE", "ENOBUFS", "ENOMEM"]
        .iter()
        .any(|name| {
            errno
                .getattr(*name)
                .and_then(|v| v.extract::<i64>())
                .is_ok_and(|v| v == n)
        })
}

/// ``parlance.Content``, imported once.
fn content_class(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static CLASS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    CLASS.import(py, "parlance._content", "Content")
}

/// A tool's return value as content: a string is text, ``None`` nothing,
/// a ``ToolError`` the error it is (as if raised), a ``Content`` its
/// blocks (images, audio, files...), anything else JSON (the Python side
/// turns models and dataclasses into plain values first).
fn content(value: &Bound<'_, PyAny>) -> Outcome {
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(vec![Block::text(s.to_string())]);
    }
    if let Some(e) = tool_error(value) {
        return Err(e);
    }
    if value.is_none() {
        return Ok(Vec::new());
    }
    let py = value.py();
    if content_class(py).is_ok_and(|c| value.is_instance(c).unwrap_or(false)) {
        return match value
            .getattr("blocks")
            .and_then(|b| from_py(&b, "(returned content)"))
        {
            Ok(v) => parlance_bindings::tools::blocks_content(&v),
            Err(e) => Err(ToolFailure::unexpected("TypeError", e.to_string())),
        };
    }
    match from_py(value, "(return value)") {
        Ok(v) => parlance_bindings::tools::value_content(v),
        Err(e) => Err(ToolFailure::unexpected("TypeError", e.to_string())),
    }
}

fn run_ctx(ctx: &ToolContext) -> Option<Arc<RunCtx>> {
    ctx.deps::<Arc<RunCtx>>().cloned()
}

async fn call_async(f: Arc<Py<PyAny>>, name: Arc<str>, args: Value, ctx: ToolContext) -> Outcome {
    let run = run_ctx(&ctx);
    let started: Result<PendingCall, ToolFailure> = Python::attach(|py| {
        let Some((event_loop, context)) = run
            .as_ref()
            .and_then(|r| r.event_loop.as_ref().map(|l| (l, r.context.as_ref())))
        else {
            return Err(ToolFailure::unexpected(
                "RuntimeError",
                format!(
                    "the async tool {name} needs an event loop: run the agent with `await agent.run(...)`"
                ),
            ));
        };
        let pyctx = context_obj(py, &ctx, &name, run.as_deref())
            .map_err(|e| failure(py, e, run.as_deref(), &ctx.call_id))?;
        let call = || -> PyResult<PendingCall> {
            let coro = f.bind(py).call1((to_py(py, &args)?, pyctx))?;
            start_on_loop(event_loop.bind(py), context.map(|c| c.bind(py)), coro)
        };
        call().map_err(|e| failure(py, e, run.as_deref(), &ctx.call_id))
    });
    let pending = started?;
    let result = pending.await;
    Python::attach(|py| match result {
        Ok(v) => content(v.bind(py)),
        Err(e) => Err(failure(py, e, run.as_deref(), &ctx.call_id)),
    })
}

fn context_obj<'py>(
    py: Python<'py>,
    ctx: &ToolContext,
    name: &str,
    run: Option<&RunCtx>,
) -> PyResult<Bound<'py, PyToolContext>> {
    Bound::new(py, context(ctx, name, run, py))
}

fn call_blocking(f: &Py<PyAny>, name: &str, args: Value, ctx: ToolContext) -> Outcome {
    let run = run_ctx(&ctx);
    Python::attach(|py| {
        let call = || -> PyResult<Bound<'_, PyAny>> {
            let pyctx = context_obj(py, &ctx, name, run.as_deref())?;
            f.bind(py).call1((to_py(py, &args)?, pyctx))
        };
        match call() {
            Ok(v) => content(&v),
            Err(e) => Err(failure(py, e, run.as_deref(), &ctx.call_id)),
        }
    })
}

/// A tool for the Rust engine: a name, a description, an input JSON
/// Schema and a function called as ``func(arguments: dict, ctx)``. Built
/// by ``parlance.tool``; rarely made by hand.
#[pyclass(module = "parlance._core", name = "Tool", frozen)]
pub struct PyTool {
    pub tool: Tool,
    pub is_async: bool,
}

#[pymethods]
impl PyTool {
    #[new]
    #[pyo3(signature = (name, description, schema, func, *, is_async, timeout = None, needs_approval = None, max_invalid_arguments = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        name: String,
        description: String,
        schema: &Bound<'_, PyAny>,
        func: Py<PyAny>,
        is_async: bool,
        timeout: Option<f64>,
        needs_approval: Option<&Bound<'_, PyAny>>,
        max_invalid_arguments: Option<u32>,
    ) -> PyResult<Self> {
        if name.is_empty() {
            return Err(config_error(py, "a tool needs a name"));
        }
        let schema = from_py(schema, "schema")?;
        if let Err(e) = ArgValidator::new(&name, &schema) {
            return Err(config_error(py, format!("tool {name}: {e}")));
        }
        let f = Arc::new(func);
        let label: Arc<str> = Arc::from(name.as_str());
        let mut tool = if is_async {
            Tool::new(name, description, move |args: Value, ctx: ToolContext| {
                call_async(Arc::clone(&f), Arc::clone(&label), args, ctx)
            })
        } else {
            Tool::blocking(name, description, move |args: Value, ctx: ToolContext| {
                call_blocking(&f, &label, args, ctx)
            })
        }
        .with_schema(schema);
        if let Some(t) = timeout {
            tool = with_timeout(py, tool, t)?;
        }
        if let Some(n) = max_invalid_arguments {
            tool = tool.max_invalid_arguments(n);
        }
        match needs_approval {
            None => {}
            Some(v) if v.is_callable() && !v.is_instance_of::<pyo3::types::PyBool>() => {
                let predicate = v.clone().unbind();
                let tool_name = tool.name().to_string();
                tool = tool.needs_approval_if(move |args: &Value| {
                    Python::attach(|py| {
                        let asked = to_py(py, args).and_then(|a| predicate.bind(py).call1((a,)));
                        match asked.and_then(|r| r.is_truthy()) {
                            Ok(b) => b,
                            // A predicate that fails cannot say "no": the
                            // call waits for a human, and the error is shown.
                            Err(e) => {
                                e.print(py);
                                eprintln!("parlance: the needs_approval check of {tool_name} failed; the call waits for approval");
                                true
                            }
                        }
                    })
                });
            }
            Some(v) if v.is_truthy()? => tool = tool.needs_approval(),
            Some(_) => {}
        }
        Ok(PyTool { tool, is_async })
    }

    /// The tool's name.
    #[getter]
    fn name(&self) -> &str {
        self.tool.name()
    }

    /// Whether its calls need the caller's event loop.
    #[getter]
    fn is_async(&self) -> bool {
        self.is_async
    }

    /// What the model is told: ``{"name", "description", "input_schema"}``.
    #[getter]
    fn spec<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &serde_json::to_value(self.tool.spec()).expect("json"))
    }

    fn __repr__(&self) -> String {
        format!("Tool({:?})", self.tool.name())
    }
}

/// `tool` with its own timeout of `seconds`, which must be a positive
/// number (the error names the tool).
pub(crate) fn with_timeout(py: Python<'_>, tool: Tool, seconds: f64) -> PyResult<Tool> {
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(config_error(
            py,
            format!(
                "tool {}: timeout must be a positive number of seconds, got {seconds}",
                tool.name()
            ),
        ));
    }
    Ok(tool.timeout(Duration::from_secs_f64(seconds)))
}
