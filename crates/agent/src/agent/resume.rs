//! Decisions on calls waiting for approval: checked against the paused
//! run into a [`ResumePlan`] (nothing runs when one is refused), then
//! applied — the decided calls run together, each result takes its
//! request's place, and the run goes on.

use std::collections::HashMap;

use parlance_format::{
    Approval, Block, Decision, DecisionKind, Response, Role, RunStatus, ToolCall, ToolResult,
    ToolStatus,
};
use serde_json::Value;

use super::Agent;
use super::events::Hooks;
use super::guard::Pending;
use super::input::Resume;
use super::state::State;
use crate::engine::Check;

/// A decision was refused; nothing ran.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct DecisionError {
    /// Where (`decisions[1].digest`, `paused.status`).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

fn refuse(path: impl Into<String>, message: impl Into<String>) -> DecisionError {
    DecisionError {
        path: path.into(),
        message: message.into(),
    }
}

/// Decisions checked against their paused run: the state to go on from,
/// and what takes the place of each decided call's request.
pub(crate) struct ResumePlan {
    state: State,
    decided: Vec<Decided>,
}

impl ResumePlan {
    /// The run's id and thread.
    pub(super) fn ids(&self) -> (String, Option<String>) {
        (self.state.run_id.clone(), self.state.thread_id.clone())
    }
}

/// One decided call: where its request stands in the tool message, and
/// what replaces it.
struct Decided {
    slot: usize,
    then: Then,
}

enum Then {
    /// Approved (the model's arguments) or edited (the reviewer's): run it.
    Run {
        call: ToolCall,
        arguments: Value,
        approval: Approval,
    },
    /// Rejected or answered: the reviewer's result stands in for the tool's.
    Result(ToolResult),
}

impl Agent {
    /// Checks a paused run and its decisions (see the module's doc).
    pub(crate) fn plan_resume(&self, resume: Resume) -> Result<ResumePlan, DecisionError> {
        let paused = resume.paused;
        if paused.status != RunStatus::RequiresApproval {
            return Err(refuse(
                "paused.status",
                format!(
                    "the run is {}, not waiting for decisions",
                    paused.status.as_str()
                ),
            ));
        }
        let decided = self.check_decisions(&paused, &resume.decisions)?;
        let mut state = self.state(&resume.turns, paused.id, paused.thread_id);
        state.request.messages.extend(paused.messages);
        state.usage = paused.usage;
        state.finish_reason = paused.finish_reason;
        Ok(ResumePlan { state, decided })
    }

    /// Checks `decisions` against the `paused` run as a resume would —
    /// each names a waiting call, repeats its digest (signed by this
    /// agent), and an edit's arguments fit the tool — without running
    /// anything. Pure: a Temporal Update validator refuses a forged
    /// decision with it before the decision reaches the workflow's history.
    /// `paused` needs only the run's id and its last two messages (the
    /// answer with the calls, the tool message with the requests).
    pub fn validate_decisions(
        &self,
        paused: &Response,
        decisions: &[Decision],
    ) -> Result<(), DecisionError> {
        self.check_decisions(paused, decisions).map(drop)
    }

    fn check_decisions(
        &self,
        paused: &Response,
        decisions: &[Decision],
    ) -> Result<Vec<Decided>, DecisionError> {
        let n = paused.messages.len();
        let waiting = paused
            .messages
            .last()
            .filter(|m| {
                m.role == Role::Tool
                    && m.content
                        .iter()
                        .any(|b| matches!(b, Block::ApprovalRequest { .. }))
            })
            .ok_or_else(|| {
                refuse(
                    "paused.messages",
                    "the last message holds no approval request",
                )
            })?;
        let calls: HashMap<&str, &ToolCall> = paused.messages[..n - 1]
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(|m| m.tool_calls().map(|c| (c.id.as_str(), c)).collect())
            .unwrap_or_default();
        let run_id = paused.id.as_deref().unwrap_or("");

        let mut decided = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (d_index, d) in decisions.iter().enumerate() {
            let path = format!("decisions[{d_index}]");
            if let Some(first) = seen.insert(d.tool_call_id.as_str(), d_index) {
                return Err(refuse(
                    format!("{path}.tool_call_id"),
                    format!(
                        "call {:?} is decided twice (first in decisions[{first}])",
                        d.tool_call_id
                    ),
                ));
            }
            let found = waiting
                .content
                .iter()
                .enumerate()
                .find_map(|(i, b)| match b {
                    Block::ApprovalRequest { approval_request }
                        if approval_request.tool_call_id == d.tool_call_id =>
                    {
                        Some((i, approval_request))
                    }
                    _ => None,
                });
            let Some((slot, req)) = found else {
                let answered = waiting.content.iter().any(|b| {
                    b.as_tool_result()
                        .is_some_and(|r| r.tool_call_id == d.tool_call_id)
                });
                let why = if answered {
                    format!("call {:?} is already decided", d.tool_call_id)
                } else {
                    format!("no pending call has id {:?}", d.tool_call_id)
                };
                return Err(refuse(format!("{path}.tool_call_id"), why));
            };
            // The stored request must still match the model's call, and the
            // decision must repeat the request's digest.
            let call = *calls.get(req.tool_call_id.as_str()).ok_or_else(|| {
                refuse(
                    format!("{path}.tool_call_id"),
                    format!("the paused run has no tool call {:?}", req.tool_call_id),
                )
            })?;
            // Signed with the current key or a previous one (the run may
            // have paused before the secret rotated).
            let signed = self.digest_matches(run_id, call, &req.digest);
            if !signed || req.name != call.name || req.arguments != call.arguments {
                return Err(refuse(
                    format!("{path}.tool_call_id"),
                    format!(
                        "the pending request for call {:?} does not match the model's call (was it altered?)",
                        d.tool_call_id
                    ),
                ));
            }
            if d.digest != req.digest {
                return Err(refuse(
                    format!("{path}.digest"),
                    format!(
                        "does not match the pending call {:?}: the call or its arguments changed",
                        d.tool_call_id
                    ),
                ));
            }
            if let Some(arguments) = &d.arguments {
                depth_ok(arguments, &format!("{path}.arguments"))?;
            }
            if let Some(content) = &d.content {
                check_answer(content, &path)?;
            }
            let then = self.then(call, d, &path)?;
            decided.push(Decided { slot, then });
        }
        if decided.is_empty() {
            return Err(refuse("decisions", "no decision given"));
        }
        Ok(decided)
    }

    /// What a valid decision on `call` makes of it.
    fn then(&self, call: &ToolCall, d: &Decision, path: &str) -> Result<Then, DecisionError> {
        let record = Approval {
            decision: d.decision,
            arguments: d.arguments.clone(),
            reason: d.reason.clone(),
        };
        let result = |status, content| {
            Then::Result(ToolResult {
                tool_call_id: call.id.clone(),
                name: Some(call.name.clone()),
                content,
                status,
                artifact: None,
                approval: Some(record.clone()),
            })
        };
        Ok(match d.decision {
            DecisionKind::Approved => Then::Run {
                call: call.clone(),
                arguments: call.arguments.clone(),
                approval: Approval {
                    reason: None,
                    ..record
                },
            },
            DecisionKind::Edited => {
                let arguments = d
                    .arguments
                    .clone()
                    .expect("the reader requires arguments for edited");
                let (tools, _) = self.offered_now();
                match tools.check(&call.name, call, &arguments) {
                    Check::Invalid(problems) => {
                        return Err(refuse(
                            format!("{path}.arguments"),
                            format!("invalid for {}: {}", call.name, problems.join("; ")),
                        ));
                    }
                    // A toolset's tool not listed yet in this process:
                    // checked when the call runs.
                    Check::UnknownTool if !self.inner.toolsets.is_empty() => {}
                    Check::UnknownTool => {
                        return Err(refuse(
                            format!("{path}.tool_call_id"),
                            format!("unknown tool {:?}", call.name),
                        ));
                    }
                    Check::Ready { .. } => {}
                }
                Then::Run {
                    call: call.clone(),
                    arguments,
                    approval: Approval {
                        reason: None,
                        ..record
                    },
                }
            }
            DecisionKind::Rejected => {
                let text = match &d.reason {
                    Some(r) => format!("The reviewer rejected this call: {r}"),
                    None => "The reviewer rejected this call.".to_string(),
                };
                result(ToolStatus::Rejected, vec![Block::text(text)])
            }
            DecisionKind::Answered => result(ToolStatus::Ok, d.content.clone().unwrap_or_default()),
        })
    }

    /// Runs the decided calls, puts their results in place of their
    /// requests (so results stay in call order), and goes on.
    pub(super) async fn apply(&self, plan: ResumePlan, hooks: &Hooks) -> Response {
        let ResumePlan { mut state, decided } = plan;
        if let Err(e) = self.refresh_tools(&mut state).await {
            return state.failed(e);
        }
        let mut content = state
            .request
            .messages
            .last()
            .expect("checked: a tool message")
            .content
            .clone();
        let mut to_run = Vec::new();
        for Decided { slot, then } in decided {
            match then {
                Then::Result(r) => content[slot] = Block::tool_result(r),
                Then::Run {
                    call,
                    arguments,
                    approval,
                } => to_run.push((slot, call, arguments, approval)),
            }
        }
        // Approved calls pass the tool-call guardrails like any call
        // before it runs (a redaction applies to what a reviewer approved).
        let pending = to_run
            .iter()
            .map(|(slot, call, arguments, approval)| Pending {
                slot: *slot,
                call,
                arguments: Some(arguments.clone()),
                approved: Some(approval.clone()),
            })
            .collect();
        let (settled, stop) = self.settle_calls(&state, pending, hooks).await;
        for (slot, block) in settled {
            content[slot] = block;
        }
        if let Some(end) = self
            .end_rewritten_turn(&mut state, content, stop, hooks)
            .await
        {
            return end;
        }
        self.drive(&mut state, hooks).await
    }
}

/// A reviewer's answer takes a tool result's place, and every provider
/// carries text and JSON in a tool result, but not all carry images,
/// audio or files (OpenAI Chat takes only text): an answer holding
/// anything else would make every later run on the thread fail, so it is
/// refused, naming the block.
/// A decided value no deeper than the format's limit: the decision is
/// stored with the run and must read back (a form or an API client can
/// build any depth).
fn depth_ok(v: &Value, path: &str) -> Result<(), DecisionError> {
    parlance_format::check_depth(v, path).map_err(|e| refuse(e.path, e.message))
}

fn check_answer(content: &[Block], path: &str) -> Result<(), DecisionError> {
    for (i, b) in content.iter().enumerate() {
        if let Block::Json { json } = b {
            depth_ok(json, &format!("{path}.content[{i}].json"))?;
        } else if !matches!(b, Block::Text(_)) {
            return Err(refuse(
                format!("{path}.content[{i}]"),
                format!(
                    "an answer holds text and json blocks only, not {} (not every provider can carry it in a tool result)",
                    b.type_name()
                ),
            ));
        }
    }
    Ok(())
}
