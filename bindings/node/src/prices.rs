//! `cost`: what a usage cost under the price table (the built-in
//! genai-prices one, or a file's ahead of it), the Rust function itself.

use napi_derive::napi;
use parlance::Usage;

use crate::errors::{bind, parse};

/// The cost in US dollars of `usage` (canonical JSON text) on `model`
/// (`provider:model`); `null` when the table does not know the model.
/// `prices`: a JSON price table file consulted before the built-in one.
#[napi(catch_unwind)]
pub fn cost(model: String, usage: String, prices: Option<String>) -> napi::Result<Option<f64>> {
    let v = parse("usage", &usage)?;
    let usage = Usage::from_value(&v).map_err(|e| bind(e.under("usage").into()))?;
    parlance_bindings::prices::cost(&model, &usage, prices.as_deref().map(std::path::Path::new))
        .map_err(bind)
}
