//! The native module of the npm package `parlance-ai`. It wraps the public
//! Rust API of the `parlance-ai` crate; the package's JavaScript
//! (`bindings/node/lib`) gives it its TypeScript shape, and owns the tool
//! functions and the models written in JavaScript, which run on Node's
//! main thread (see `host.rs`, `model_host.rs`). Everything
//! else — the run loop, validation, providers, the store — runs on the
//! runtime's worker threads, and every call that waits returns a promise.

// Public so that the exported functions count as used in every build
// (napi registers them at load time, which the compiler cannot see).
pub mod agent;
pub mod checkpoint;
pub mod convert;
pub mod errors;
pub mod format;
pub mod host;
pub mod js_call;
pub mod local;
pub mod logs;
pub mod mcp;
pub mod model_host;
pub mod models;
pub mod prices;
pub mod store;
pub mod stream;
pub mod task;
pub mod traces;

pub use agent::{NativeAgent, ToolDef};
pub use models::NativeModel;
pub use stream::NativeStream;

/// The crate's version (the package's).
#[napi_derive::napi(catch_unwind)]
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Panics in Rust, on purpose, the two ways a call reaches Rust (`sync`:
/// in the call; `async`: in the future behind a promise). For the tests
/// that check no panic reaches a user as anything but an exception.
#[napi_derive::napi(catch_unwind)]
pub fn panic_for_tests(
    env: &napi::Env,
    how: String,
) -> napi::Result<napi::bindgen_prelude::AsyncBlock<()>> {
    let message = format!("deliberate panic ({how})");
    if how == "sync" {
        panic!("{message}");
    }
    task::promise(env, async move {
        if !message.is_empty() {
            panic!("{message}");
        }
        Ok(())
    })
}
