//! The way in: `agent.run(input)` and `agent.resume(resume)` return a
//! builder that is awaited for the response, or turned into a stream of
//! events.
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
use parlance_format::{Message, Response, RunError, RunStatus, Turn, Usage};
use serde_json::Value;

use crate::agent::{Agent, Checkpoint, DecisionError, Resume, RunEvent, RunInput};

impl From<&str> for RunInput {
    fn from(text: &str) -> Self {
        RunInput::text(text)
    }
}

impl From<String> for RunInput {
    fn from(text: String) -> Self {
        RunInput::text(text)
    }
}

impl From<Message> for RunInput {
    fn from(message: Message) -> Self {
        vec![message].into()
    }
}

impl From<Vec<Message>> for RunInput {
    fn from(input: Vec<Message>) -> Self {
        RunInput {
            input,
            ..Default::default()
        }
    }
}

impl Agent {
    /// A run from `input` (a `&str` or `String` as a user message, a
    /// [`Message`], several, or a whole [`RunInput`]). Await it for the
    /// [`Response`], or call [`stream`](RunBuilder::stream) for events.
    pub fn run(&self, input: impl Into<RunInput>) -> RunBuilder<'_> {
        RunBuilder {
            agent: self,
            input: input.into(),
            checkpoint: None,
        }
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

/// A run about to start: what [`Agent::run`] returns. Set what it needs,
/// then `.await` it or [`stream`](RunBuilder::stream) it.
#[must_use = "a run does nothing until it is awaited or streamed"]
pub struct RunBuilder<'a> {
    agent: &'a Agent,
    input: RunInput,
    checkpoint: Option<Arc<dyn Checkpoint>>,
}

impl RunBuilder<'_> {
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

    /// Runs in the background, reporting progress as events; the last is
    /// `RunCompleted` with the response awaiting would give.
    pub fn stream(self) -> RunStream {
        let (tx, rx) = mpsc::unbounded();
        let agent = self.agent.clone();
        tokio::spawn(async move {
            let response = agent
                .run_hooked(self.input, Some(tx.clone()), self.checkpoint)
                .await;
            let _ = tx.unbounded_send(RunEvent::RunCompleted(response));
        });
        RunStream { rx, done: false }
    }
}

impl<'a> IntoFuture for RunBuilder<'a> {
    type Output = Response;
    type IntoFuture = BoxFuture<'a, Response>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.agent.run_hooked(self.input, None, self.checkpoint))
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
        let (tx, rx) = mpsc::unbounded();
        let run = self
            .agent
            .resume_hooked(self.resume, Some(tx.clone()), self.checkpoint)?;
        tokio::spawn(async move {
            let response = run.await;
            let _ = tx.unbounded_send(RunEvent::RunCompleted(response));
        });
        Ok(RunStream { rx, done: false })
    }
}

impl<'a> IntoFuture for ResumeBuilder<'a> {
    type Output = Result<Response, DecisionError>;
    type IntoFuture = BoxFuture<'a, Result<Response, DecisionError>>;

    fn into_future(self) -> Self::IntoFuture {
        let run = self.agent.resume_hooked(self.resume, None, self.checkpoint);
        Box::pin(async move { Ok(run?.await) })
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
        finish_reason: None,
        pending: Vec::new(),
        error: Some(RunError {
            code: "run_aborted".into(),
            message: "the run ended without a response (its task panicked or the runtime stopped)"
                .into(),
            cause: None,
        }),
    }
}
