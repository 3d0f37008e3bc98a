//! Why the server could not start.

use parlance_store::StoreError;

use crate::build::BuildError;

/// The server could not start: each names what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The store could not be opened, migrated or read.
    #[error("store {url}: {source}")]
    Store {
        /// The store's URL.
        url: String,
        /// Why.
        #[source]
        source: StoreError,
    },
    /// An agent of the configuration could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// `auth = "none"` and tokens: only one can hold.
    #[error("auth = \"none\" but tokens are configured: choose one")]
    AuthConflict,
    /// No tokens on an address other machines can reach.
    #[error(
        "refusing to listen on {listen} without API tokens: configure [[auth.tokens]] (or PARLANCE_API_TOKENS), listen on 127.0.0.1, or set auth = \"none\" to allow an open API"
    )]
    OpenApi {
        /// The address.
        listen: String,
    },
    /// The address could not be listened on (taken, not this machine's...).
    #[error("listen {listen}: {source}")]
    Listen {
        /// The address.
        listen: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("serving: {0}")]
    Serve(#[source] std::io::Error),
}
