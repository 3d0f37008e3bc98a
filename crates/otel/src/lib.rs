//! OpenTelemetry traces of runs: the GenAI spans (`invoke_agent`, `chat`,
//! `execute_tool`: `parlance_agent::telemetry`) exported with OTLP over
//! HTTP, in batches, from a thread of their own. One place for the CLI
//! (and `parlance serve`), which exports when `OTEL_EXPORTER_OTLP_ENDPOINT`
//! is set, and for the Python and npm packages, which export when asked.
//!
//! What [`Settings`] leaves unset comes from the standard variables:
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`),
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`,
//! `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_SERVICE_NAME` (default
//! `parlance`), `OTEL_BSP_SCHEDULE_DELAY` and the other batch settings.
//! `http/protobuf` (the default) and `http/json` are spoken; another
//! protocol is an error rather than a silent surprise.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! let settings = parlance_otel::Settings {
//!     endpoint: Some("http://localhost:4318".into()),
//!     ..Default::default()
//! };
//! if let Some((layer, exporter)) = parlance_otel::layer(&settings).unwrap() {
//!     tracing_subscriber::registry().with(layer).init();
//!     // ... runs ...
//!     exporter.shutdown(); // sends what is left
//! }
//! ```

use opentelemetry::trace::TracerProvider;
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::LookupSpan;

/// Where the spans go; what is unset comes from the standard `OTEL_*`
/// variables.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The collector's base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// (`http://localhost:4318`): spans are sent to its `/v1/traces`.
    pub endpoint: Option<String>,
    /// Headers sent with each export (an API key...), added to
    /// `OTEL_EXPORTER_OTLP_HEADERS`.
    pub headers: Vec<(String, String)>,
    /// The `service.name` resource attribute (default `OTEL_SERVICE_NAME`,
    /// else `parlance`).
    pub service_name: Option<String>,
    /// `http/protobuf` or `http/json` (default `OTEL_EXPORTER_OTLP_PROTOCOL`,
    /// else `http/protobuf`).
    pub protocol: Option<String>,
}

fn env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

/// The exporter behind a [`layer`]: flush it before the process ends.
#[derive(Debug, Clone)]
pub struct Exporter {
    provider: SdkTracerProvider,
}

impl Exporter {
    /// Sends the spans ended so far and waits for the collector (up to
    /// the export timeout). The error says why it could not.
    pub fn flush(&self) -> Result<(), String> {
        self.provider.force_flush().map_err(|e| e.to_string())
    }

    /// Sends what is left and stops exporting.
    pub fn shutdown(&self) -> Result<(), String> {
        self.provider.shutdown().map_err(|e| e.to_string())
    }
}

fn protocol(settings: &Settings) -> Result<Protocol, String> {
    let given = match &settings.protocol {
        Some(p) => Some(("protocol", p.clone())),
        None => [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ]
        .into_iter()
        .find_map(|v| env(v).map(|p| (v, p))),
    };
    match given {
        None => Ok(Protocol::HttpBinary),
        Some((_, p)) if p == "http/protobuf" => Ok(Protocol::HttpBinary),
        Some((_, p)) if p == "http/json" => Ok(Protocol::HttpJson),
        Some((what, p)) => Err(format!(
            "{what}: expected http/protobuf or http/json, got {p:?}"
        )),
    }
}

/// The layer exporting the GenAI spans, and its exporter; `None` when no
/// endpoint is given nor set in the environment (nothing is built: the
/// spans then cost nothing). A setting that cannot work is an error
/// naming it.
#[allow(clippy::type_complexity)]
pub fn layer<S>(
    settings: &Settings,
) -> Result<Option<(Box<dyn Layer<S> + Send + Sync>, Exporter)>, String>
where
    S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    let endpoint = match &settings.endpoint {
        Some(e) => {
            let base = e.trim_end_matches('/');
            if !(base.starts_with("http://") || base.starts_with("https://")) {
                return Err(format!(
                    "endpoint: expected an http:// or https:// URL, got {e:?}"
                ));
            }
            Some(format!("{base}/v1/traces"))
        }
        None if env("OTEL_EXPORTER_OTLP_ENDPOINT").is_some()
            || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some() =>
        {
            None
        }
        None => return Ok(None),
    };
    let protocol = protocol(settings)?;
    // The exporter's HTTP client (reqwest) needs the process's TLS provider.
    parlance_providers::transport::install_crypto();
    let mut builder = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(protocol);
    if let Some(e) = endpoint {
        builder = builder.with_endpoint(e);
    }
    if !settings.headers.is_empty() {
        builder = builder.with_headers(settings.headers.iter().cloned().collect());
    }
    let exporter = builder.build().map_err(|e| format!("OTLP exporter: {e}"))?;
    let service = settings
        .service_name
        .clone()
        .or_else(|| env("OTEL_SERVICE_NAME"))
        .unwrap_or_else(|| "parlance".into());
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name(service).build())
        .build();
    let tracer = provider.tracer("parlance");
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(
            Targets::new().with_target(parlance_agent::telemetry::TARGET, tracing::Level::INFO),
        )
        .boxed();
    Ok(Some((layer, Exporter { provider })))
}

/// Exports the GenAI spans of this process, for a program with no
/// `tracing` subscriber of its own (otherwise add [`layer`] to yours):
/// installs one holding only the export layer. `None` when no endpoint is
/// given nor set in the environment; an error naming the setting when one
/// cannot work, or when the process has a subscriber already.
///
/// ```no_run
/// let settings = parlance_otel::Settings {
///     endpoint: Some("http://localhost:4318".into()),
///     service_name: Some("orders".into()),
///     ..Default::default()
/// };
/// let exporter = parlance_otel::init(&settings).unwrap();
/// // ... runs ...
/// if let Some(e) = exporter {
///     e.flush().unwrap(); // sends the spans now
/// }
/// ```
pub fn init(settings: &Settings) -> Result<Option<Exporter>, String> {
    use tracing_subscriber::layer::SubscriberExt;
    let Some((layer, exporter)) = layer::<tracing_subscriber::Registry>(settings)? else {
        return Ok(None);
    };
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer)).map_err(
        |_| {
            "this process has a tracing subscriber already: add parlance_otel::layer to it"
                .to_string()
        },
    )?;
    Ok(Some(exporter))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing_subscriber::Registry;

    #[test]
    fn settings_that_cannot_work_are_refused_by_name() {
        let bad = |s: Settings| layer::<Registry>(&s).err().unwrap();
        assert_eq!(
            bad(Settings {
                endpoint: Some("localhost:4318".into()),
                ..Default::default()
            }),
            "endpoint: expected an http:// or https:// URL, got \"localhost:4318\""
        );
        assert_eq!(
            bad(Settings {
                endpoint: Some("http://127.0.0.1:4318".into()),
                protocol: Some("grpc".into()),
                ..Default::default()
            }),
            "protocol: expected http/protobuf or http/json, got \"grpc\""
        );
    }
}
