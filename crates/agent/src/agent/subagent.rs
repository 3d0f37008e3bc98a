//! Agents that call agents: [`Agent::as_tool`] makes an agent a tool of
//! another. The parent's model sends the task as `input`; the sub-agent
//! runs a run of its own and the parent's model reads only its final
//! output. What the sub-agent spent rolls up into the parent's run (on the
//! tool message, like a model answer's usage and cost).
//!
//! Where the sub-agent's run is kept is the parent's checkpoint's choice
//! ([`Checkpoint::run_child`]): a thread store gives it a thread of its
//! own, linked to the parent's run and call, so its steps show in the
//! thread view, its approvals in the inbox, and a call replayed after a
//! crash finds the run it already made instead of making another. With no
//! store, the sub-agent runs in memory.
//!
//! A sub-agent that waits for a decision makes the parent's call wait with
//! it: the parent's tool message holds an approval request for the call,
//! naming the sub-agent's run (`run_id`); the store's runtime lists the
//! sub-agent's requests in the parent's place and, once they are decided
//! and the sub-agent has finished, approves the parent's call, which then
//! reads the finished run's output. In memory, a sub-agent cannot wait
//! (nothing would keep it): the call fails, saying so.
//!
//! Each run keeps its own provider's opaque data (reasoning, signatures)
//! behind its provider tag: the parent's history holds only the
//! sub-agent's output, so no provider is ever sent another's reasoning.

use std::sync::Arc;

use futures::future::BoxFuture;
use parlance_format::{Message, Response, RunStatus};
use serde_json::{Value, json};

use super::Agent;
use super::events::{Checkpoint, ChildRun};
use crate::tool::{Delegated, IntoToolContent, Tool, ToolContext, ToolFailure};
use crate::validate::ArgumentProblem;

/// The parent's checkpoint, as a tool call carries it (see
/// `ToolContext::host`).
pub(crate) struct HostLink(pub(crate) Arc<dyn Checkpoint>);

/// What the model sends a sub-agent.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "input": {"type": "string", "description": "The task, in full: the agent sees nothing else of this conversation."}
        },
        "required": ["input"],
        "additionalProperties": false
    })
}

impl Agent {
    /// This agent as a tool of another, called `name`, described to the
    /// parent's model by `description`. The parent's model sends the task
    /// (`{"input": "…"}`); this agent runs it as a run of its own, with
    /// the parent's dependencies, and its final output is the call's
    /// result. The call's timeout is the parent's tool timeout unless set
    /// on the returned tool (`.timeout(…)`): a sub-agent's run usually
    /// takes longer than a tool's.
    ///
    /// ```
    /// use parlance_agent::Agent;
    /// use parlance_format::{Block, Message, Role};
    /// use parlance_model::scripted::ScriptedModel;
    /// use serde_json::json;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let researcher = Agent::builder(ScriptedModel::new([Message::assistant("Order 7 shipped on May 2.")]))
    ///     .instructions("Look orders up.")
    ///     .build()
    ///     .unwrap();
    /// let call = Block::tool_call("c1", "research", json!({"input": "When did order 7 ship?"}));
    /// let parent = Agent::builder(ScriptedModel::new([
    ///     Message::new(Role::Assistant, vec![call]),
    ///     Message::assistant("It shipped on May 2."),
    /// ]))
    /// .tool(researcher.as_tool("research", "Looks orders up."))
    /// .build()
    /// .unwrap();
    /// let r = parent.run("When did order 7 ship?").await;
    /// assert_eq!(r.text(), "It shipped on May 2.");
    /// assert_eq!(r.messages[2].content[0].as_tool_result().unwrap().content[0], Block::text("Order 7 shipped on May 2."));
    /// # }
    /// ```
    pub fn as_tool(&self, name: impl Into<String>, description: impl Into<String>) -> Tool {
        let name = name.into();
        let (child, tool) = (self.clone(), name.clone());
        Tool::delegate(
            name,
            description,
            input_schema(),
            Arc::new(self.clone()),
            Arc::new(move |args: &Value, ctx: ToolContext| {
                let input = task(args)?;
                let (child, tool) = (child.clone(), tool.clone());
                Ok(
                    Box::pin(async move { delegate(&child, &tool, input, ctx).await })
                        as BoxFuture<'static, Delegated>,
                )
            }),
        )
    }

    /// The agent behind the tool `name`, when that tool is an agent (made
    /// by [`Agent::as_tool`]).
    pub fn sub_agent(&self, name: &str) -> Option<Agent> {
        let tool = self.inner.tools.get(name)?;
        tool.agent.as_ref()?.downcast_ref::<Agent>().cloned()
    }
}

/// The task of a call whose arguments passed the schema.
fn task(args: &Value) -> Result<String, Vec<ArgumentProblem>> {
    match args.get("input") {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(vec![ArgumentProblem::new(
            [crate::validate::PathStep::Key("input".into())],
            "expected a string",
        )]),
    }
}

/// Runs the sub-agent for one call, where the parent is kept (else in
/// memory), and reads its response as the call's outcome.
async fn delegate(child: &Agent, tool: &str, input: String, ctx: ToolContext) -> Delegated {
    // The parent's dependencies, unless the sub-agent was given its own.
    let child = &Agent {
        inner: Arc::clone(&child.inner),
        deps: child.deps.clone().or_else(|| ctx.deps.clone()),
    };
    let host = ctx
        .host
        .as_ref()
        .and_then(|h| h.downcast_ref::<HostLink>())
        .map(|h| Arc::clone(&h.0));
    let run = ChildRun {
        agent: child,
        tool,
        parent_run_id: &ctx.run_id,
        parent_thread_id: ctx.thread_id.as_deref(),
        call_id: &ctx.call_id,
        input: vec![Message::user(input.clone())],
        cancel: ctx.cancel.clone(),
    };
    let stored = host.as_deref().and_then(|h| h.run_child(run));
    let response = match stored {
        Some(fut) => match fut.await {
            Ok(r) => r,
            Err(e) => return failed(tool, "store", &format!("its run could not be kept: {e}")),
        },
        None => {
            // In memory: stopped (dropped) when the parent's call is.
            let run = child.run(input);
            tokio::select! {
                r = run => r,
                _ = ctx.cancel.cancelled() => return failed(tool, "cancelled", "the call was cancelled"),
            }
        }
    };
    outcome(tool, host.is_some(), response)
}

/// The sub-agent's response as the call's outcome.
fn outcome(tool: &str, stored: bool, r: Response) -> Delegated {
    let spent = Some((r.usage, r.cost));
    let (outcome, waiting_on) = match r.status {
        RunStatus::Completed => (r.output.into_content(), None),
        RunStatus::RequiresApproval if stored => (Ok(Vec::new()), r.id.clone()),
        RunStatus::RequiresApproval => {
            let names: Vec<&str> = r.pending.iter().map(|p| p.name.as_str()).collect();
            (
                Err(ToolFailure::unexpected(
                    "requires_approval",
                    format!(
                        "it waits for a decision on {}, and an agent used as a tool can wait only when its runs are kept (a thread store)",
                        names.join(", ")
                    ),
                )),
                None,
            )
        }
        RunStatus::Failed => {
            let (code, message) = r
                .error
                .as_ref()
                .map(|e| (e.code.as_str(), e.message.as_str()))
                .unwrap_or(("failed", "no error was given"));
            (
                Err(ToolFailure::unexpected(
                    format!("agent:{code}"),
                    format!("agent {tool}'s run failed: {message}"),
                )),
                None,
            )
        }
    };
    Delegated {
        outcome,
        spent,
        waiting_on,
    }
}

fn failed(tool: &str, kind: &str, message: &str) -> Delegated {
    Delegated {
        outcome: Err(ToolFailure::unexpected(
            format!("agent:{kind}"),
            format!("agent {tool}: {message}"),
        )),
        spent: None,
        waiting_on: None,
    }
}
