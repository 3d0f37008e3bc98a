//! Traces from the packages: the GenAI spans of every run exported with
//! OTLP (`parlance_otel`), for a Python or Node process that asks
//! (`export_traces(...)` / `exportTraces({...})`). Exporting installs the
//! process's `tracing` subscriber, so the runtime's log records, which
//! `tracing` gives to `log` only while no subscriber is set, are handed to
//! `log` by the subscriber itself ([`ToLog`]): Python's `logging` and the
//! Node logger keep receiving them.

use parlance_otel::{Exporter, Settings};
use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};

use crate::{BindError, Dialect};

/// The settings, in snake_case.
pub const NAMES: [&str; 4] = ["endpoint", "headers", "service_name", "protocol"];

fn string(what: &str, v: &Value) -> Result<String, BindError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| BindError::config(format!("{what}: expected a string, got {v}")))
}

/// Reads the export's settings (an object in dialect `d`; null is unset):
/// `endpoint` (the collector's base URL), `headers`, `service_name`,
/// `protocol` (`http/protobuf` or `http/json`).
pub fn settings(v: &Value, d: Dialect) -> Result<Settings, BindError> {
    let Value::Object(map) = v else {
        return Err(BindError::config(format!(
            "traces: expected {} of settings, got {v}",
            d.object()
        )));
    };
    let mut s = Settings::default();
    for (key, v) in map {
        if v.is_null() {
            continue;
        }
        let Some(snake) = NAMES.iter().find(|n| d.name(n) == *key) else {
            let known: Vec<String> = NAMES.iter().map(|n| d.name(n)).collect();
            return Err(BindError::config(format!(
                "traces: unknown setting {key:?} (known: {})",
                known.join(", ")
            )));
        };
        let what = format!("traces: {key}");
        match *snake {
            "endpoint" => s.endpoint = Some(string(&what, v)?),
            "service_name" => s.service_name = Some(string(&what, v)?),
            "protocol" => s.protocol = Some(string(&what, v)?),
            "headers" => {
                let Value::Object(h) = v else {
                    return Err(BindError::config(format!(
                        "{what}: expected {} of header names and values, got {v}",
                        d.object()
                    )));
                };
                for (name, value) in h {
                    s.headers
                        .push((name.clone(), string(&format!("{what}.{name}"), value)?));
                }
            }
            _ => unreachable!("every name of NAMES has its arm"),
        }
    }
    Ok(s)
}

/// Starts exporting: every run's spans from now on go to the collector.
/// An error when no endpoint is given nor set in `OTEL_EXPORTER_OTLP_ENDPOINT`,
/// when a setting cannot work, or when this process already exports (or
/// has a `tracing` subscriber of its own).
pub fn export(settings: &Settings) -> Result<Exporter, BindError> {
    let layered = parlance_otel::layer::<tracing_subscriber::Registry>(settings)
        .map_err(|e| BindError::config(format!("traces: {e}")))?;
    let Some((layer, exporter)) = layered else {
        return Err(BindError::config(
            "traces: no endpoint (give one, or set OTEL_EXPORTER_OTLP_ENDPOINT)",
        ));
    };
    let subscriber = tracing_subscriber::registry().with(layer).with(ToLog);
    tracing::subscriber::set_global_default(subscriber).map_err(|_| {
        BindError::config("traces: this process already exports its traces (call it once)")
    })?;
    Ok(exporter)
}

/// Hands each `tracing` event to `log`, as `tracing`'s own `log` feature
/// does while no subscriber is set: `message key=value...`, at the
/// event's level and target.
pub struct ToLog;

struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write;
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            self.record_debug(field, &value);
        }
    }
}

impl<S: Subscriber> Layer<S> for ToLog {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let meta = event.metadata();
        let level = match *meta.level() {
            tracing::Level::ERROR => log::Level::Error,
            tracing::Level::WARN => log::Level::Warn,
            tracing::Level::INFO => log::Level::Info,
            tracing::Level::DEBUG => log::Level::Debug,
            tracing::Level::TRACE => log::Level::Trace,
        };
        if level > log::max_level() {
            return;
        }
        let logger = log::logger();
        let lm = log::Metadata::builder()
            .level(level)
            .target(meta.target())
            .build();
        if !logger.enabled(&lm) {
            return;
        }
        let mut text = Text(String::new());
        event.record(&mut text);
        logger.log(
            &log::Record::builder()
                .metadata(lm)
                .args(format_args!("{}", text.0.trim_start()))
                .module_path(meta.module_path())
                .file(meta.file())
                .line(meta.line())
                .build(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_are_read_in_each_dialect_and_errors_name_them() {
        let s = settings(
            &json!({"endpoint": "http://127.0.0.1:4318", "serviceName": "shop", "headers": {"x-key": "k"}, "protocol": "http/json"}),
            Dialect::Node,
        )
        .unwrap();
        assert_eq!(s.service_name.as_deref(), Some("shop"));
        assert_eq!(s.headers, [("x-key".to_string(), "k".to_string())]);
        let e = |v: Value, d| settings(&v, d).unwrap_err().text;
        assert_eq!(
            e(json!({"service_name": 3}), Dialect::Python),
            "traces: service_name: expected a string, got 3"
        );
        assert_eq!(
            e(json!({"headers": {"x": 1}}), Dialect::Python),
            "traces: headers.x: expected a string, got 1"
        );
        assert!(e(json!({"service_name": "x"}), Dialect::Node).starts_with(
            "traces: unknown setting \"service_name\" (known: endpoint, headers, serviceName"
        ));
    }
}
