//! How a run begins: every way in (awaited or streamed, stored or not)
//! goes through [`Agent::go`] with a [`Start`], which hands it to the run
//! loop, a resume or a retry.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use parlance_format::{Response, RunError, RunStatus, Usage, new_id};
use serde_json::{Value, json};
use tracing::Instrument;

use super::Agent;
use super::events::Hooks;
use super::guard::Screened;
use super::input::RunInput;
use super::resume::ResumePlan;
use super::retry::RetryOf;
use crate::telemetry;

/// How a run begins.
pub(crate) enum Start {
    /// A new run, and its input's screening when its caller did it
    /// (boxed: every run's future holds its `Start`).
    Run(RunInput, Option<Box<Result<Screened, RunError>>>),
    /// A failed run's failed calls again, or a dead run's calls that had
    /// not committed (`turns`: the history).
    Retry(RunInput, RetryOf),
    /// Checked decisions on a paused run.
    Resume(Box<ResumePlan>),
}

impl Start {
    /// The run's id (made up now when the caller gave none) and thread.
    fn ids(&mut self) -> (String, Option<String>) {
        match self {
            Start::Run(input, _) | Start::Retry(input, _) => (
                input.run_id.get_or_insert_with(|| new_id("run")).clone(),
                input.thread_id.clone(),
            ),
            Start::Resume(plan) => plan.ids(),
        }
    }
}

/// The response of a run that panicked outside its model step (which
/// catches its own, see `run_loop`): failed, with the panic's message.
fn panicked(id: String, thread: Option<String>, message: String) -> Response {
    Response {
        id: Some(id),
        thread_id: thread,
        status: RunStatus::Failed,
        messages: Vec::new(),
        output: Value::Null,
        usage: Usage::default(),
        cost: None,
        finish_reason: None,
        pending: Vec::new(),
        error: Some(
            RunError::new("run_panicked", format!("the run panicked: {message}"))
                .with_cause(json!({"kind": "panic", "message": message})),
        ),
    }
}

impl Agent {
    /// The one body behind every way to run: the run, its events and
    /// steps going where `hooks` say. A panic anywhere in the run ends
    /// this run `failed` with the panic's message (never the process,
    /// never a run without an outcome).
    pub(crate) async fn go(&self, mut start: Start, hooks: Hooks) -> Response {
        // A conversation handed to another agent is that agent's.
        if let Start::Run(input, _) | Start::Retry(input, _) = &start
            && let Some(holder) = self.holder_of(&input.turns)
        {
            return Box::pin(holder.go(start, hooks)).await;
        }
        let (id, thread) = start.ids();
        let _in_flight = telemetry::InFlight::start();
        let started = std::time::Instant::now();
        let model = &self.inner.model;
        let span = telemetry::run_span(
            self.inner.name.as_deref(),
            model.provider(),
            model.model_id(),
        );
        let run = crate::current::scope(self.deps.clone(), self.go_on(start, hooks));
        let r = AssertUnwindSafe(run)
            .catch_unwind()
            .instrument(span.clone())
            .await
            .unwrap_or_else(|payload| {
                panicked(id, thread, parlance_model::panic_message(&*payload))
            });
        telemetry::run_ended(&span, &r, started.elapsed());
        r
    }

    /// [`Agent::go`] inside the run's span.
    ///
    /// A retry and a resume are boxed: their futures hold a turn of their
    /// own besides the run loop's, and unboxed they would make every new
    /// run's future as large as theirs (3 KB instead of 2 KB in release,
    /// held by each run in flight for its whole life).
    async fn go_on(&self, start: Start, hooks: Hooks) -> Response {
        match start {
            Start::Run(input, None) if !self.screens_input() => {
                let mut state = self.start(input);
                self.drive(&mut state, &hooks).await
            }
            Start::Run(input, screened) => {
                Box::pin(self.screened_run(input, screened, &hooks)).await
            }
            Start::Retry(input, of) => Box::pin(self.retry_failed(input, of, &hooks)).await,
            Start::Resume(plan) => Box::pin(self.apply(*plan, &hooks)).await,
        }
    }
}

impl Agent {
    /// A run whose input went through the input guardrails: on the
    /// screened input, or over at once when they blocked or failed.
    async fn screened_run(
        &self,
        mut input: RunInput,
        screened: Option<Box<Result<Screened, RunError>>>,
        hooks: &Hooks,
    ) -> Response {
        let screened = match screened {
            Some(s) => *s,
            None => {
                let messages = input.input.clone();
                self.screen_input(messages, input.thread_id.as_deref())
                    .await
            }
        };
        match screened {
            Ok(Screened::Passed(messages)) => {
                input.input = messages;
                let mut state = self.start(input);
                self.drive(&mut state, hooks).await
            }
            Ok(Screened::Blocked {
                input: messages,
                answer,
                error,
            }) => {
                input.input = messages;
                let mut state = self.start(input);
                self.end_blocked(&mut state, super::stop::Blocked::new(answer, error), hooks)
                    .await
            }
            Err(e) => self.start(input).failed(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use parlance_format::Message;
    use parlance_model::scripted::ScriptedModel;

    use super::*;

    /// Every run in flight holds its future for its whole life: a new
    /// run's must not be as large as a retry's (boxed in `go_on`).
    #[test]
    fn a_new_runs_future_is_smaller_than_a_retrys() {
        let agent = Agent::builder(ScriptedModel::new([Message::assistant("Hi.")]))
            .build()
            .expect("an agent");
        let hooks = Hooks::default();
        let run = agent.go_on(Start::Run(RunInput::default(), None), Hooks::default());
        let retry = agent.retry_failed(RunInput::default(), RetryOf::Failed, &hooks);
        assert!(
            std::mem::size_of_val(&run) < std::mem::size_of_val(&retry),
            "a run's future is {} bytes, a retry's {}",
            std::mem::size_of_val(&run),
            std::mem::size_of_val(&retry)
        );
    }
}
