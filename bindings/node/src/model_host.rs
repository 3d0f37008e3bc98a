//! Models written in JavaScript, and the test models of
//! `parlance-ai/testing`.
//!
//! A JavaScript model is an object with `request(messages, { tools,
//! settings, signal })`, called through [`JsFunction`] (`js_call.rs`:
//! the main thread calls it, its result or throw comes back, a dropped
//! call aborts its signal).
//!
//! The test models (`TestModel`, `ScriptedModel`, `Recorder`, `Replay`)
//! are the Rust ones (`parlance::testing`), so a cassette recorded in one
//! language replays in the others.

use std::sync::Arc;

use napi::bindgen_prelude::{Either, Function};
use napi_derive::napi;
use parlance::testing::{
    FunctionModel, Recorder, Replay, RequestDocument, ScriptedModel, TestModel,
};
use parlance::{Message, Model, ModelError, ModelRequest};
use serde_json::{Value, json};

use crate::errors::{config_error, parse};
use crate::js_call::{Failure, JsFunction};
use crate::models::NativeModel;

/// The request as JavaScript gets it: `{messages, tools, settings}`, in
/// the canonical format.
fn request_json(request: &ModelRequest) -> String {
    json!({
        "messages": request.messages,
        "tools": &*request.tools,
        "settings": request.options,
    })
    .to_string()
}

/// A value as the assistant's message: a string is one text block; an
/// object is a canonical message (`role` may be left out). The error says
/// what the value is instead.
fn message_of(value: Value) -> Result<Message, String> {
    match value {
        Value::String(s) => Ok(Message::assistant(s)),
        Value::Object(mut m) => {
            m.entry("role")
                .or_insert_with(|| Value::String("assistant".into()));
            Message::from_value(&Value::Object(m))
                .map_err(|e| format!("a message that is not canonical: {e}"))
        }
        Value::Null => Err("nothing (expected a message object or a string)".into()),
        Value::Array(_) => Err("an array (expected a message object or a string)".into()),
        other => Err(format!("{other} (expected a message object or a string)")),
    }
}

/// What a JavaScript throw says, as the call's error: a `TimeoutError`
/// (`AbortSignal.timeout`) is a timeout, anything else a model error
/// that names it.
fn thrown(label: &str, name: &str, message: &str) -> ModelError {
    let message = format!("{label} threw {name}: {message}");
    match name {
        "TimeoutError" => ModelError::Timeout { message },
        _ => ModelError::MalformedResponse { message },
    }
}

async fn call(f: Arc<JsFunction>, request: ModelRequest) -> Result<Message, ModelError> {
    let text = match f.invoke(request_json(&request)).await {
        Ok(text) => text,
        Err(Failure::Thrown { name, message }) => return Err(thrown(&f.label, &name, &message)),
        Err(Failure::Gone(message)) => return Err(ModelError::Network { message }),
    };
    let value =
        serde_json::from_str::<Value>(&text).map_err(|e| ModelError::MalformedResponse {
            message: format!("{} returned a value that is not JSON: {e}", f.label),
        })?;
    message_of(value).map_err(|e| ModelError::MalformedResponse {
        message: format!("{} returned {e}", f.label),
    })
}

/// A model whose calls go to JavaScript: `call([token, requestJson])`
/// starts one, `abort(token)` aborts its signal. It reports `provider`
/// and `model_id`; `label` (`Echo.request`) names it in errors.
#[napi(catch_unwind)]
pub fn host_model(
    call: Function<'_, (i64, String), ()>,
    abort: Function<'_, i64, ()>,
    provider: String,
    model_id: String,
    label: String,
) -> napi::Result<NativeModel> {
    let f = Arc::new(JsFunction::new(call, abort, label)?);
    let model = FunctionModel::new_async(move |request| self::call(Arc::clone(&f), request));
    Ok(NativeModel {
        model: Arc::new(model.named(provider, model_id)),
    })
}

/// What a test model keeps for its test.
enum Probe {
    Test(TestModel),
    Scripted(ScriptedModel),
    Replay(Arc<Replay>),
    Recorder,
}

/// A test model of `parlance-ai/testing`: the model, and what it saw.
#[napi]
pub struct NativeTestModel {
    model: Arc<dyn Model>,
    probe: Probe,
}

/// The requests, as request documents (JSON text of an array).
fn requests(received: Vec<ModelRequest>) -> String {
    let docs: Vec<Value> = received
        .into_iter()
        .map(|request| {
            RequestDocument {
                model: None,
                stream: false,
                request,
            }
            .to_value()
        })
        .collect();
    Value::Array(docs).to_string()
}

#[napi]
impl NativeTestModel {
    /// `TestModel` from its options (JSON text: `callTools`, `text`,
    /// `output`, `seed`; the package checked their names).
    #[napi(factory, catch_unwind)]
    pub fn test(options: String) -> napi::Result<Self> {
        let o = parse("TestModel options", &options)?;
        let mut model = TestModel::new();
        if let Some(seed) = o.get("seed").filter(|v| !v.is_null()) {
            model = model.seed(seed.as_u64().ok_or_else(|| {
                config_error(format!(
                    "TestModel: seed: expected a non-negative integer, got {seed}"
                ))
            })?);
        }
        match o.get("callTools") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s == "all" => {}
            Some(Value::Array(names)) if names.iter().all(Value::is_string) => {
                model = model.call_tools(names.iter().filter_map(Value::as_str));
            }
            Some(other) => {
                return Err(config_error(format!(
                    "TestModel: callTools: expected \"all\" or an array of tool names, got {other}"
                )));
            }
        }
        match o.get("text") {
            None | Some(Value::Null) => {}
            Some(Value::String(t)) => model = model.text(t.clone()),
            Some(other) => {
                return Err(config_error(format!(
                    "TestModel: text: expected a string, got {other}"
                )));
            }
        }
        if let Some(v) = o.get("output").filter(|v| !v.is_null()) {
            model = model.output(v.clone());
        }
        Ok(NativeTestModel {
            model: Arc::new(model.clone()),
            probe: Probe::Test(model),
        })
    }

    /// `ScriptedModel` from its answers (JSON text: an array of messages
    /// or strings).
    #[napi(factory, catch_unwind)]
    pub fn scripted(messages: String) -> napi::Result<Self> {
        let Value::Array(items) = parse("ScriptedModel messages", &messages)? else {
            return Err(config_error(
                "ScriptedModel: expected an array of messages (or strings)",
            ));
        };
        let mut script = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let msg = message_of(item).map_err(|e| {
                config_error(format!(
                    "ScriptedModel: messages[{i}]: expected a message or a string, got {e}"
                ))
            })?;
            script.push(msg);
        }
        let model = ScriptedModel::new(script);
        Ok(NativeTestModel {
            model: Arc::new(model.clone()),
            probe: Probe::Scripted(model),
        })
    }

    /// `Recorder` of `model` (a model string or a native model) into the
    /// cassette at `path`, emptied first unless `append`.
    #[napi(factory, catch_unwind)]
    pub fn recorder(
        model: Either<String, &NativeModel>,
        path: String,
        append: bool,
    ) -> napi::Result<Self> {
        let inner = crate::agent::model_from(model)?;
        let recorder = if append {
            Recorder::append(inner, &path)
        } else {
            Recorder::new(inner, &path)
        }
        .map_err(|e| config_error(format!("Recorder: {e}")))?;
        Ok(NativeTestModel {
            model: Arc::new(recorder),
            probe: Probe::Recorder,
        })
    }

    /// `Replay` of the cassette at `path` (read now: a file that is not a
    /// cassette is an error here, naming the line).
    #[napi(factory, catch_unwind)]
    pub fn replay(path: String) -> napi::Result<Self> {
        let replay =
            Arc::new(Replay::open(&path).map_err(|e| config_error(format!("Replay: {e}")))?);
        Ok(NativeTestModel {
            model: Arc::clone(&replay) as Arc<dyn Model>,
            probe: Probe::Replay(replay),
        })
    }

    /// The model, for an agent.
    #[napi(catch_unwind)]
    pub fn model(&self) -> NativeModel {
        NativeModel {
            model: Arc::clone(&self.model),
        }
    }

    /// The requests received so far (JSON text: an array of request
    /// documents); `[]` for the models that keep none.
    #[napi(catch_unwind)]
    pub fn received(&self) -> String {
        match &self.probe {
            Probe::Test(m) => requests(m.received()),
            Probe::Scripted(m) => requests(m.received()),
            Probe::Replay(_) | Probe::Recorder => "[]".into(),
        }
    }

    /// How many answers are left (scripted, replayed); -1 for the others.
    #[napi(catch_unwind)]
    pub fn remaining(&self) -> i64 {
        match &self.probe {
            Probe::Scripted(m) => m.remaining() as i64,
            Probe::Replay(r) => r.remaining() as i64,
            Probe::Test(_) | Probe::Recorder => -1,
        }
    }
}
