//! Futures handed to JavaScript as promises: a panic becomes an error, and
//! a run can be cancelled (its `AbortSignal`), which drops its future.
//! Dropping a run's future stops it at its next await point; the calls it
//! was waiting for are abandoned and their `AbortSignal`s aborted (see
//! `host.rs`).

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Mutex, OnceLock};

use futures::FutureExt;
use futures::channel::oneshot;
use napi::Env;
use napi::bindgen_prelude::{AsyncBlock, AsyncBlockBuilder, ToNapiValue};
use napi_derive::napi;
use serde_json::Value;

use crate::errors::{error, panic_error};

/// Runs `fut` on the runtime as a promise; a panic becomes an error.
pub fn promise<T, F>(env: &Env, fut: F) -> napi::Result<AsyncBlock<T>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = napi::Result<T>> + Send + 'static,
{
    AsyncBlockBuilder::new(async move {
        match AssertUnwindSafe(fut).catch_unwind().await {
            Ok(r) => r,
            Err(panic) => Err(panic_error(&*panic)),
        }
    })
    .build(env)
}

/// Runs that can be cancelled, by their tag.
fn cancellers() -> &'static Mutex<HashMap<u32, oneshot::Sender<()>>> {
    static CANCEL: OnceLock<Mutex<HashMap<u32, oneshot::Sender<()>>>> = OnceLock::new();
    CANCEL.get_or_init(Default::default)
}

/// `promise`, for the run tagged `tag`, which [`cancel_run`] can stop
/// (when `cancellable`): the promise then rejects with an `AbortError`.
pub fn run_promise<T, F>(
    env: &Env,
    tag: u32,
    cancellable: bool,
    fut: F,
) -> napi::Result<AsyncBlock<T>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = napi::Result<T>> + Send + 'static,
{
    if !cancellable {
        return promise(env, fut);
    }
    let (tx, rx) = oneshot::channel();
    cancellers().lock().expect("not poisoned").insert(tag, tx);
    promise(env, async move {
        let out = futures::select_biased! {
            _ = rx.fuse() => Err(error("AbortError", "the run was cancelled", Value::Null)),
            r = fut.fuse() => r,
        };
        cancellers().lock().expect("not poisoned").remove(&tag);
        out
    })
}

/// Stops the run tagged `tag` (its caller's `AbortSignal` aborted); a run
/// already over is left alone.
#[napi(catch_unwind)]
pub fn cancel_run(tag: u32) {
    if let Some(tx) = cancellers().lock().expect("not poisoned").remove(&tag) {
        let _ = tx.send(());
    }
}
