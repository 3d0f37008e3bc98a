//! The application's own checkpoint, written in Python or JavaScript:
//! each step of a run handed to a function as it completes (to keep a
//! run's progress in the application's own storage), in one shape for
//! both packages. What the function raises or rejects with fails the run
//! with code `store`, naming it.

use std::sync::Arc;

use futures::future::BoxFuture;
use parlance::agent::CheckpointError;
use parlance::{Checkpoint, Step};
use serde_json::{Value, json};

use crate::Dialect;

/// A step as the function gets it: `{"kind": "append", "message"}` (a
/// message was added) or `{"kind": "replace_last", "message"}` (the last
/// one was replaced: a tool message whose approvals were decided, or
/// whose failed calls were retried); JavaScript spells the second
/// `"replaceLast"`.
pub fn step_value(step: Step<'_>, d: Dialect) -> Value {
    let (kind, message) = match step {
        Step::Append(m) => ("append", m),
        Step::ReplaceLast(m) => ("replace_last", m),
    };
    json!({"kind": d.name(kind), "message": message})
}

/// Calls the host function: the step's value in, what the function threw
/// (a sentence naming it) out.
pub type HostCall = dyn Fn(Value) -> BoxFuture<'static, Result<(), String>> + Send + Sync;

/// A [`Checkpoint`] that hands each step to a host function.
pub struct HostCheckpoint {
    dialect: Dialect,
    call: Box<HostCall>,
}

impl HostCheckpoint {
    /// A checkpoint calling `call` with each step, spelled in `dialect`.
    pub fn shared(
        dialect: Dialect,
        call: impl Fn(Value) -> BoxFuture<'static, Result<(), String>> + Send + Sync + 'static,
    ) -> Arc<dyn Checkpoint> {
        Arc::new(HostCheckpoint {
            dialect,
            call: Box::new(call),
        })
    }
}

impl Checkpoint for HostCheckpoint {
    fn commit<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
        let call = (self.call)(step_value(step, self.dialect));
        Box::pin(async move { call.await.map_err(CheckpointError::new) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Work, input, run};
    use parlance::scripted::ScriptedModel;
    use parlance::{Agent, Message};
    use std::sync::Mutex;

    #[test]
    fn steps_are_spelled_in_each_dialect() {
        let m = Message::assistant("Hi");
        assert_eq!(
            step_value(Step::ReplaceLast(&m), Dialect::Python)["kind"],
            "replace_last"
        );
        assert_eq!(
            step_value(Step::ReplaceLast(&m), Dialect::Node)["kind"],
            "replaceLast"
        );
        assert_eq!(
            step_value(Step::Append(&m), Dialect::Node)["message"]["role"],
            "assistant"
        );
    }

    #[tokio::test]
    async fn each_step_reaches_the_function_and_its_error_fails_the_run() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&seen);
        let checkpoint = HostCheckpoint::shared(Dialect::Python, move |v| {
            kept.lock()
                .unwrap()
                .push(v["message"]["role"].as_str().unwrap().to_string());
            Box::pin(async { Ok(()) })
        });
        let agent = Agent::builder(ScriptedModel::new([Message::assistant("Hi!")]))
            .build()
            .unwrap();
        let work = Work::Run(input::run_input(&json!("Hello")).unwrap())
            .checkpoint(checkpoint, Dialect::Python)
            .unwrap();
        let r = run::complete(&agent, work).await.unwrap();
        assert_eq!(r.text(), "Hi!");
        // The input is the caller's; the run's own steps are checkpointed.
        assert_eq!(*seen.lock().unwrap(), ["assistant"]);

        let failing = HostCheckpoint::shared(Dialect::Python, |_| {
            Box::pin(async { Err("disk full".into()) })
        });
        let agent = Agent::builder(ScriptedModel::new([Message::assistant("Hi!")]))
            .build()
            .unwrap();
        let work = Work::Run(input::run_input(&json!("Hello")).unwrap())
            .checkpoint(failing, Dialect::Python)
            .unwrap();
        let r = run::complete(&agent, work).await.unwrap();
        let e = r.error.unwrap();
        assert_eq!(
            (e.code.as_str(), e.message.contains("disk full")),
            ("store", true),
            "{e:?}"
        );
    }
}
