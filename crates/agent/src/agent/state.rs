//! A run in progress: the model's whole context, where this run's turn
//! starts in it, and the responses a run ends with.

use std::sync::Arc;

use parlance_format::{
    FinishReason, Message, Response, RunError, RunStatus, ToolSpec, Turn, Usage, new_id,
};
use parlance_model::ModelRequest;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::input::RunInput;
use crate::engine::{CallSettings, ToolBox};

/// A run in progress.
pub(super) struct State {
    pub(super) run_id: String,
    pub(super) thread_id: Option<String>,
    /// The instructions, the thread's messages (all of them: what is not
    /// sent is left out when a request is made, see `window`), and this
    /// run's messages.
    pub(super) request: ModelRequest,
    /// Where the thread's messages start in `request.messages` (after the
    /// instructions).
    pub(super) thread_start: usize,
    /// Where this run's messages start in `request.messages`.
    pub(super) turn_start: usize,
    /// Where the messages the run wrote start (after its input).
    pub(super) input_end: usize,
    pub(super) usage: Usage,
    pub(super) finish_reason: Option<FinishReason>,
    /// The tools offered now (the agent's, and its toolsets' as last listed).
    pub(super) tools: Arc<ToolBox>,
    /// Cancels the run's tool calls.
    pub(super) cancel: CancellationToken,
}

/// A run's state goes when the run ends or its future is dropped (the
/// caller gave up on it): either way its tool calls are over, and a tool
/// still working elsewhere (a blocking thread, a detached task) sees its
/// token cancelled.
impl Drop for State {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

impl State {
    /// This run's messages.
    pub(super) fn turn(&self) -> &[Message] {
        &self.request.messages[self.turn_start..]
    }

    /// What the run does next, from its messages alone.
    pub(super) fn next(&self, max_model_calls: u32) -> super::machine::Next {
        let len = self.request.messages.len();
        let written = len - self.input_end.max(self.turn_start).min(len);
        super::machine::next(self.turn(), written, max_model_calls)
    }

    pub(super) fn response(&self, status: RunStatus, output: Value) -> Response {
        Response {
            id: Some(self.run_id.clone()),
            thread_id: self.thread_id.clone(),
            status,
            messages: self.turn().to_vec(),
            output,
            usage: self.usage,
            cost: parlance_format::total_cost(self.turn()),
            finish_reason: self.finish_reason,
            pending: Vec::new(),
            error: None,
        }
    }

    /// The run ends with `error`.
    pub(super) fn failed(&self, error: RunError) -> Response {
        let mut r = self.response(RunStatus::Failed, Value::Null);
        r.error = Some(error);
        r
    }
}

impl Agent {
    /// The state of a run on `turns`, before its own messages.
    pub(super) fn state(
        &self,
        turns: &[Turn],
        run_id: Option<String>,
        thread_id: Option<String>,
    ) -> State {
        let mut messages = Vec::new();
        if let Some(text) = &self.inner.instructions {
            messages.push(Message::system(text.clone()));
        }
        let thread_start = messages.len();
        for turn in turns {
            messages.extend(turn.messages.iter().cloned());
        }
        let (tools, specs) = self.offered_now();
        State {
            tools,
            thread_start,
            run_id: run_id.unwrap_or_else(|| new_id("run")),
            thread_id,
            turn_start: messages.len(),
            input_end: messages.len(),
            request: ModelRequest {
                messages,
                tools: specs,
                options: self.inner.options.clone(),
            },
            usage: Usage::default(),
            finish_reason: None,
            cancel: CancellationToken::new(),
        }
    }

    /// The tools as last offered: the agent's, merged with its toolsets'
    /// when they have been listed.
    pub(super) fn offered_now(&self) -> (Arc<ToolBox>, Arc<[ToolSpec]>) {
        match self.inner.offer.last() {
            Some(o) => (o.tools, o.specs),
            None => (Arc::clone(&self.inner.tools), Arc::clone(&self.inner.specs)),
        }
    }

    /// Asks the toolsets for their tools (starting them the first time)
    /// and offers what they list from the next model call on. A toolset
    /// that cannot list its tools fails the run (`tools_unavailable`).
    pub(super) async fn refresh_tools(&self, state: &mut State) -> Result<(), RunError> {
        let sets = &self.inner.toolsets;
        if sets.is_empty() {
            return Ok(());
        }
        let listed = futures::future::join_all(sets.iter().map(|t| t.tools())).await;
        let mut parts = Vec::with_capacity(listed.len());
        for r in listed {
            parts.push(r.map_err(|e| RunError::new("tools_unavailable", e.to_string()))?);
        }
        let offered = self.inner.offer.offer(&self.inner.tools, sets, parts);
        if !Arc::ptr_eq(&state.tools, &offered.tools) {
            state.tools = offered.tools;
            state.request.tools = offered.specs;
        }
        Ok(())
    }

    /// The state of a new run.
    pub(super) fn start(&self, input: RunInput) -> State {
        let mut state = self.state(&input.turns, input.run_id, input.thread_id);
        state.request.messages.extend(input.input);
        state.input_end = state.request.messages.len();
        state
    }

    /// What each tool call of the run is given.
    pub(super) fn call_settings(&self, state: &State) -> CallSettings {
        let l = &self.inner.limits;
        CallSettings {
            timeout: l.tool_timeout,
            concurrency: l.tool_concurrency,
            on_tool_exception: l.on_tool_exception,
            max_output: l.max_tool_output,
            run_id: Arc::from(state.run_id.as_str()),
            thread_id: state.thread_id.as_deref().map(Arc::from),
            cancel: state.cancel.clone(),
            deps: self.deps.clone(),
            host: None,
        }
    }
}
