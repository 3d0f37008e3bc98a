//! Threads: a `Store` (SQLite or PostgreSQL). Opening and every operation
//! are the bindings' shared ones (`parlance_bindings::store`); runs on its
//! threads are work descriptions given to the agent (`agent.rs`).

use napi::Env;
use napi::bindgen_prelude::AsyncBlock;
use napi_derive::napi;
use parlance::store::Store;
use parlance_bindings::Dialect;
use parlance_bindings::store::{StoreOptions, open, query};

use crate::errors::{bind, parse};
use crate::task::promise;

/// An open store.
#[napi]
pub struct NativeStore {
    pub(crate) store: Store,
}

/// Opens a store (migrating its schema): `sqlite://parlance.db`,
/// `sqlite::memory:`, `postgres://...`; `options`: JSON text of
/// `{"lease": ms, "redact": [secrets]}`.
#[napi(catch_unwind)]
pub fn open_store(
    env: &Env,
    url: String,
    options: Option<String>,
) -> napi::Result<AsyncBlock<NativeStore>> {
    let options = match options {
        Some(t) => Some(parse("options", &t)?),
        None => None,
    };
    let options = StoreOptions::read(options.as_ref(), Dialect::Node).map_err(bind)?;
    promise(env, async move {
        let store = open(&url, options).await.map_err(bind)?;
        Ok(NativeStore { store })
    })
}

#[napi]
impl NativeStore {
    /// One operation (JSON text of `{"op": "thread", "threadId": ...}`:
    /// see `parlance_bindings::store::query`); a promise of its answer's
    /// JSON text.
    #[napi(catch_unwind)]
    pub fn query(&self, env: &Env, q: String) -> napi::Result<AsyncBlock<String>> {
        let q = parse("query", &q)?;
        let store = self.store.clone();
        promise(env, async move {
            let v = query(&store, &q, Dialect::Node).await.map_err(bind)?;
            Ok(v.to_string())
        })
    }

    /// `postgres` or `sqlite`.
    #[napi(getter)]
    pub fn kind(&self) -> &'static str {
        if self.store.is_postgres() {
            "postgres"
        } else {
            "sqlite"
        }
    }
}
