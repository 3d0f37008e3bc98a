//! OpenTelemetry traces: when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, the GenAI spans of runs
//! (`invoke_agent`, `chat`, `execute_tool`: `parlance_agent::telemetry`)
//! are exported with OTLP over HTTP/protobuf, in batches, from a thread
//! of their own. Unset, nothing is built and the spans cost nothing.
//!
//! The SDK reads the standard variables: `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME` (default
//! `parlance`), `OTEL_BSP_SCHEDULE_DELAY` and the other batch settings.
//! Only `http/protobuf` is spoken: another `OTEL_EXPORTER_OTLP_PROTOCOL`
//! is an error rather than a silent surprise.

use opentelemetry::trace::TracerProvider;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::registry::Registry;

type Boxed = Box<dyn Layer<Registry> + Send + Sync>;

fn set(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| !v.trim().is_empty())
}

/// The exporting layer and its provider (to flush at exit), or `None`
/// when no endpoint is set.
pub fn layer() -> Result<Option<(Boxed, SdkTracerProvider)>, String> {
    if !set("OTEL_EXPORTER_OTLP_ENDPOINT") && !set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return Ok(None);
    }
    for var in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Ok(p) = std::env::var(var)
            && !p.is_empty()
            && p != "http/protobuf"
        {
            return Err(format!("{var}: only http/protobuf is supported, got {p:?}"));
        }
    }
    // The exporter's HTTP client (reqwest) needs the process's TLS provider.
    parlance_providers::transport::install_crypto();
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()
        .map_err(|e| format!("OTEL_EXPORTER_OTLP_ENDPOINT: {e}"))?;
    let service = std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| "parlance".into());
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
    Ok(Some((layer, provider)))
}
