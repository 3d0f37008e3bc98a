//! Threads: a `Store` (SQLite or PostgreSQL) and agent runs on its threads
//! through the Rust `ThreadRunner` (history loaded from the store, each
//! step committed as it completes, one active run per thread, paused runs
//! resumed from any process, failed runs retried).

use napi::Env;
use napi::bindgen_prelude::AsyncBlock;
use napi_derive::napi;
use parlance::store::{ResumeError, Store, StoreError, ThreadRunner};
use serde_json::{Value, json};

use crate::agent::NativeAgent;
use crate::errors::{decision_error, error, parse};
use crate::input;
use crate::task::promise;

/// The JavaScript error for a store error (`kind`: busy, not_found...).
pub fn store_error(e: &StoreError) -> napi::Error {
    let kind = match e {
        StoreError::Busy { .. } => "busy",
        StoreError::NotFound(_) => "not_found",
        StoreError::Conflict(_) => "conflict",
        StoreError::LeaseLost { .. } => "lease_lost",
        StoreError::Corrupt { .. } => "corrupt",
        StoreError::Unstorable(_) => "unstorable",
        StoreError::Database(_) => "database",
    };
    error("StoreError", e.to_string(), json!({"storeKind": kind}))
}

/// An open store.
#[napi]
pub struct NativeStore {
    store: Store,
}

/// Opens a store (migrating its schema): `sqlite://parlance.db`,
/// `sqlite::memory:`, `postgres://...`.
#[napi(catch_unwind)]
pub fn open_store(env: &Env, url: String) -> napi::Result<AsyncBlock<NativeStore>> {
    promise(env, async move {
        let store = Store::open(&url).await.map_err(|e| store_error(&e))?;
        Ok(NativeStore { store })
    })
}

#[napi]
impl NativeStore {
    /// A new thread (`metadata`: JSON text of an object); its id.
    #[napi(catch_unwind)]
    pub fn create_thread(
        &self,
        env: &Env,
        metadata: Option<String>,
    ) -> napi::Result<AsyncBlock<String>> {
        let metadata = match metadata {
            Some(m) => parse("metadata", &m)?,
            None => Value::Object(Default::default()),
        };
        let store = self.store.clone();
        promise(env, async move {
            let t = store
                .create_thread(None, metadata)
                .await
                .map_err(|e| store_error(&e))?;
            Ok(t.id)
        })
    }

    /// A thread's messages, in order (JSON text of the list).
    #[napi(catch_unwind)]
    pub fn messages(&self, env: &Env, thread_id: String) -> napi::Result<AsyncBlock<String>> {
        let store = self.store.clone();
        promise(env, async move {
            let h = store
                .history(&thread_id)
                .await
                .map_err(|e| store_error(&e))?;
            Ok(parlance::format::to_json(&h))
        })
    }

    /// A thread's runs, oldest first (JSON text of the list).
    #[napi(catch_unwind)]
    pub fn runs(&self, env: &Env, thread_id: String) -> napi::Result<AsyncBlock<String>> {
        let store = self.store.clone();
        promise(env, async move {
            let r = store.runs(&thread_id).await.map_err(|e| store_error(&e))?;
            Ok(serde_json::to_string(&r).expect("runs serialise"))
        })
    }

    /// Deletes a thread (refused while a run is active on it).
    #[napi(catch_unwind)]
    pub fn delete_thread(&self, env: &Env, thread_id: String) -> napi::Result<AsyncBlock<()>> {
        let store = self.store.clone();
        promise(env, async move {
            store
                .delete_thread(&thread_id)
                .await
                .map_err(|e| store_error(&e))
        })
    }

    /// Runs `agent` on a thread with new input (none: a retry, after a
    /// failed run); a promise of the response's JSON.
    #[napi(catch_unwind)]
    pub fn run(
        &self,
        env: &Env,
        agent: &NativeAgent,
        tag: u32,
        thread_id: String,
        input: Option<String>,
    ) -> napi::Result<AsyncBlock<String>> {
        let messages = match input {
            Some(text) => Some(input::run_input(&text)?.input),
            None => None,
        };
        let runner = ThreadRunner::new(self.store.clone(), agent.tagged(tag));
        promise(env, async move {
            let r = match messages {
                Some(m) => runner.run(&thread_id, m).await,
                None => runner.retry(&thread_id).await,
            }
            .map_err(|e| store_error(&e))?;
            Ok(parlance::format::to_json(&r))
        })
    }

    /// Applies decisions to the run waiting on them (from the store alone).
    #[napi(catch_unwind)]
    pub fn resume(
        &self,
        env: &Env,
        agent: &NativeAgent,
        tag: u32,
        run_id: String,
        decisions: String,
    ) -> napi::Result<AsyncBlock<String>> {
        let decisions = input::decisions(&decisions)?;
        let runner = ThreadRunner::new(self.store.clone(), agent.tagged(tag));
        promise(env, async move {
            let r = runner
                .resume(&run_id, decisions)
                .await
                .map_err(|e| match e {
                    ResumeError::Store(e) => store_error(&e),
                    ResumeError::Decision(e) => decision_error(&e),
                })?;
            Ok(parlance::format::to_json(&r))
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
