//! `exportTraces`: the GenAI spans of every run exported with OTLP
//! (`parlance_bindings::traces`); the package's logger keeps receiving
//! the runtime's logs.

use napi::Env;
use napi::bindgen_prelude::AsyncBlock;
use napi_derive::napi;
use parlance_bindings::Dialect;
use parlance_bindings::traces::{export, settings};

use crate::errors::{bind, config_error, parse};
use crate::task::promise;

/// The running export.
#[napi]
pub struct NativeTraces {
    exporter: parlance_otel::Exporter,
}

/// Starts exporting (`settings`: JSON text of `{endpoint, headers,
/// serviceName, protocol}`).
#[napi(catch_unwind)]
pub fn export_traces(settings_json: String) -> napi::Result<NativeTraces> {
    let s = settings(&parse("traces", &settings_json)?, Dialect::Node).map_err(bind)?;
    let exporter = export(&s).map_err(bind)?;
    Ok(NativeTraces { exporter })
}

#[napi]
impl NativeTraces {
    /// Sends the spans ended so far and waits for the collector (off the
    /// main thread).
    #[napi(catch_unwind)]
    pub fn flush(&self, env: &Env) -> napi::Result<AsyncBlock<()>> {
        let e = self.exporter.clone();
        promise(env, async move {
            tokio::task::spawn_blocking(move || e.flush())
                .await
                .map_err(|e| config_error(format!("traces: flushing failed: {e}")))?
                .map_err(|e| config_error(format!("traces: flushing failed: {e}")))
        })
    }

    /// Sends what is left and stops exporting (off the main thread).
    #[napi(catch_unwind)]
    pub fn shutdown(&self, env: &Env) -> napi::Result<AsyncBlock<()>> {
        let e = self.exporter.clone();
        promise(env, async move {
            tokio::task::spawn_blocking(move || e.shutdown())
                .await
                .map_err(|e| config_error(format!("traces: shutting down failed: {e}")))?
                .map_err(|e| config_error(format!("traces: shutting down failed: {e}")))
        })
    }

    /// Sends what is left and stops exporting, blocking (the process's
    /// `exit` handler calls it: nothing asynchronous runs there).
    #[napi(catch_unwind)]
    pub fn shutdown_blocking(&self) -> napi::Result<()> {
        self.exporter
            .shutdown()
            .map_err(|e| config_error(format!("traces: shutting down failed: {e}")))
    }
}
