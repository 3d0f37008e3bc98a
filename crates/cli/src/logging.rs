//! Logs on standard error: `RUST_LOG` chooses what (default: `info` for
//! `serve`, `warn` otherwise), `--log-format json` (or
//! `PARLANCE_LOG_FORMAT=json`) writes one JSON object per line. Every line
//! goes through the server's secret scrubber before it is written.

use std::io::Write;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::{FilterExt, filter_fn};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::prelude::*;

/// Standard error, with configured secrets scrubbed from each write (the
/// formatter writes each event in one piece).
struct Scrubbed;

impl Write for Scrubbed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(parlance_assemble::secrets::redact(&text).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> MakeWriter<'a> for Scrubbed {
    type Writer = Scrubbed;
    fn make_writer(&'a self) -> Scrubbed {
        Scrubbed
    }
}

/// What must happen before the process exits: the spans still in the
/// exporter's batch are sent. Call [`Guard::flush`] (dropping it does too).
pub struct Guard(Option<parlance_otel::Exporter>);

impl Guard {
    /// Sends the spans not yet exported (waits for the exporter).
    pub fn flush(&mut self) {
        if let Some(p) = self.0.take()
            && let Err(e) = p.shutdown()
        {
            eprintln!("warning: exporting the last traces failed: {e}");
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Installs the subscriber. `format` is `text` or `json`. With
/// `OTEL_EXPORTER_OTLP_ENDPOINT` set, the GenAI spans of runs
/// (`parlance_agent::telemetry`) are exported too (`parlance_otel`).
pub fn init(default_level: &str, format: &str) -> Result<Guard, String> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    // The GenAI spans are for the exporter, not the log lines.
    let filter = filter.and(filter_fn(|m| {
        m.target() != parlance_agent::telemetry::TARGET
    }));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(Scrubbed)
        .with_target(true);
    let fmt = match format {
        "json" => fmt.json().flatten_event(true).with_filter(filter).boxed(),
        "text" => fmt.with_ansi(false).with_filter(filter).boxed(),
        other => {
            return Err(format!(
                "--log-format: expected text or json, got {other:?}"
            ));
        }
    };
    let mut layers = vec![fmt];
    let provider = match parlance_otel::layer(&parlance_otel::Settings::default())? {
        Some((layer, provider)) => {
            layers.push(layer);
            Some(provider)
        }
        None => None,
    };
    tracing_subscriber::registry()
        .with(layers)
        .try_init()
        .map_err(|e| format!("installing the log subscriber: {e}"))?;
    Ok(Guard(provider))
}
