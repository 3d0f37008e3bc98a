//! How a run begins: every way in (awaited or streamed, stored or not)
//! goes through [`Agent::go`] with a [`Start`], which hands it to the run
//! loop, a resume or a retry.

use parlance_format::Response;
use tracing::Instrument;

use super::Agent;
use super::events::Hooks;
use super::input::RunInput;
use super::resume::ResumePlan;
use crate::telemetry;

/// How a run begins.
pub(crate) enum Start {
    /// A new run.
    Run(RunInput),
    /// A failed run's failed calls again (`turns`: the history).
    Retry(RunInput),
    /// Checked decisions on a paused run.
    Resume(Box<ResumePlan>),
}

impl Agent {
    /// The one body behind every way to run: the run, its events and
    /// steps going where `hooks` say.
    pub(crate) async fn go(&self, start: Start, hooks: Hooks) -> Response {
        let _in_flight = telemetry::InFlight::start();
        let started = std::time::Instant::now();
        let model = &self.inner.model;
        let span = telemetry::run_span(
            self.inner.name.as_deref(),
            model.provider(),
            model.model_id(),
        );
        let r = self.go_on(start, hooks).instrument(span.clone()).await;
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
            Start::Run(input) => {
                let mut state = self.start(input);
                self.drive(&mut state, &hooks).await
            }
            Start::Retry(input) => Box::pin(self.retry_failed(input, &hooks)).await,
            Start::Resume(plan) => Box::pin(self.apply(*plan, &hooks)).await,
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
        let run = agent.go_on(Start::Run(RunInput::default()), Hooks::default());
        let retry = agent.retry_failed(RunInput::default(), &hooks);
        assert!(
            std::mem::size_of_val(&run) < std::mem::size_of_val(&retry),
            "a run's future is {} bytes, a retry's {}",
            std::mem::size_of_val(&run),
            std::mem::size_of_val(&retry)
        );
    }
}
