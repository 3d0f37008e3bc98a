//! Models: from a string (`"openai:gpt-4o-mini"`), or with settings of
//! your own (base URL, key, headers, timeouts, retries, Azure's and
//! Bedrock's own), read by the bindings' shared reader
//! (`parlance_bindings::models`).

use std::sync::Arc;

use napi_derive::napi;
use parlance::Model;
use parlance_bindings::Dialect;
use serde_json::Value;

use crate::errors::{bind, parse};

/// A model an agent talks to.
#[napi]
pub struct NativeModel {
    pub(crate) model: Arc<dyn Model>,
}

#[napi]
impl NativeModel {
    /// A model from a string and optional settings (JSON text, camelCase).
    /// The key comes from the settings or the provider's variable: a
    /// missing one is an error here, before any request.
    #[napi(constructor, catch_unwind)]
    pub fn new(spec: String, settings: Option<String>) -> napi::Result<Self> {
        let settings = match settings {
            Some(t) => parse("settings", &t)?,
            None => Value::Null,
        };
        let model =
            parlance_bindings::models::model(&spec, &settings, Dialect::Node).map_err(bind)?;
        Ok(NativeModel { model })
    }

    /// The provider's name.
    #[napi(getter)]
    pub fn provider(&self) -> String {
        self.model.provider().to_string()
    }

    /// The model's id.
    #[napi(getter)]
    pub fn model_id(&self) -> String {
        self.model.model_id().to_string()
    }
}
