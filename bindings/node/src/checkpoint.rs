//! The application's checkpoint, a JavaScript function given to a run as
//! `checkpoint`: each step of the run reaches it as it completes
//! (`parlance_bindings::checkpoint`: `{kind: "append" | "replaceLast",
//! message}`), called on the main thread through [`JsFunction`]; the run
//! waits for the promise it returns. What it throws fails the run (code
//! `store`), naming it.

use std::sync::Arc;

use napi::bindgen_prelude::Function;
use napi_derive::napi;
use parlance::Checkpoint;
use parlance_bindings::Dialect;
use parlance_bindings::checkpoint::HostCheckpoint;

use crate::js_call::{Failure, JsFunction};

/// A checkpoint function, for one run.
#[napi]
pub struct NativeCheckpoint {
    pub(crate) checkpoint: Arc<dyn Checkpoint>,
}

/// The checkpoint calling JavaScript: `call([token, stepJson])` starts a
/// call, `abort(token)` aborts its signal (`lib/js_call.cjs`).
#[napi(catch_unwind)]
pub fn host_checkpoint(
    call: Function<'_, (i64, String), ()>,
    abort: Function<'_, i64, ()>,
) -> napi::Result<NativeCheckpoint> {
    let f = Arc::new(JsFunction::new(call, abort, "checkpoint".into())?);
    let checkpoint = HostCheckpoint::shared(Dialect::Node, move |step| {
        let f = Arc::clone(&f);
        Box::pin(async move {
            match f.invoke(step.to_string()).await {
                Ok(_) => Ok(()),
                Err(Failure::Thrown { name, message }) => {
                    Err(format!("{} threw {name}: {message}", f.label))
                }
                Err(Failure::Gone(message)) => Err(message),
            }
        })
    });
    Ok(NativeCheckpoint { checkpoint })
}
