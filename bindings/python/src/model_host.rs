//! Models written in Python, and the test models of `parlance.testing`.
//!
//! A subclass of `parlance.Model` that defines `request` is a model of the
//! Rust engine: each model call becomes `request(messages, tools=...,
//! settings=...)`. An `async def` runs as a task on the caller's event
//! loop (the one the run was awaited on, with its context variables;
//! cancelled when the run stops) or, in a `_sync` run, on a loop of its
//! own; a `def` runs on one of the runtime's worker threads. What it
//! returns (a canonical message dict, or a string: one text block) is the
//! assistant's message; what it raises fails the run with a model error
//! naming the exception.
//!
//! The test models (`TestModel`, `ScriptedModel`, `Recorder`, `Replay`)
//! are the Rust ones (`parlance::testing`), as subclasses of `Model`.

use std::path::PathBuf;
use std::sync::Arc;

use parlance::testing::{CallTools, FunctionModel, Recorder, Replay, ScriptedModel, TestModel};
use parlance::{Message, Model, ModelError, ModelRequest};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::Value;

use crate::call::start_on_loop;
use crate::convert::{from_py, to_py};
use crate::errors::config_error;
use crate::models::PyModel;
use crate::tools::RunCtx;

/// The provider a `Model()` made in Python reports until it says its own.
const PYTHON: &str = "python";

fn unbound_error() -> ModelError {
    ModelError::InvalidRequest {
        message: "this Model has no request method: subclass parlance.Model and define `async def request(self, messages, *, tools, settings)`".into(),
    }
}

/// What a `Model` made in Python holds natively: nothing to call. The
/// engine calls the subclass's `request` instead (see [`python_model`]);
/// a `Model()` with no `request` is refused when an agent is built.
pub fn unbound() -> Arc<dyn Model> {
    Arc::new(FunctionModel::new(|_| Err(unbound_error())).named(PYTHON, PYTHON))
}

/// A user's model: the object, its class name (for errors), whether its
/// `request` is a coroutine function.
struct Hosted {
    obj: Py<PyAny>,
    label: String,
    is_async: bool,
}

pub fn iscoroutinefunction(py: Python<'_>, f: &Bound<'_, PyAny>) -> PyResult<bool> {
    static CHECK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    CHECK
        .import(py, "inspect", "iscoroutinefunction")?
        .call1((f,))?
        .is_truthy()
}

/// The engine's model for a `Model` subclass that defines `request`
/// (`None` for a native model: the caller takes its `model`). A `Model()`
/// with no `request` is a `ConfigError`.
pub fn python_model(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<Option<Arc<dyn Model>>> {
    let Ok(native) = model.cast::<PyModel>() else {
        return Ok(None);
    };
    if !model.get_type().hasattr("request")? {
        if native.get().model.provider() == PYTHON && native.get().model.model_id() == PYTHON {
            return Err(config_error(
                py,
                format!(
                    "model: {} has no request method: define `async def request(self, messages, *, tools, settings)` (or a `def`)",
                    model.get_type().name()?
                ),
            ));
        }
        return Ok(None);
    }
    let request = model.getattr("request")?;
    if !request.is_callable() {
        return Err(config_error(py, "model: request must be a method"));
    }
    let label = model.get_type().name()?.to_string();
    let text = |name: &str| -> PyResult<Option<String>> {
        match model.getattr(name) {
            Ok(v) if v.is_instance_of::<PyString>() => Ok(Some(v.extract()?)),
            Ok(v) if v.is_none() => Ok(None),
            Ok(v) => Err(config_error(
                py,
                format!(
                    "model: {label}.{name} must be a string, got {}",
                    crate::convert::type_name(&v)
                ),
            )),
            Err(_) => Ok(None),
        }
    };
    let provider = text("provider")?.unwrap_or_else(|| PYTHON.into());
    let model_id = text("model_id")?
        .filter(|id| id != PYTHON)
        .unwrap_or_else(|| label.clone());
    let hosted = Arc::new(Hosted {
        obj: model.clone().unbind(),
        label,
        is_async: iscoroutinefunction(py, &request)?,
    });
    let f = FunctionModel::new_async(move |request| call(Arc::clone(&hosted), request));
    Ok(Some(Arc::new(f.named(provider, model_id))))
}

/// `request`'s arguments: the messages, and the keywords `tools` and
/// `settings`, as canonical dicts.
fn arguments<'py>(
    py: Python<'py>,
    request: &ModelRequest,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    let messages = to_py(py, &serde_json::to_value(&request.messages).expect("json"))?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(
        "tools",
        to_py(py, &serde_json::to_value(&*request.tools).expect("json"))?,
    )?;
    kwargs.set_item(
        "settings",
        to_py(py, &serde_json::to_value(&request.options).expect("json"))?,
    )?;
    Ok((messages, kwargs))
}

/// What a Python exception says, as the call's error.
fn raised(py: Python<'_>, label: &str, err: PyErr) -> ModelError {
    let (kind, message) = crate::call::exception_text(py, &err);
    let message = format!("{label}.request raised {kind}: {message}");
    if err.is_instance_of::<pyo3::exceptions::PyTimeoutError>(py) {
        ModelError::Timeout { message }
    } else if err.is_instance_of::<pyo3::exceptions::PyConnectionError>(py) {
        ModelError::Network { message }
    } else {
        ModelError::MalformedResponse { message }
    }
}

/// `request`'s return value as the assistant's message: a string is one
/// text block; a dict is a canonical message (`role` may be left out).
fn answer(label: &str, value: &Bound<'_, PyAny>) -> Result<Message, ModelError> {
    let bad = |message: String| ModelError::MalformedResponse {
        message: format!("{label}.request returned {message}"),
    };
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(Message::assistant(s.to_string()));
    }
    let mut v = from_py(value, "(return value)")
        .map_err(|e| bad(format!("a value that is not JSON: {e}")))?;
    match &mut v {
        Value::Object(m) => {
            m.entry("role")
                .or_insert_with(|| Value::String("assistant".into()));
        }
        _ => {
            return Err(bad(format!(
                "{} (expected a message dict or a string)",
                crate::convert::type_name(value)
            )));
        }
    }
    Message::from_value(&v).map_err(|e| bad(format!("a message that is not canonical: {e}")))
}

async fn call(hosted: Arc<Hosted>, request: ModelRequest) -> Result<Message, ModelError> {
    let run = parlance::agent::current_deps::<Arc<RunCtx>>();
    let on_loop = run.filter(|r| hosted.is_async && r.event_loop.is_some());
    if let Some(run) = on_loop {
        let label = hosted.label.clone();
        let pending = Python::attach(|py| {
            let start = || {
                let (messages, kwargs) = arguments(py, &request)?;
                let coro =
                    hosted
                        .obj
                        .bind(py)
                        .call_method("request", (messages,), Some(&kwargs))?;
                let event_loop = run.event_loop.as_ref().expect("checked").bind(py);
                start_on_loop(event_loop, run.context.as_ref().map(|c| c.bind(py)), coro)
            };
            start().map_err(|e| raised(py, &label, e))
        })?;
        let result = pending.await;
        return Python::attach(|py| match result {
            Ok(v) => answer(&label, v.bind(py)),
            Err(e) => Err(raised(py, &label, e)),
        });
    }
    // A `def`, or an `async def` with no loop to run on: a worker thread.
    let joined = tokio::task::spawn_blocking(move || {
        Python::attach(|py| {
            let call = || {
                let (messages, kwargs) = arguments(py, &request)?;
                let out = hosted
                    .obj
                    .bind(py)
                    .call_method("request", (messages,), Some(&kwargs))?;
                if hosted.is_async {
                    crate::call::run_coroutine(py, out)
                } else {
                    Ok(out)
                }
            };
            match call() {
                Ok(v) => answer(&hosted.label, &v),
                Err(e) => Err(raised(py, &hosted.label, e)),
            }
        })
    })
    .await;
    joined.unwrap_or_else(|e| {
        Err(ModelError::MalformedResponse {
            message: format!("the model's worker thread failed: {e}"),
        })
    })
}

/// Whether runs with `model` need the caller's event loop: an `async def`
/// model, or a `Recorder` of one.
pub fn wants_loop(py: Python<'_>, model: &Bound<'_, PyAny>) -> bool {
    if let Ok(r) = model.cast::<PyRecorder>() {
        return r.get().wants_loop;
    }
    model.is_instance_of::<PyModel>()
        && model.get_type().hasattr("request").unwrap_or(false)
        && model
            .getattr("request")
            .and_then(|f| iscoroutinefunction(py, &f))
            .unwrap_or(false)
}

/// A model argument of `Recorder`: anything an `Agent` takes.
fn any_model(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<Arc<dyn Model>> {
    crate::agent::model_from(py, model)
}

fn requests<'py>(py: Python<'py>, received: Vec<ModelRequest>) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for r in received {
        let doc = parlance::testing::RequestDocument {
            model: None,
            stream: false,
            request: r,
        };
        list.append(to_py(py, &doc.to_value())?)?;
    }
    Ok(list)
}

/// Calls the tools it is offered with arguments made from their schemas,
/// then answers: no script needed (as Pydantic AI's ``TestModel``).
#[pyclass(module = "parlance.testing", name = "TestModel", extends = PyModel, frozen)]
pub struct PyTestModel {
    model: TestModel,
}

#[pymethods]
impl PyTestModel {
    #[new]
    #[pyo3(signature = (*, call_tools = None, text = None, output = None, seed = 0))]
    fn new(
        py: Python<'_>,
        call_tools: Option<&Bound<'_, PyAny>>,
        text: Option<String>,
        output: Option<&Bound<'_, PyAny>>,
        seed: u64,
    ) -> PyResult<PyClassInitializer<Self>> {
        let mut model = TestModel::new().seed(seed);
        match call_tools {
            None => {}
            Some(v) if v.extract::<String>().is_ok_and(|s| s == "all") => {}
            Some(v) => match v.extract::<Vec<String>>() {
                Ok(names) if !v.is_instance_of::<PyString>() => model = model.call_tools(names),
                _ => {
                    return Err(config_error(
                        py,
                        format!(
                            "TestModel: call_tools: expected \"all\" or a list of tool names, got {}",
                            crate::convert::type_name(v)
                        ),
                    ));
                }
            },
        }
        if let Some(t) = text {
            model = model.text(t);
        }
        if let Some(o) = output {
            model = model.output(from_py(o, "output")?);
        }
        let native = PyModel {
            model: Arc::new(model.clone()),
        };
        Ok(PyClassInitializer::from(native).add_subclass(PyTestModel { model }))
    }

    /// Which tools it calls: ``"all"`` or their names.
    #[getter]
    fn call_tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match self.model.tool_selection() {
            CallTools::All => Ok(PyString::new(py, "all").into_any()),
            CallTools::Only(names) => Ok(PyList::new(py, names)?.into_any()),
        }
    }

    /// Every request it received, as request dicts (``messages``,
    /// ``tools``, ``options``).
    #[getter]
    fn received<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        requests(py, self.model.received())
    }

    fn __repr__(&self) -> String {
        "TestModel()".into()
    }
}

/// Answers with the messages it was given, in order (a dict: a canonical
/// message; a string: one text block), and keeps every request.
#[pyclass(module = "parlance.testing", name = "ScriptedModel", extends = PyModel, frozen)]
pub struct PyScriptedModel {
    model: ScriptedModel,
}

#[pymethods]
impl PyScriptedModel {
    #[new]
    fn new(messages: Vec<Bound<'_, PyAny>>) -> PyResult<PyClassInitializer<Self>> {
        let mut script = Vec::with_capacity(messages.len());
        for (i, m) in messages.iter().enumerate() {
            let msg = answer("ScriptedModel", m)
                .map_err(|e| config_error(m.py(), format!("ScriptedModel: messages[{i}]: {e}")))?;
            script.push(msg);
        }
        let model = ScriptedModel::new(script);
        let native = PyModel {
            model: Arc::new(model.clone()),
        };
        Ok(PyClassInitializer::from(native).add_subclass(PyScriptedModel { model }))
    }

    /// Every request it received, as request dicts.
    #[getter]
    fn received<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        requests(py, self.model.received())
    }

    /// How many answers are left.
    #[getter]
    fn remaining(&self) -> usize {
        self.model.remaining()
    }

    fn __repr__(&self) -> String {
        format!("ScriptedModel(remaining={})", self.model.remaining())
    }
}

/// Wraps a model and writes each exchange to a cassette file (JSON Lines,
/// canonical format); ``Replay`` serves it back offline.
#[pyclass(module = "parlance.testing", name = "Recorder", extends = PyModel, frozen)]
pub struct PyRecorder {
    path: PathBuf,
    wants_loop: bool,
}

#[pymethods]
impl PyRecorder {
    #[new]
    #[pyo3(signature = (model, path, *, append = false))]
    fn new(
        py: Python<'_>,
        model: &Bound<'_, PyAny>,
        path: PathBuf,
        append: bool,
    ) -> PyResult<PyClassInitializer<Self>> {
        let inner = any_model(py, model)?;
        let wants_loop = wants_loop(py, model);
        let recorder = if append {
            Recorder::append(inner, &path)
        } else {
            Recorder::new(inner, &path)
        }
        .map_err(|e| config_error(py, format!("Recorder: {e}")))?;
        let native = PyModel {
            model: Arc::new(recorder),
        };
        Ok(PyClassInitializer::from(native).add_subclass(PyRecorder { path, wants_loop }))
    }

    /// The cassette file.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    fn __repr__(&self) -> String {
        format!("Recorder({:?})", self.path.display().to_string())
    }
}

/// Serves a cassette's exchanges in order, each request checked against
/// the recorded one: a request that differs fails the run with a model
/// error naming the exchange and the first difference.
#[pyclass(module = "parlance.testing", name = "Replay", extends = PyModel, frozen)]
pub struct PyReplay {
    replay: Arc<Replay>,
    path: PathBuf,
}

#[pymethods]
impl PyReplay {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<PyClassInitializer<Self>> {
        let replay =
            Arc::new(Replay::open(&path).map_err(|e| config_error(py, format!("Replay: {e}")))?);
        let native = PyModel {
            model: Arc::clone(&replay) as Arc<dyn Model>,
        };
        Ok(PyClassInitializer::from(native).add_subclass(PyReplay { replay, path }))
    }

    /// How many exchanges are left to serve.
    #[getter]
    fn remaining(&self) -> usize {
        self.replay.remaining()
    }

    /// The cassette file.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    fn __repr__(&self) -> String {
        format!("Replay({:?})", self.path.display().to_string())
    }
}

/// Registers the classes in `_core`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTestModel>()?;
    m.add_class::<PyScriptedModel>()?;
    m.add_class::<PyRecorder>()?;
    m.add_class::<PyReplay>()?;
    Ok(())
}
