//! A JavaScript function called from the engine and awaited: a model's
//! `request` (`model_host.rs`), the application's checkpoint
//! (`checkpoint.rs`). JavaScript runs on Node's main thread only, so a
//! call goes as a tool call does (see `host.rs`): the engine's future
//! registers a one-shot slot under a token and asks the main thread (a
//! thread-safe function, non-blocking) to call the function; the
//! package's `lib/js_call.cjs` settles its result (a value or a promise)
//! and reports it with [`complete_call`]. When the engine drops the call
//! (the run stopped or was aborted), the slot goes and the call's
//! `AbortSignal` is aborted. The package's host functions never throw.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, OnceLock};

use futures::channel::oneshot;
use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

/// `(token, argument JSON)`: starts a call.
type CallFn = ThreadsafeFunction<(i64, String), (), (i64, String), napi::Status, false, true>;
type AbortFn = ThreadsafeFunction<i64, (), i64, napi::Status, false, true>;

/// What JavaScript reports: the returned value (JSON text), or the name
/// and message of what was thrown.
type Outcome = Result<String, (String, String)>;

fn pending() -> &'static Mutex<HashMap<i64, oneshot::Sender<Outcome>>> {
    static PENDING: OnceLock<Mutex<HashMap<i64, oneshot::Sender<Outcome>>>> = OnceLock::new();
    PENDING.get_or_init(Default::default)
}

/// How a call failed.
#[derive(Debug)]
pub enum Failure {
    /// The function threw (or its promise rejected): the thrown value's
    /// name (`TypeError`) and message.
    Thrown {
        /// Its name.
        name: String,
        /// Its message.
        message: String,
    },
    /// Node.js is shutting down: the call could not be made, or its
    /// answer was lost. The sentence says which.
    Gone(String),
}

/// A JavaScript function, callable from any thread (weak: it never keeps
/// Node alive by itself).
pub struct JsFunction {
    call: CallFn,
    abort: AbortFn,
    /// Names the function in errors (`Echo.request`, `checkpoint`).
    pub label: String,
}

/// Removes the call's slot and aborts its signal when the engine drops
/// the call before it finished.
struct Inflight<'a> {
    f: &'a JsFunction,
    token: i64,
    done: bool,
}

impl Drop for Inflight<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        pending().lock().expect("not poisoned").remove(&self.token);
        self.f
            .abort
            .call(self.token, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

impl JsFunction {
    /// `call([token, argumentJson])` starts a call, `abort(token)` aborts
    /// its signal (the package's `lib/js_call.cjs` makes both).
    pub fn new(
        call: Function<'_, (i64, String), ()>,
        abort: Function<'_, i64, ()>,
        label: String,
    ) -> napi::Result<JsFunction> {
        Ok(JsFunction {
            call: call
                .build_threadsafe_function()
                .weak::<true>()
                .callee_handled::<false>()
                .build()?,
            abort: abort
                .build_threadsafe_function()
                .weak::<true>()
                .callee_handled::<false>()
                .build()?,
            label,
        })
    }

    /// Calls the function with `argument` (JSON text) and waits for what
    /// it returns (JSON text) or throws. Dropping the future aborts the
    /// call's signal.
    pub async fn invoke(&self, argument: String) -> Result<String, Failure> {
        static NEXT: AtomicI64 = AtomicI64::new(1);
        let token = NEXT.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        pending().lock().expect("not poisoned").insert(token, tx);
        let mut inflight = Inflight {
            f: self,
            token,
            done: false,
        };
        let status = self
            .call
            .call((token, argument), ThreadsafeFunctionCallMode::NonBlocking);
        if status != napi::Status::Ok {
            inflight.done = true;
            pending().lock().expect("not poisoned").remove(&token);
            return Err(Failure::Gone(format!(
                "{} could not be called: Node.js is shutting down",
                self.label
            )));
        }
        let outcome = rx.await;
        inflight.done = true;
        match outcome {
            Ok(Ok(text)) => Ok(text),
            Ok(Err((name, message))) => Err(Failure::Thrown { name, message }),
            Err(_) => Err(Failure::Gone(format!(
                "{}'s call was lost: Node.js is shutting down",
                self.label
            ))),
        }
    }
}

/// Reports how a call ended (called by `lib/js_call.cjs`): with
/// `error_name` unset, `value` is the returned value as JSON text; set,
/// `value` is the message of what was thrown. A call the engine gave up
/// on is ignored.
#[napi(catch_unwind)]
pub fn complete_call(token: i64, value: String, error_name: Option<String>) {
    let Some(tx) = pending().lock().expect("not poisoned").remove(&token) else {
        return;
    };
    let outcome = match error_name {
        None => Ok(value),
        Some(name) => Err((name, value)),
    };
    let _ = tx.send(outcome);
}
