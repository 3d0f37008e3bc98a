//! A run as events, pulled by the package's async iterator one at a time.
//! The run starts on the first pull (on the runtime: starting it spawns a
//! task, and a resume checks its decisions first); each event comes as
//! JSON text in the shape of the HTTP API's events
//! (`{"type": "text_delta", "text": ...}`), the last one `run_completed`
//! with the response.

use std::sync::Arc;

use futures::StreamExt;
use napi::Env;
use napi::bindgen_prelude::AsyncBlock;
use napi_derive::napi;
use parlance::RunEvent;
use parlance::agent::RunStream;
use serde_json::json;

use crate::task::promise;

type Start = Box<dyn FnOnce() -> napi::Result<RunStream> + Send>;

enum State {
    NotStarted(Start),
    Running(RunStream),
    Done,
}

/// The events of a run.
#[napi]
pub struct NativeStream {
    state: Arc<tokio::sync::Mutex<State>>,
}

impl NativeStream {
    /// A stream that starts with `start` on its first pull.
    pub fn new(start: impl FnOnce() -> napi::Result<RunStream> + Send + 'static) -> Self {
        NativeStream {
            state: Arc::new(tokio::sync::Mutex::new(State::NotStarted(Box::new(start)))),
        }
    }

    /// A stream of a run already started (on a thread).
    pub fn running(stream: RunStream) -> Self {
        NativeStream {
            state: Arc::new(tokio::sync::Mutex::new(State::Running(stream))),
        }
    }
}

/// An event as JSON text.
pub fn event_json(e: &RunEvent) -> String {
    let v = match e {
        RunEvent::TextDelta(t) => json!({"type": "text_delta", "text": t}),
        RunEvent::ThinkingDelta(t) => json!({"type": "thinking_delta", "text": t}),
        RunEvent::MessageCompleted(m) => json!({"type": "message", "message": m}),
        RunEvent::ToolCallStarted { call_id, name } => {
            json!({"type": "tool_call_started", "callId": call_id, "name": name})
        }
        RunEvent::ToolCallFinished {
            call_id,
            name,
            status,
            elapsed,
        } => json!({
            "type": "tool_call_finished", "callId": call_id, "name": name,
            "status": status, "elapsedMs": elapsed.as_secs_f64() * 1000.0,
        }),
        RunEvent::ApprovalRequired(p) => json!({"type": "approval_required", "pending": p}),
        RunEvent::RunCompleted(r) => {
            // The response as its canonical text, byte for byte.
            return format!(
                "{{\"type\":\"run_completed\",\"response\":{}}}",
                parlance::format::to_json(r)
            );
        }
    };
    v.to_string()
}

#[napi]
impl NativeStream {
    /// The next event (JSON text), or nothing once the run is over.
    #[napi(catch_unwind)]
    pub fn next(&self, env: &Env) -> napi::Result<AsyncBlock<Option<String>>> {
        let state = Arc::clone(&self.state);
        promise(env, async move {
            let mut guard = state.lock().await;
            if let State::NotStarted(_) = &*guard {
                let State::NotStarted(start) = std::mem::replace(&mut *guard, State::Done) else {
                    unreachable!()
                };
                *guard = State::Running(start()?);
            }
            let State::Running(stream) = &mut *guard else {
                return Ok(None);
            };
            match stream.next().await {
                Some(e) => {
                    if matches!(e, RunEvent::RunCompleted(_)) {
                        *guard = State::Done;
                    }
                    Ok(Some(event_json(&e)))
                }
                None => {
                    *guard = State::Done;
                    Ok(None)
                }
            }
        })
    }
}
