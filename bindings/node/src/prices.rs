//! `cost`: what a usage cost under the price table (the built-in
//! genai-prices one, or a file's ahead of it), the Rust function itself.

use napi_derive::napi;
use parlance::{PriceTable, Usage};

use crate::errors::{bind, config_error, parse};

/// The cost in US dollars of `usage` (canonical JSON text) on `model`
/// (`provider:model`); `null` when the table does not know the model.
/// `prices`: a JSON price table file consulted before the built-in one.
#[napi(catch_unwind)]
pub fn cost(model: String, usage: String, prices: Option<String>) -> napi::Result<Option<f64>> {
    let Some((provider, id)) = model.split_once(':') else {
        return Err(config_error(format!(
            "model {model:?}: expected provider:model, e.g. anthropic:claude-sonnet-4-5"
        )));
    };
    let v = parse("usage", &usage)?;
    let usage = Usage::from_value(&v).map_err(|e| bind(e.under("usage").into()))?;
    let builtin = PriceTable::builtin();
    Ok(match prices {
        None => builtin.cost(provider, id, &usage),
        Some(path) => PriceTable::from_file(&path)
            .map_err(|e| config_error(e.to_string()))?
            .then(builtin.clone())
            .cost(provider, id, &usage),
    })
}
