//! The bridge to the package's JavaScript, which owns the tool functions.
//!
//! JavaScript runs on Node's main thread only; the engine runs on the
//! runtime's worker threads. A tool call therefore goes: the engine's
//! future registers a one-shot slot under a token and asks the main thread
//! (a thread-safe function, non-blocking) to start the call; the
//! package's dispatcher runs the function (sync or async, it does not
//! matter), and hands the outcome back with [`complete`], which fills the
//! slot. If the engine gives up on the call (timeout, the run stopped), the
//! future is dropped: its slot is removed and the main thread is told to
//! abort the call's `AbortSignal`. The host functions are the package's
//! own and never throw (a throw in a thread-safe call would end the
//! process), so user errors never travel this way.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use futures::channel::oneshot;
use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use parlance::{ArgumentProblem, Block, PathStep, ToolContext, ToolError, ToolFailure};
use serde_json::Value;

/// Arguments of a tool call for the dispatcher: the run's tag, the tool's
/// index, the call's token, the arguments (JSON text), the run id, the
/// thread id, the call id, the milliseconds left before the timeout.
pub type CallArgs = (
    u32,
    u32,
    i64,
    String,
    String,
    Option<String>,
    String,
    f64,
    String,
);

type CallFn = ThreadsafeFunction<CallArgs, (), CallArgs, napi::Status, false, true>;
type AbortFn = ThreadsafeFunction<i64, (), i64, napi::Status, false, true>;
/// `(tool index, arguments JSON)` → whether the call waits for approval.
type ApproveFn = ThreadsafeFunction<(u32, String), bool, (u32, String), napi::Status, false, true>;

/// The host functions of one agent, callable from any thread. Weak: they
/// never keep Node alive by themselves (a run in flight does, through
/// its promise).
pub struct Host {
    call: CallFn,
    abort: AbortFn,
    approve: ApproveFn,
}

impl Host {
    /// The host from the package's three functions.
    pub fn new(
        call: Function<'_, CallArgs, ()>,
        abort: Function<'_, i64, ()>,
        approve: Function<'_, (u32, String), bool>,
    ) -> napi::Result<Arc<Host>> {
        Ok(Arc::new(Host {
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
            approve: approve
                .build_threadsafe_function()
                .weak::<true>()
                .callee_handled::<false>()
                .build()?,
        }))
    }

    /// Asks JavaScript whether a call of tool `index` with `args` needs
    /// approval. Blocks this worker thread until the main thread answers
    /// (the engine's predicate is synchronous); other tasks move to the
    /// runtime's other workers meanwhile. When Node is shutting down, or
    /// the predicate failed (the package reports it), the call waits for a
    /// human: a failing check must not approve by itself.
    pub fn needs_approval(&self, index: u32, args: &Value) -> bool {
        let (tx, rx) = std::sync::mpsc::sync_channel::<bool>(1);
        let status = self.approve.call_with_return_value(
            (index, args.to_string()),
            ThreadsafeFunctionCallMode::NonBlocking,
            move |r, _env| {
                let _ = tx.send(r.unwrap_or(true));
                Ok(())
            },
        );
        if status != napi::Status::Ok {
            return true;
        }
        let wait = || rx.recv().unwrap_or(true);
        match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        }
    }
}

/// The outcome JavaScript reports for a call.
type Outcome = Result<Vec<Block>, ToolFailure>;

/// Calls waiting for their outcome, by token.
fn pending() -> &'static Mutex<HashMap<i64, oneshot::Sender<Outcome>>> {
    static PENDING: OnceLock<Mutex<HashMap<i64, oneshot::Sender<Outcome>>>> = OnceLock::new();
    PENDING.get_or_init(Default::default)
}

/// The tag of the run a tool call belongs to (through `Agent::with_deps`):
/// the package keeps each run's `deps` and failed tools' errors under it.
#[derive(Clone, Copy)]
pub struct RunTag(pub u32);

/// Removes the call's slot and aborts its signal when the engine drops
/// the call before it finished.
struct Inflight<'a> {
    host: &'a Host,
    token: i64,
    done: bool,
}

impl Drop for Inflight<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        pending().lock().expect("not poisoned").remove(&self.token);
        self.host
            .abort
            .call(self.token, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// One call of tool `index`, run by the package's dispatcher on the main
/// thread.
pub async fn call_tool(host: Arc<Host>, index: u32, args: Value, ctx: ToolContext) -> Outcome {
    static NEXT: AtomicI64 = AtomicI64::new(1);
    let token = NEXT.fetch_add(1, Ordering::Relaxed);
    let (tx, rx) = oneshot::channel();
    pending().lock().expect("not poisoned").insert(token, tx);
    let mut inflight = Inflight {
        host: &host,
        token,
        done: false,
    };
    let tag = ctx.deps::<RunTag>().map_or(0, |t| t.0);
    let left = ctx
        .deadline
        .saturating_duration_since(tokio::time::Instant::now());
    let status = host.call.call(
        (
            tag,
            index,
            token,
            args.to_string(),
            ctx.run_id.to_string(),
            ctx.thread_id.as_deref().map(str::to_string),
            ctx.call_id.to_string(),
            left.as_secs_f64() * 1000.0,
            ctx.idempotency_key(),
        ),
        ThreadsafeFunctionCallMode::NonBlocking,
    );
    if status != napi::Status::Ok {
        inflight.done = true;
        pending().lock().expect("not poisoned").remove(&token);
        return Err(ToolFailure::unexpected(
            "Error",
            "the tool could not be called: Node.js is shutting down",
        ));
    }
    let outcome = rx.await;
    inflight.done = true;
    outcome.unwrap_or_else(|_| {
        Err(ToolFailure::unexpected(
            "Error",
            "the tool's call was lost: Node.js is shutting down",
        ))
    })
}

/// Reports how a tool call ended (called by the package's dispatcher):
/// `kind` 0 = returned (`value`: JSON text, or nothing), 4 = returned a
/// `Content` (`value`: JSON text of its blocks), 1 = `ToolError`
/// (`value`: its message), 2 = any other error (`value`: its message,
/// `error_type`: its name), 3 = the schema's own check refused the
/// arguments (`value`: JSON `[{path, message}]`). A call the engine gave up
/// on is ignored.
#[napi(catch_unwind)]
pub fn complete(token: i64, kind: u32, value: Option<String>, error_type: Option<String>) {
    let Some(tx) = pending().lock().expect("not poisoned").remove(&token) else {
        return;
    };
    let value = value.unwrap_or_default();
    let outcome = match kind {
        0 if value.is_empty() => Ok(Vec::new()),
        0 | 4 => match serde_json::from_str::<Value>(&value) {
            Ok(v) if kind == 4 => parlance_bindings::tools::blocks_content(&v),
            Ok(v) => parlance_bindings::tools::value_content(v),
            Err(e) => Err(ToolFailure::unexpected(
                "TypeError",
                format!("the tool's return value is not JSON: {e}"),
            )),
        },
        1 => Err(ToolFailure::Tool(ToolError::new(value))),
        3 => Err(refused(&value)),
        _ => Err(ToolFailure::unexpected(
            error_type.unwrap_or_else(|| "Error".into()),
            value,
        )),
    };
    let _ = tx.send(outcome);
}

/// The problems of kind 3 (`[{path, message}]`, the path made of keys and
/// array indexes) as the engine's.
fn refused(json: &str) -> ToolFailure {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(json) else {
        return ToolFailure::unexpected("TypeError", "the schema's issues are not readable");
    };
    let problems = items.iter().map(|item| {
        let steps = item["path"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let path = steps.iter().map(PathStep::from_json);
        ArgumentProblem::new(path, item["message"].as_str().unwrap_or("is not valid"))
    });
    ToolFailure::InvalidArguments(problems.collect())
}
