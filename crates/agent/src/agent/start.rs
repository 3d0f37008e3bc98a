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
    async fn go_on(&self, start: Start, hooks: Hooks) -> Response {
        match start {
            Start::Run(input) => {
                let mut state = self.start(input);
                self.drive(&mut state, &hooks).await
            }
            Start::Retry(input) => self.retry_failed(input, &hooks).await,
            Start::Resume(plan) => self.apply(*plan, &hooks).await,
        }
    }
}
