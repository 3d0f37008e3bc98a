//! The runtime's logs to JavaScript: its `tracing` events (emitted as
//! `log` records, no subscriber being set in Node) go to one function of
//! the package's JavaScript, called on Node's main thread, which hands
//! them to the user's logger (`setLogger`) or, by default, makes warnings
//! and errors process warnings (`ParlanceWarning`) — a request's dropped
//! reasoning among them.

use std::sync::OnceLock;

use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

type Record = (String, String, String);
type SinkFn = ThreadsafeFunction<Record, (), Record, napi::Status, false, true>;

struct JsLogger {
    sink: SinkFn,
}

static LOGGER: OnceLock<JsLogger> = OnceLock::new();

impl log::Log for JsLogger {
    fn enabled(&self, m: &log::Metadata) -> bool {
        // Span bookkeeping (`tracing::span`) is not news to a user.
        m.level() <= log::max_level() && !m.target().starts_with("tracing")
    }

    fn log(&self, r: &log::Record) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let level = match r.level() {
            log::Level::Error => "error",
            log::Level::Warn => "warn",
            log::Level::Info => "info",
            log::Level::Debug => "debug",
            log::Level::Trace => "trace",
        };
        // Non-blocking: a log line never waits for the main thread.
        self.sink.call(
            (level.into(), r.target().into(), r.args().to_string()),
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }

    fn flush(&self) {}
}

fn level_filter(level: &str) -> napi::Result<log::LevelFilter> {
    Ok(match level {
        "off" => log::LevelFilter::Off,
        "error" => log::LevelFilter::Error,
        "warn" => log::LevelFilter::Warn,
        "info" => log::LevelFilter::Info,
        "debug" => log::LevelFilter::Debug,
        "trace" => log::LevelFilter::Trace,
        other => {
            return Err(napi::Error::new(
                napi::Status::InvalidArg,
                format!("level: expected off, error, warn, info, debug or trace, not {other:?}"),
            ));
        }
    })
}

/// Installs `sink(level, target, message)` (once; the package's
/// JavaScript does it when it loads) and logs records at `level` or more
/// severe. The sink does not keep the process alive.
#[napi_derive::napi(catch_unwind)]
pub fn set_log_sink(sink: Function<'_, Record, ()>, level: String) -> napi::Result<()> {
    let filter = level_filter(&level)?;
    if LOGGER.get().is_none() {
        let sink = sink
            .build_threadsafe_function()
            .weak::<true>()
            .callee_handled::<false>()
            .build()?;
        if LOGGER.set(JsLogger { sink }).is_ok()
            && let Some(l) = LOGGER.get()
        {
            // Another logger already set (another addon's) keeps its place.
            let _ = log::set_logger(l);
        }
    }
    log::set_max_level(filter);
    Ok(())
}

/// The level from which records reach the sink.
#[napi_derive::napi(catch_unwind)]
pub fn set_log_level(level: String) -> napi::Result<()> {
    log::set_max_level(level_filter(&level)?);
    Ok(())
}
