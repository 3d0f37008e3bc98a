//! `pullLocalModel`: the embedded model's file into the cache
//! (`parlance_bindings::local`), as `parlance model pull` does.

use napi::Env;
use napi::bindgen_prelude::AsyncBlock;
use napi_derive::napi;

use crate::errors::{bind, config_error};
use crate::task::promise;

/// Fetches the default local model into Parlance's model cache when it is
/// not there (off the main thread); a promise of its path.
#[napi(catch_unwind)]
pub fn pull_local_model(env: &Env) -> napi::Result<AsyncBlock<String>> {
    promise(env, async move {
        tokio::task::spawn_blocking(parlance_bindings::local::pull_default)
            .await
            .map_err(|e| config_error(format!("the local model could not be fetched: {e}")))?
            .map_err(bind)
    })
}

/// Where the default local model is kept, whether or not it is there yet
/// (`null` in a build without the local model).
#[napi]
pub fn local_model_path() -> Option<String> {
    parlance_bindings::local::default_path()
}
