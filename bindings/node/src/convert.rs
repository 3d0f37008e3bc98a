//! `format.convert`: the providers crate's one conversion
//! (`parlance_providers::convert`, what `parlance convert` and the Python
//! package's `format.convert` call: same names, same errors).

use napi::bindgen_prelude::{Buffer, Either};
use napi_derive::napi;
use parlance::providers::convert::{Input, Kind, Params, convert as shared};
use serde_json::json;

use crate::errors::bind;

/// Converts `value` (JSON text of a `request` or a `response`, or a
/// recorded `stream`: SSE text, JSON lines, a JSON list of events, or the
/// bytes of a Bedrock ConverseStream body) from
/// one format to another: `canonical`, `openai-chat`, `openai-responses`,
/// `anthropic`, `gemini`... Writing a provider's request needs the model
/// (`model`, or the one the input names). Gives JSON text of
/// `{"output": ..., "warnings": [...]}` (what was dropped or degraded).
#[napi(catch_unwind)]
pub fn convert(
    value: Either<String, Buffer>,
    from: String,
    to: String,
    kind: String,
    model: Option<String>,
) -> napi::Result<String> {
    let kind = Kind::parse(&kind).map_err(|e| bind(e.into()))?;
    // Bytes: UTF-8 text, or a Bedrock stream's binary event-stream frames.
    let input = match &value {
        Either::A(text) => Input::Text(text),
        Either::B(bytes) => Input::Bytes(bytes.as_ref()),
    };
    let out = shared(input, &from, &to, kind, model.as_deref(), &Params::RUST)
        .map_err(|e| bind(e.into()))?;
    Ok(json!({"output": out.output, "warnings": out.warnings}).to_string())
}
