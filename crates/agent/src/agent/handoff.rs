//! Handoffs: an agent hands the conversation to another
//! ([`AgentBuilder::handoff`](super::AgentBuilder::handoff)). Each target is
//! offered to the model as a tool `transfer_to_NAME` without arguments;
//! when the model calls one, the call's result says so, the tool message
//! records `{"from", "to"}` in its metadata
//! ([`HANDOFF_KEY`](parlance_format::HANDOFF_KEY)), and the run
//! goes on with the target — its instructions, tools, model and limits —
//! on the same messages. The next turns are the target's too: a run whose
//! history's last handoff names another agent that this one can reach (by
//! its handoffs, and theirs) is that agent's run ([`Agent::holder`]), so a
//! thread stays with the agent it was handed to, whichever agent of the
//! chain a caller names. The history crosses providers by the format's one
//! rule: another provider's opaque data (reasoning, signatures) is dropped
//! from the requests, never sent.

use std::sync::Arc;

use parlance_format::{Message, Response, Turn};
use serde_json::{Value, json};

use super::Agent;
use super::events::Hooks;
use super::state::State;
use crate::Tool;

/// The tool that hands the conversation to `target`.
pub(super) fn transfer_tool(target: &Agent) -> Tool {
    let name = target.inner.name.clone().unwrap_or_default();
    let description = match &target.inner.description {
        Some(d) => format!("Hand the conversation to the {name} agent: {d}"),
        None => format!("Hand the conversation to the {name} agent."),
    };
    let done = format!("Transferred to {name}.");
    Tool::new(tool_name(&name), description, move |_: Value| {
        let done = done.clone();
        async move { Ok(done) }
    })
    .with_schema(json!({"type": "object", "properties": {}, "additionalProperties": false}))
}

/// The name of the tool that hands over to the agent `name`.
pub fn tool_name(name: &str) -> String {
    format!("transfer_to_{name}")
}

impl Agent {
    /// The agent a call of tool `name` hands the conversation to.
    pub(super) fn handoff_target(&self, name: &str) -> Option<&Agent> {
        self.inner
            .handoffs
            .iter()
            .find(|a| a.inner.name.as_deref().map(tool_name).as_deref() == Some(name))
    }

    /// The agents this one can hand the conversation to.
    pub fn handoffs(&self) -> impl Iterator<Item = &Agent> {
        self.inner.handoffs.iter()
    }

    /// Who holds a conversation whose messages are `history`: the agent the
    /// last handoff in it named, when it is another one this agent reaches
    /// by handoffs (its own, then theirs); `None` when that is this agent,
    /// or nothing was handed over, or the agent named is not reachable
    /// from here (this agent then answers).
    pub fn holder<'a>(
        &self,
        history: impl DoubleEndedIterator<Item = &'a Message>,
    ) -> Option<Agent> {
        if self.inner.handoffs.is_empty() {
            return None;
        }
        let to = history.rev().find_map(Message::handoff)?;
        if self.inner.name.as_deref() == Some(to) {
            return None;
        }
        // Breadth first, each agent once: handoffs may go round in circles.
        let mut seen: Vec<*const super::Inner> = vec![Arc::as_ptr(&self.inner)];
        let mut queue: std::collections::VecDeque<&Agent> = self.inner.handoffs.iter().collect();
        while let Some(a) = queue.pop_front() {
            if seen.contains(&Arc::as_ptr(&a.inner)) {
                continue;
            }
            seen.push(Arc::as_ptr(&a.inner));
            if a.inner.name.as_deref() == Some(to) {
                return Some(Agent {
                    inner: Arc::clone(&a.inner),
                    deps: self.deps.clone(),
                });
            }
            queue.extend(a.inner.handoffs.iter());
        }
        tracing::warn!(
            agent = self.inner.name.as_deref().unwrap_or(""),
            to,
            "the conversation was handed to an agent this one does not reach: it answers itself"
        );
        None
    }

    /// [`Agent::holder`] of the history in `turns`.
    pub(crate) fn holder_of(&self, turns: &[Turn]) -> Option<Agent> {
        self.holder(turns.iter().flat_map(|t| t.messages.iter()))
    }

    /// Goes on with a run handed over to this agent: its instructions in
    /// place of the last agent's, its tools and options offered from the
    /// next model call on.
    pub(super) async fn take_over(&self, state: &mut State, hooks: &Hooks) -> Response {
        let old = state.thread_start;
        let messages = &mut state.request.messages;
        messages.drain(..old);
        if let Some(text) = &self.inner.instructions {
            messages.insert(0, Message::system(text.clone()));
        }
        let new = usize::from(self.inner.instructions.is_some());
        let shift = |i: usize| i - old + new;
        state.thread_start = new;
        state.turn_start = shift(state.turn_start);
        state.input_end = shift(state.input_end);
        let (tools, specs) = self.offered_now();
        state.tools = tools;
        state.request.tools = specs;
        state.request.options = self.inner.options.clone();
        // Boxed: the loop's future holds the loop that called it.
        Box::pin(self.drive(state, hooks)).await
    }
}

/// The metadata a handoff's tool message carries.
pub(super) fn record(from: &Agent, to: &Agent) -> Value {
    json!({"from": from.inner.name, "to": to.inner.name})
}
