//! `cost`: what a usage cost on a model (`provider:model`) under the
//! price table — a JSON file's, consulted first, then the built-in one
//! (genai-prices) — for both packages' `cost` functions.

use std::path::Path;

use parlance::{PriceTable, Usage};

use crate::error::BindError;

/// The cost in US dollars; `None` when the table does not know the model.
pub fn cost(model: &str, usage: &Usage, prices: Option<&Path>) -> Result<Option<f64>, BindError> {
    let Some((provider, id)) = model.split_once(':') else {
        return Err(BindError::config(format!(
            "model {model:?}: expected provider:model, e.g. anthropic:claude-sonnet-4-5"
        )));
    };
    Ok(match prices {
        None => PriceTable::builtin().cost(provider, id, usage),
        Some(path) => PriceTable::from_file(path)
            .map_err(BindError::config)?
            .then(PriceTable::builtin().clone())
            .cost(provider, id, usage),
    })
}
