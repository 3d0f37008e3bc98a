//! Where a run's progress goes as it happens: events for a caller that
//! streams ([`RunEvent`]), steps for a caller that stores
//! ([`Checkpoint`]).

use std::sync::Arc;
use std::time::Duration;

use futures::channel::mpsc;
use futures::future::BoxFuture;
use parlance_format::{ApprovalRequest, Message, Response, ThreadSpend, ToolStatus};
use tokio_util::sync::CancellationToken;

use crate::engine::{EventSink, ToolEvent};
use crate::tool::SharedError;

/// What a streamed run reports as it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// More answer text.
    TextDelta(String),
    /// More reasoning text.
    ThinkingDelta(String),
    /// A message was added to the run (assistant or tool); with a
    /// checkpoint, once it is committed.
    MessageCompleted(Message),
    /// A tool call started running.
    ToolCallStarted {
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
    },
    /// A tool call ended.
    ToolCallFinished {
        /// The call's id.
        call_id: String,
        /// The tool.
        name: String,
        /// How it ended.
        status: ToolStatus,
        /// How long it took.
        elapsed: Duration,
    },
    /// The run stopped to wait for these decisions.
    ApprovalRequired(Vec<ApprovalRequest>),
    /// The context policy cut the oldest turns (a `message` event with the
    /// record follows).
    ContextCompacted(crate::context::Compaction),
    /// The run ended (any status); always the last event.
    RunCompleted(Response),
}

impl RunEvent {
    /// The event's name, as the HTTP API's SSE events and the packages'
    /// `type` fields spell it.
    pub fn name(&self) -> &'static str {
        match self {
            RunEvent::TextDelta(_) => "text_delta",
            RunEvent::ThinkingDelta(_) => "thinking_delta",
            RunEvent::MessageCompleted(_) => "message",
            RunEvent::ToolCallStarted { .. } => "tool_call_started",
            RunEvent::ToolCallFinished { .. } => "tool_call_finished",
            RunEvent::ApprovalRequired(_) => "approval_required",
            RunEvent::ContextCompacted(_) => "context_compacted",
            RunEvent::RunCompleted(_) => "run_completed",
        }
    }
}

/// A step of a run, as it completes.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// A message was added (an assistant message, a tool message).
    Append(&'a Message),
    /// The last message was replaced (a tool message whose approval
    /// requests were decided, or whose failed calls were retried).
    ReplaceLast(&'a Message),
}

/// Receives each step of a run as it completes, so that it can be stored
/// atomically (a thread store commits each one). An error fails the run
/// with code `store`, the error as the run error's
/// [`source`](std::error::Error::source).
pub trait Checkpoint: Send + Sync {
    /// Keeps one step.
    fn commit<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>>;

    /// What the storage counted for the run's thread and its owner, for
    /// an agent's thread and owner budgets ([`crate::budget`]); asked
    /// before each model call of such an agent. `None` (the default): the
    /// storage counts nothing, and only the run's own limits apply.
    fn spent(&self) -> BoxFuture<'_, Result<Option<ThreadSpend>, CheckpointError>> {
        Box::pin(async { Ok(None) })
    }

    /// Makes the run of an agent used as a tool (see
    /// [`Agent::as_tool`](crate::Agent::as_tool)) where this run is kept,
    /// and answers with its response: a new run, or — for a call made
    /// again (a resumed or carried-on parent) — the run the call made
    /// before, as it stands (finished, or waiting for decisions), so that
    /// a sub-agent's run is made once per call. `None` (the default): this
    /// storage keeps no runs of its own, and the sub-agent runs in memory.
    fn run_child<'a>(&'a self, child: ChildRun<'a>) -> Option<ChildOutcome<'a>> {
        let _ = child;
        None
    }
}

/// A step could not be kept: the storage's own error (or a message),
/// which becomes the failed run error's `source()`.
#[derive(Debug, Clone)]
pub struct CheckpointError(SharedError);

impl CheckpointError {
    /// Wraps the storage's error (or a message).
    pub fn new(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        CheckpointError(Arc::from(error.into()))
    }

    /// The storage's error.
    pub fn error(&self) -> &SharedError {
        &self.0
    }
}

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for CheckpointError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        let e: &(dyn std::error::Error + 'static) = &*self.0;
        Some(e)
    }
}

/// Where one run's progress goes: events (streaming) and steps (storage).
#[derive(Clone, Default)]
pub(crate) struct Hooks {
    pub(crate) events: Option<mpsc::UnboundedSender<RunEvent>>,
    pub(crate) checkpoint: Option<Arc<dyn Checkpoint>>,
}

impl Hooks {
    /// Reports an event, when someone listens.
    pub(crate) fn emit(&self, event: RunEvent) {
        if let Some(tx) = &self.events {
            // The receiver may be gone (the caller stopped listening): the
            // run still finishes so that its state stays consistent.
            let _ = tx.unbounded_send(event);
        }
    }

    /// Whether a caller streams the run.
    pub(crate) fn streaming(&self) -> bool {
        self.events.is_some()
    }

    /// Keeps a step, when someone stores the run.
    pub(crate) async fn commit(&self, step: Step<'_>) -> Result<(), CheckpointError> {
        match &self.checkpoint {
            Some(c) => {
                let started = std::time::Instant::now();
                let kept = c.commit(step).await;
                crate::telemetry::store_write(kept.is_ok(), started.elapsed());
                kept
            }
            None => Ok(()),
        }
    }

    /// What the storage counted for the run's thread and owner, when
    /// someone stores the run and counts.
    pub(crate) async fn spent(&self) -> Result<Option<ThreadSpend>, CheckpointError> {
        match &self.checkpoint {
            Some(c) => c.spent().await,
            None => Ok(None),
        }
    }

    /// The tool engine's events as run events, when someone listens.
    pub(crate) fn tool_events(&self) -> Option<EventSink> {
        let tx = self.events.clone()?;
        Some(Arc::new(move |e: &ToolEvent| {
            let event = match e {
                ToolEvent::Started { call_id, name, .. } => RunEvent::ToolCallStarted {
                    call_id: call_id.clone(),
                    name: name.clone(),
                },
                ToolEvent::Finished {
                    call_id,
                    name,
                    status,
                    elapsed,
                    ..
                } => RunEvent::ToolCallFinished {
                    call_id: call_id.clone(),
                    name: name.clone(),
                    status: *status,
                    elapsed: *elapsed,
                },
            };
            let _ = tx.unbounded_send(event);
        }))
    }
}

/// A sub-agent's run to make (or find again) where the parent's run is
/// kept: what [`Checkpoint::run_child`] is given.
#[derive(Debug)]
pub struct ChildRun<'a> {
    /// The sub-agent.
    pub agent: &'a super::Agent,
    /// The tool's name in the parent.
    pub tool: &'a str,
    /// The parent's run.
    pub parent_run_id: &'a str,
    /// The parent's thread, when it runs on one.
    pub parent_thread_id: Option<&'a str>,
    /// The parent's call (with the run: which sub-agent run this is).
    pub call_id: &'a str,
    /// The task, as the sub-agent's input.
    pub input: Vec<Message>,
    /// Cancelled when the parent's call is (a timeout, the run stopped).
    pub cancel: CancellationToken,
}

/// A sub-agent's run as a checkpoint makes it (see
/// [`Checkpoint::run_child`]): its response, or why it could not be kept.
pub type ChildOutcome<'a> = BoxFuture<'a, Result<Response, CheckpointError>>;
