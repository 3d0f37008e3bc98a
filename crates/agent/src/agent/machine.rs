//! The run loop's state machine: from a run's committed messages alone,
//! what comes next.
//!
//! ```text
//!            ┌──────────── tool results ────────────┐
//!            ▼                                      │
//! start ─► model ─► answer with calls ─► tools ─────┤
//!            │                                      ▼
//!            │                          requests waiting ─► decide (pause)
//!            ▼                                          resume ─► tools
//!  answer without calls ─► end
//! ```
//!
//! [`next`] is pure — no I/O, no clock, no agent — so what a run does
//! next is decided the same way by the built-in runner (`run_loop`), by a
//! run carried on after its process died, and by any other executor that
//! holds the same messages. The runner's steps (`Agent::model_step`,
//! `Agent::tools_step`) each commit one message, then ask again.
//!
//! ```
//! use parlance_agent::agent::machine::{Next, next};
//! use parlance_format::Message;
//!
//! let turn = [Message::user("Where is order 7?"), Message::assistant("It shipped.")];
//! assert_eq!(next(&turn, 1, 10), Next::End); // the run wrote the answer
//! assert_eq!(next(&turn, 0, 10), Next::Model); // it was all the caller's input
//! ```

use parlance_format::{ApprovalRequest, Block, Message, Role};

/// What a run does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Ask the model: the run is new, or its last message is the tools'
    /// results or a message for the model (an output retry).
    Model,
    /// Run the calls of the last answer: nothing answered them yet.
    Tools,
    /// Calls wait for a human's decision: the run pauses.
    Decide(Vec<ApprovalRequest>),
    /// The model answered without calls: the run is over (a guardrail may
    /// still have blocked that answer).
    End,
    /// The model was asked `limit` times without finishing.
    OutOfModelCalls {
        /// The agent's `max_model_calls`.
        limit: u32,
    },
}

/// What comes next for a run whose messages so far are `turn` — its input,
/// then the last `written` messages, which the run wrote — under a limit of
/// `max_model_calls` answers. An input that ends with an assistant's
/// answer is not the run's answer: the model is asked.
pub fn next(turn: &[Message], written: usize, max_model_calls: u32) -> Next {
    let model = || {
        let answers = turn.iter().filter(|m| m.role == Role::Assistant).count();
        if answers as u64 >= u64::from(max_model_calls) {
            Next::OutOfModelCalls {
                limit: max_model_calls,
            }
        } else {
            Next::Model
        }
    };
    let Some(last) = turn.last() else {
        return model();
    };
    match last.role {
        Role::Assistant if last.tool_calls().next().is_some() => Next::Tools,
        Role::Assistant if written == 0 => model(),
        Role::Assistant => Next::End,
        Role::Tool => {
            let waiting: Vec<ApprovalRequest> = last
                .content
                .iter()
                .filter_map(|b| match b {
                    Block::ApprovalRequest { approval_request } => Some(approval_request.clone()),
                    _ => None,
                })
                .collect();
            if waiting.is_empty() {
                model()
            } else {
                Next::Decide(waiting)
            }
        }
        Role::User | Role::System => model(),
    }
}

#[cfg(test)]
mod tests {
    use parlance_format::{ToolResult, ToolStatus};
    use serde_json::json;

    use super::*;

    fn call(id: &str) -> Message {
        Message::new(
            Role::Assistant,
            vec![Block::tool_call(id, "lookup", json!({}))],
        )
    }

    fn result(id: &str) -> Block {
        Block::tool_result(ToolResult::text(id, ToolStatus::Ok, "ok"))
    }

    fn request(id: &str) -> Block {
        Block::ApprovalRequest {
            approval_request: ApprovalRequest {
                tool_call_id: id.into(),
                name: "lookup".into(),
                arguments: json!({}),
                digest: "d".into(),
                run_id: None,
            },
        }
    }

    #[test]
    fn a_new_run_asks_the_model() {
        assert_eq!(next(&[], 0, 8), Next::Model);
        assert_eq!(next(&[Message::user("hi")], 0, 8), Next::Model);
        assert_eq!(next(&[Message::system("be brief")], 0, 8), Next::Model);
    }

    #[test]
    fn an_answer_with_calls_runs_them_and_one_without_ends_the_run() {
        assert_eq!(next(&[Message::user("hi"), call("c1")], 1, 8), Next::Tools);
        let answered = [Message::user("hi"), Message::assistant("Hello.")];
        assert_eq!(next(&answered, 1, 8), Next::End);
        // The caller's own history ending with an answer: the model is asked.
        assert_eq!(next(&answered, 0, 8), Next::Model);
    }

    #[test]
    fn results_go_back_to_the_model_and_requests_wait() {
        let done = Message::new(Role::Tool, vec![result("c1")]);
        assert_eq!(next(&[call("c1"), done], 2, 8), Next::Model);
        let waiting = Message::new(Role::Tool, vec![result("c1"), request("c2")]);
        let Next::Decide(pending) = next(&[call("c1"), waiting], 2, 8) else {
            panic!("a waiting call pauses the run");
        };
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].tool_call_id, "c2");
    }

    #[test]
    fn the_model_is_asked_at_most_its_limit() {
        let turn = [
            Message::user("hi"),
            call("c1"),
            Message::new(Role::Tool, vec![result("c1")]),
        ];
        assert_eq!(next(&turn, 2, 2), Next::Model);
        assert_eq!(next(&turn, 2, 1), Next::OutOfModelCalls { limit: 1 });
        assert_eq!(next(&[], 0, 0), Next::OutOfModelCalls { limit: 0 });
        // A limit reached with calls to run or an answer: those come first.
        assert_eq!(next(&turn[..2], 1, 1), Next::Tools);
    }

    #[test]
    fn an_output_retry_asks_the_model_again() {
        let turn = [
            Message::user("hi"),
            Message::assistant("not json"),
            Message::user("the final answer is not JSON"),
        ];
        assert_eq!(next(&turn, 2, 8), Next::Model);
        assert_eq!(next(&turn, 2, 1), Next::OutOfModelCalls { limit: 1 });
    }
}
