//! A run as events, pulled by the package's async iterator one at a time
//! (the bindings' shared `Events`: the run starts on the first pull, on
//! the runtime). Each event comes as JSON text in the shape of the HTTP
//! API's events (`{"type": "text_delta", "text": ...}`, camelCase fields),
//! the last one `run_completed` with the response's canonical text.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::AsyncBlock;
use napi_derive::napi;
use parlance_bindings::events::event_json;
use parlance_bindings::{Dialect, Events};

use crate::errors::bind;
use crate::task::promise;

/// The events of a run.
#[napi]
pub struct NativeStream {
    events: Arc<tokio::sync::Mutex<Events>>,
}

impl NativeStream {
    /// A stream of `events`.
    pub fn new(events: Events) -> Self {
        NativeStream {
            events: Arc::new(tokio::sync::Mutex::new(events)),
        }
    }
}

#[napi]
impl NativeStream {
    /// The next event (JSON text), or nothing once the run is over.
    #[napi(catch_unwind)]
    pub fn next(&self, env: &Env) -> napi::Result<AsyncBlock<Option<String>>> {
        let events = Arc::clone(&self.events);
        promise(env, async move {
            let next = events.lock().await.next().await.map_err(bind)?;
            Ok(next.map(|e| event_json(&e, Dialect::Node)))
        })
    }
}
