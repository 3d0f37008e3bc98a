//! What a run tells the outside: `tracing` spans named after the
//! OpenTelemetry GenAI semantic conventions (`invoke_agent` for a run,
//! `chat` for a model call, `execute_tool` for a tool call, with the
//! `gen_ai.*` attributes), and Prometheus-style metrics through the
//! `metrics` facade.
//!
//! Both cost next to nothing when nobody listens: a span's fields are
//! computed only when a subscriber wants the span (one atomic load
//! otherwise), and metrics are recorded only after [`enable_metrics`]
//! (a server calls it when it installs its recorder).
//!
//! Message content (prompts, answers, tool arguments and results) goes on
//! the spans only when [`capture_content`] says so
//! (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parlance_format::{Message, ToolStatus, Usage};

/// The target every GenAI span has: filter on it to keep only these.
pub const TARGET: &str = "parlance::genai";

/// Runs finished, by `status` (a resume or retry counts as a run).
pub const RUNS: &str = "parlance_runs_total";
/// How long runs took, in seconds, by `status`.
pub const RUN_SECONDS: &str = "parlance_run_duration_seconds";
/// Runs in progress in this process.
pub const RUNS_IN_FLIGHT: &str = "parlance_runs_in_flight";
/// Model calls, by `provider`, `model` and `outcome` (`ok`, `error`).
pub const MODEL_CALLS: &str = "parlance_model_calls_total";
/// How long model calls took, in seconds, by `provider`, `model`, `outcome`.
pub const MODEL_SECONDS: &str = "parlance_model_call_duration_seconds";
/// Tokens, by `provider`, `model` and `type` (`input`, `output`).
pub const TOKENS: &str = "parlance_model_tokens_total";
/// Counter: what model calls cost, in nano-dollars (1e-9 US dollars; a
/// whole number, as counters are), by provider and model. Calls of models
/// the price table does not know are not counted.
pub const COST: &str = "parlance_model_cost_nanodollars_total";
/// Tool calls, by `tool` and `status` (`ok`, `error`, `tool_failed`, ...).
pub const TOOL_CALLS: &str = "parlance_tool_calls_total";
/// How long tool calls took, in seconds, by `tool` and `status`.
pub const TOOL_SECONDS: &str = "parlance_tool_call_duration_seconds";
/// How long storing a run's step took, in seconds, by `outcome`.
pub const STORE_SECONDS: &str = "parlance_store_write_duration_seconds";

static METRICS: AtomicBool = AtomicBool::new(false);

/// Starts recording metrics (to the `metrics` recorder installed by the
/// caller). Until then nothing is recorded, not even label strings built.
pub fn enable_metrics() {
    METRICS.store(true, Ordering::Relaxed);
}

fn metrics_on() -> bool {
    METRICS.load(Ordering::Relaxed)
}

/// Whether spans carry message content (off unless
/// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `true`): it
/// may hold what users would not want in a tracing backend.
pub fn capture_content() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
            .is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
    })
}

/// Counts a run in flight while it lives.
pub(crate) struct InFlight(bool);

impl InFlight {
    pub(crate) fn start() -> InFlight {
        let on = metrics_on();
        if on {
            metrics::gauge!(RUNS_IN_FLIGHT).increment(1.0);
        }
        InFlight(on)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0 {
            metrics::gauge!(RUNS_IN_FLIGHT).decrement(1.0);
        }
    }
}

/// A run's span: `invoke_agent {name}`.
pub(crate) fn run_span(name: Option<&str>, provider: &str, model: &str) -> tracing::Span {
    tracing::info_span!(
        target: TARGET,
        "invoke_agent",
        otel.name = %format_args!("invoke_agent {}", name.unwrap_or("agent")),
        otel.kind = "internal",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = name,
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.conversation.id = tracing::field::Empty,
        parlance.run.id = tracing::field::Empty,
        parlance.run.status = tracing::field::Empty,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    )
}

/// Records how a run ended, on its span and in the metrics.
pub(crate) fn run_ended(span: &tracing::Span, r: &parlance_format::Response, elapsed: Duration) {
    if !span.is_disabled() {
        span.record("parlance.run.id", r.id.as_deref());
        span.record("gen_ai.conversation.id", r.thread_id.as_deref());
        span.record("parlance.run.status", r.status.as_str());
        span.record("gen_ai.usage.input_tokens", r.usage.input_tokens as i64);
        span.record("gen_ai.usage.output_tokens", r.usage.output_tokens as i64);
        if let Some(e) = &r.error {
            span.record("error.type", e.code.as_str());
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_description", e.message.as_str());
        }
    }
    if metrics_on() {
        let status = r.status.as_str();
        metrics::counter!(RUNS, "status" => status).increment(1);
        metrics::histogram!(RUN_SECONDS, "status" => status).record(elapsed.as_secs_f64());
    }
}

/// A model call's span: `chat {model}`.
pub(crate) fn chat_span(
    provider: &str,
    model: &str,
    request: &impl serde::Serialize,
) -> tracing::Span {
    let span = tracing::info_span!(
        target: TARGET,
        "chat",
        otel.name = %format_args!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = provider,
        gen_ai.request.model = model,
        gen_ai.response.model = tracing::field::Empty,
        gen_ai.response.id = tracing::field::Empty,
        gen_ai.response.finish_reasons = tracing::field::Empty,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        gen_ai.input.messages = tracing::field::Empty,
        gen_ai.output.messages = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    );
    if !span.is_disabled() && capture_content() {
        span.record(
            "gen_ai.input.messages",
            serde_json::to_string(request).unwrap_or_default(),
        );
    }
    span
}

/// Records a model call's outcome, on its span and in the metrics.
pub(crate) fn chat_ended(
    span: &tracing::Span,
    provider: &str,
    model: &str,
    outcome: Result<&Message, &parlance_model::ModelError>,
    elapsed: Duration,
) {
    let usage: Option<Usage> = outcome.ok().and_then(|m| m.usage);
    let cost: Option<f64> = outcome.ok().and_then(|m| m.cost);
    if !span.is_disabled() {
        match outcome {
            Ok(m) => {
                span.record("gen_ai.response.model", m.model.as_deref().unwrap_or(model));
                span.record("gen_ai.response.id", m.id.as_deref());
                if let Some(f) = m.finish_reason {
                    // A list in the conventions: one reason per choice.
                    span.record(
                        "gen_ai.response.finish_reasons",
                        format!("[\"{}\"]", f.as_str()),
                    );
                }
                if let Some(u) = usage {
                    span.record("gen_ai.usage.input_tokens", u.input_tokens as i64);
                    span.record("gen_ai.usage.output_tokens", u.output_tokens as i64);
                }
                if capture_content() {
                    span.record(
                        "gen_ai.output.messages",
                        serde_json::to_string(m).unwrap_or_default(),
                    );
                }
            }
            Err(e) => {
                span.record("error.type", e.kind());
                span.record("otel.status_code", "ERROR");
                span.record("otel.status_description", e.to_string());
            }
        }
    }
    if metrics_on() {
        // A fallback's answer is labelled with the model that wrote it.
        let (provider, model) = match outcome {
            Ok(Message {
                provider: Some(p),
                model: m,
                ..
            }) if provider == "fallback" => (p.clone(), m.clone().unwrap_or_default()),
            _ => (provider.to_string(), model.to_string()),
        };
        let outcome = if outcome.is_ok() { "ok" } else { "error" };
        metrics::counter!(MODEL_CALLS, "provider" => provider.clone(), "model" => model.clone(), "outcome" => outcome)
            .increment(1);
        metrics::histogram!(MODEL_SECONDS, "provider" => provider.clone(), "model" => model.clone(), "outcome" => outcome)
            .record(elapsed.as_secs_f64());
        if let Some(cost) = cost {
            metrics::counter!(COST, "provider" => provider.clone(), "model" => model.clone())
                .increment((cost * 1e9).round() as u64);
        }
        if let Some(u) = usage {
            metrics::counter!(TOKENS, "provider" => provider.clone(), "model" => model.clone(), "type" => "input")
                .increment(u.input_tokens);
            metrics::counter!(TOKENS, "provider" => provider, "model" => model, "type" => "output")
                .increment(u.output_tokens);
        }
    }
}

/// A tool call's span: `execute_tool {tool}`.
pub(crate) fn tool_span(tool: &str, call_id: &str, arguments: &serde_json::Value) -> tracing::Span {
    let span = tracing::info_span!(
        target: TARGET,
        "execute_tool",
        otel.name = %format_args!("execute_tool {tool}"),
        otel.kind = "internal",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        gen_ai.tool.type = "function",
        gen_ai.tool.call.arguments = tracing::field::Empty,
        gen_ai.tool.call.result = tracing::field::Empty,
        parlance.tool.status = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    );
    if !span.is_disabled() && capture_content() {
        span.record("gen_ai.tool.call.arguments", arguments.to_string());
    }
    span
}

/// Records a tool call's outcome, on its span and in the metrics. `known`:
/// whether the tool exists (the model may invent names: they are counted
/// under `tool="(unknown)"`, so that it cannot grow the label set).
pub(crate) fn tool_ended(
    span: &tracing::Span,
    result: &parlance_format::ToolResult,
    known: bool,
    elapsed: Duration,
) {
    let status = result.status;
    if !span.is_disabled() {
        span.record("parlance.tool.status", status.as_str());
        if status != ToolStatus::Ok {
            span.record("error.type", status.as_str());
            span.record("otel.status_code", "ERROR");
            let text: Vec<&str> = result.content.iter().filter_map(|b| b.as_text()).collect();
            span.record("otel.status_description", text.join("\n"));
        }
        if capture_content() {
            span.record(
                "gen_ai.tool.call.result",
                serde_json::to_string(&result.content).unwrap_or_default(),
            );
        }
    }
    if metrics_on() {
        let tool = if known {
            result.name.clone().unwrap_or_default()
        } else {
            "(unknown)".to_string()
        };
        let status = status.as_str();
        metrics::counter!(TOOL_CALLS, "tool" => tool.clone(), "status" => status).increment(1);
        metrics::histogram!(TOOL_SECONDS, "tool" => tool, "status" => status)
            .record(elapsed.as_secs_f64());
    }
}

/// Records how long storing a step took.
pub(crate) fn store_write(ok: bool, elapsed: Duration) {
    if metrics_on() {
        let outcome = if ok { "ok" } else { "error" };
        metrics::histogram!(STORE_SECONDS, "outcome" => outcome).record(elapsed.as_secs_f64());
    }
}
