//! The way in: `agent.run(input)`, `agent.resume(resume)` and
//! `agent.retry(turns)` return a builder that is awaited for the
//! response, or turned into a stream of events. Every way runs the same
//! body; a stream runs it in its own task.
//!
//! ```
//! # use parlance_agent::Agent;
//! # use parlance_format::Message;
//! # use parlance_model::scripted::ScriptedModel;
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let model = ScriptedModel::new([Message::assistant("Hello."), Message::assistant("Again.")]);
//! let agent = Agent::builder(model).build()?;
//! let first = agent.run("Hi").await.into_result()?;      // &str, String, Message, Vec<Message>, RunInput
//! assert_eq!(first.text(), "Hello.");
//! let again = agent.run("Once more").turns([first]).await; // earlier turns, a thread id, a checkpoint...
//! assert_eq!(again.text(), "Again.");
//! # Ok(()) }
//! ```

use std::future::IntoFuture;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::channel::mpsc;
use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use parlance_format::{Response, RunError, RunStatus, Turn, Usage};
use serde_json::Value;

use crate::agent::events::Hooks;
use crate::agent::{
    Agent, Checkpoint, DecisionError, Resume, RetryOf, RunEvent, RunInput, Screened, Start,
};

impl Agent {
    /// A run from `input` (a `&str` or `String` as a user message, a
    /// [`Message`](parlance_format::Message), several, or a whole
    /// [`RunInput`]). Await it for the [`Response`], or call
    /// [`stream`](RunBuilder::stream) for events.
    pub fn run(&self, input: impl Into<RunInput>) -> RunBuilder<'_> {
        RunBuilder {
            agent: self,
            input: input.into(),
            checkpoint: None,
            retry: None,
            screened: None,
        }
    }

    /// Retries a failed run whose history is `turns` (the failed turn
    /// last): its failed calls (`tool_failed`, `interrupted`) run again,
    /// their new results replacing the failed ones (the model never reads
    /// the failure), calls that succeeded keep their results, and the run
    /// goes on; with no failed call (a model error, a limit), the model is
    /// called again. Set the failed run's id and thread as for a run.
    pub fn retry<T: Into<Turn>>(&self, turns: impl IntoIterator<Item = T>) -> RunBuilder<'_> {
        RunBuilder {
            agent: self,
            input: RunInput::default(),
            checkpoint: None,
            retry: Some(RetryOf::Failed),
            screened: None,
        }
        .turns(turns)
    }

    /// Carries on a run whose process died, from its stored history
    /// `turns` as `parlance_store::Store::take_over` left it: the calls
    /// that had not committed (their results the store's repair) run
    /// again, results that committed are kept, and the run goes on; a
    /// model step that had not committed is asked again. Set the run's id
    /// and thread as for a run.
    pub fn carry_on<T: Into<Turn>>(&self, turns: impl IntoIterator<Item = T>) -> RunBuilder<'_> {
        RunBuilder {
            agent: self,
            input: RunInput::default(),
            checkpoint: None,
            retry: Some(RetryOf::Died),
            screened: None,
        }
        .turns(turns)
    }

    /// Applies decisions to a paused run and goes on. Await it for the
    /// response (refused decisions — unknown, forged, mismatched,
    /// duplicate, invalid edits — are an error and nothing runs), or call
    /// [`stream`](ResumeBuilder::stream).
    pub fn resume(&self, resume: Resume) -> ResumeBuilder<'_> {
        ResumeBuilder {
            agent: self,
            resume,
            checkpoint: None,
        }
    }
}

/// A run about to start: what [`Agent::run`] (and [`Agent::retry`])
/// returns. Set what it needs, then `.await` it or
/// [`stream`](RunBuilder::stream) it.
#[must_use = "a run does nothing until it is awaited or streamed"]
pub struct RunBuilder<'a> {
    agent: &'a Agent,
    input: RunInput,
    checkpoint: Option<Arc<dyn Checkpoint>>,
    retry: Option<RetryOf>,
    screened: Option<Result<Screened, RunError>>,
}

impl<'a> RunBuilder<'a> {
    /// The thread the run belongs to (recorded on the response and given
    /// to tools; storing the thread is `parlance-store`'s job).
    pub fn thread(mut self, id: impl Into<String>) -> Self {
        self.input.thread_id = Some(id.into());
        self
    }

    /// Earlier turns (earlier [`Response`]s or [`Turn`]s): their messages
    /// reach the model before the input, in order.
    pub fn turns<T: Into<Turn>>(mut self, turns: impl IntoIterator<Item = T>) -> Self {
        self.input.turns = turns.into_iter().map(Into::into).collect();
        self
    }

    /// The run's id (one is made up otherwise).
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.input.run_id = Some(id.into());
        self
    }

    /// Hands each step to `checkpoint` as it completes, to be stored (the
    /// input messages are the caller's to keep).
    pub fn checkpoint(mut self, checkpoint: Arc<dyn Checkpoint>) -> Self {
        self.checkpoint = Some(checkpoint);
        self
    }

    /// The input as the caller screened it ([`Agent::screen_input`]),
    /// which becomes the run's input: the input guardrails do not run
    /// again. For a caller that stores the input before the run.
    pub fn screened(mut self, screened: Result<Screened, RunError>) -> Self {
        if let Ok(s) = &screened {
            self.input.input = s.input().to_vec();
        }
        self.screened = Some(screened);
        self
    }

    /// Runs in the background, reporting progress as events; the last is
    /// `RunCompleted` with the response awaiting would give.
    pub fn stream(self) -> RunStream {
        let (agent, start, checkpoint) = self.into_parts();
        RunStream::spawn(agent.clone(), start, checkpoint)
    }

    fn into_parts(self) -> (&'a Agent, Start, Option<Arc<dyn Checkpoint>>) {
        let start = match self.retry {
            Some(of) => Start::Retry(self.input, of),
            None => Start::Run(self.input, self.screened.map(Box::new)),
        };
        (self.agent, start, self.checkpoint)
    }
}

impl<'a> IntoFuture for RunBuilder<'a> {
    type Output = Response;
    type IntoFuture = BoxFuture<'a, Response>;

    fn into_future(self) -> Self::IntoFuture {
        let (agent, start, checkpoint) = self.into_parts();
        let hooks = Hooks {
            events: None,
            checkpoint,
        };
        Box::pin(agent.go(start, hooks))
    }
}

/// Decisions about to be applied: what [`Agent::resume`] returns.
#[must_use = "a resume does nothing until it is awaited or streamed"]
pub struct ResumeBuilder<'a> {
    agent: &'a Agent,
    resume: Resume,
    checkpoint: Option<Arc<dyn Checkpoint>>,
}

impl ResumeBuilder<'_> {
    /// Hands each step to `checkpoint` as it completes.
    pub fn checkpoint(mut self, checkpoint: Arc<dyn Checkpoint>) -> Self {
        self.checkpoint = Some(checkpoint);
        self
    }

    /// Checks the decisions now (an error and nothing runs when one is
    /// refused), then goes on in the background, reporting events.
    pub fn stream(self) -> Result<RunStream, DecisionError> {
        let agent = self.holder();
        let plan = agent.plan_resume(self.resume)?;
        Ok(RunStream::spawn(
            agent,
            Start::Resume(Box::new(plan)),
            self.checkpoint,
        ))
    }

    /// The agent that resumes: the one the conversation was handed to, if
    /// it was (its tools made the calls that wait).
    fn holder(&self) -> Agent {
        let r = &self.resume;
        let history = r.turns.iter().flat_map(|t| t.messages.iter());
        self.agent
            .holder(history.chain(r.paused.messages.iter()))
            .unwrap_or_else(|| self.agent.clone())
    }
}

impl<'a> IntoFuture for ResumeBuilder<'a> {
    type Output = Result<Response, DecisionError>;
    type IntoFuture = BoxFuture<'a, Result<Response, DecisionError>>;

    fn into_future(self) -> Self::IntoFuture {
        // Checked now: nothing runs when a decision is refused.
        let agent = self.holder();
        let plan = agent.plan_resume(self.resume);
        let hooks = Hooks {
            events: None,
            checkpoint: self.checkpoint,
        };
        Box::pin(async move { Ok(agent.go(Start::Resume(Box::new(plan?)), hooks).await) })
    }
}

/// A run's events as they happen; the last is
/// [`RunCompleted`](RunEvent::RunCompleted). `Unpin`: call `.next()` on it
/// directly. [`response`](RunStream::response) skips to the end.
///
/// Dropping the stream does not stop the run: it finishes, so that what
/// it stores stays consistent.
#[derive(Debug)]
pub struct RunStream {
    rx: mpsc::UnboundedReceiver<RunEvent>,
    done: bool,
}

impl RunStream {
    /// The one place a run goes to the background: `agent` runs from
    /// `start` in its own task, its events sent here, the response last.
    fn spawn(agent: Agent, start: Start, checkpoint: Option<Arc<dyn Checkpoint>>) -> RunStream {
        let (tx, rx) = mpsc::unbounded();
        let hooks = Hooks {
            events: Some(tx.clone()),
            checkpoint,
        };
        tokio::spawn(async move {
            let response = agent.go(start, hooks).await;
            let _ = tx.unbounded_send(RunEvent::RunCompleted(response));
        });
        RunStream { rx, done: false }
    }

    /// The final response: the rest of the events are passed over.
    pub async fn response(mut self) -> Response {
        while let Some(event) = self.rx.next().await {
            if let RunEvent::RunCompleted(r) = event {
                return r;
            }
        }
        vanished()
    }
}

impl Stream for RunStream {
    type Item = RunEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunEvent>> {
        if self.done {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.rx).poll_next(cx) {
            Poll::Ready(Some(event)) => {
                self.done = matches!(event, RunEvent::RunCompleted(_));
                Poll::Ready(Some(event))
            }
            // The run's task ended without its last event (it panicked or
            // the runtime shut down): say so rather than end silently.
            Poll::Ready(None) => {
                self.done = true;
                Poll::Ready(Some(RunEvent::RunCompleted(vanished())))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The response of a run whose task ended without one.
fn vanished() -> Response {
    Response {
        id: None,
        thread_id: None,
        status: RunStatus::Failed,
        messages: Vec::new(),
        output: Value::Null,
        usage: Usage::default(),
        cost: None,
        finish_reason: None,
        pending: Vec::new(),
        error: Some(RunError::new(
            "run_aborted",
            "the run ended without a response (its task panicked or the runtime stopped)",
        )),
    }
}
