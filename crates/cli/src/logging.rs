//! Logs on standard error: `RUST_LOG` chooses what (default: `info` for
//! `serve`, `warn` otherwise), `--log-format json` (or
//! `PARLANCE_LOG_FORMAT=json`) writes one JSON object per line. Every line
//! goes through the server's secret scrubber before it is written.

use std::io::Write;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// Standard error, with configured secrets scrubbed from each write (the
/// formatter writes each event in one piece).
struct Scrubbed;

impl Write for Scrubbed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(parlance_server::secrets::redact(&text).as_bytes())?;
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

/// Installs the subscriber. `format` is `text` or `json`.
pub fn init(default_level: &str, format: &str) -> Result<(), String> {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(Scrubbed)
        .with_target(true);
    let installed = match format {
        "json" => builder.json().flatten_event(true).try_init(),
        "text" => builder.with_ansi(false).try_init(),
        other => {
            return Err(format!(
                "--log-format: expected text or json, got {other:?}"
            ));
        }
    };
    installed.map_err(|e| format!("installing the log subscriber: {e}"))
}
