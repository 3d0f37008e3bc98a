//! Why a model could not be built (before any request was sent).

/// A model could not be built; nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// No API key was given and its variable is not set.
    #[error("{}", missing_key(.vars))]
    MissingKey {
        /// The variables looked at, in order.
        vars: Vec<String>,
    },
    /// The model string names no known provider.
    #[error("unknown provider {name:?} (expected one of: {known})")]
    UnknownProvider {
        /// The name given.
        name: String,
        /// The names known.
        known: String,
    },
    /// The model string cannot be read.
    #[error("model {spec:?}: {why}")]
    BadSpec {
        /// The string given.
        spec: String,
        /// What is wrong with it.
        why: String,
    },
    /// `local` names the embedded model, which this crate does not build.
    #[error(
        "model {spec:?}: the embedded model is built by parlance-local (the `local` feature of parlance-ai)"
    )]
    Local {
        /// The string given.
        spec: String,
    },
    /// The embedded model could not be loaded (where `local` is built).
    #[error("the embedded model {path}: {message}")]
    LocalModel {
        /// The GGUF file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A model of a format of your own needs a base URL.
    #[error("no base URL for this {format} model: set one with .base_url()")]
    MissingBaseUrl {
        /// The wire format's name.
        format: &'static str,
    },
    /// A provider with no public base URL (Azure, vLLM) was given none.
    #[error(
        "{var} is not set: {provider} has no public base URL (set it, or give one with .base_url())"
    )]
    NoBaseUrl {
        /// The provider's name.
        provider: &'static str,
        /// The variable that would hold it.
        var: &'static str,
    },
    /// A setting's value cannot be used (an Azure api-version or
    /// deployment name that cannot go into a URL...).
    #[error("{setting} {value:?}: {why}")]
    BadSetting {
        /// What was set.
        setting: String,
        /// Its value (never a key).
        value: String,
        /// What is wrong with it.
        why: String,
    },
    /// The base URL is not an http(s) URL.
    #[error("base URL {url:?}: {why}")]
    BadBaseUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// A header's name or value cannot be sent.
    #[error("header {name:?}: {why}")]
    BadHeader {
        /// The header's name (a key is never shown).
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// AWS settings (region, credentials, profile files) are missing or
    /// cannot be read.
    #[error("AWS: {message}")]
    Aws {
        /// What is wrong.
        message: String,
    },
    /// The HTTP client could not be set up.
    #[error("HTTP client: {message}")]
    Client {
        /// What failed.
        message: String,
    },
}

fn missing_key(vars: &[String]) -> String {
    match vars {
        [] => "no API key given".to_string(),
        [one] => format!("{one} is not set"),
        [first, rest @ ..] => format!("{first} is not set (nor {})", rest.join(", ")),
    }
}
