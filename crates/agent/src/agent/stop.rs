//! What stops a run after a step, whoever orders it (a guardrail, a
//! failing tool, the invalid-call budget, the store), so that the steps
//! that order a stop and the turn that carries it out need not know each
//! other.

use parlance_format::{Message, RunError, Usage};
use serde_json::Value;

use super::events::CheckpointError;
use crate::engine::{BudgetExceeded, FailureCause};

/// A stop ordered by a guardrail: the answer for the user and the error.
#[derive(Debug)]
pub(super) struct Blocked(pub(super) Box<Stopped>);

/// Boxed in [`Blocked`]: the loop's values that may hold one (a turn's
/// `Stop`, an answer's ending) stay small for the runs that never block.
#[derive(Debug)]
pub(super) struct Stopped {
    pub(super) answer: Message,
    pub(super) error: RunError,
}

impl Blocked {
    pub(super) fn new(answer: Message, error: RunError) -> Blocked {
        Blocked(Box::new(Stopped { answer, error }))
    }
}

/// What stops the run after a turn of tool calls, if anything.
#[derive(Default)]
pub(super) struct Stop {
    /// A tool's unexpected failure under policy `fail`.
    pub(super) failed_tool: Option<FailureCause>,
    /// One invalid call too many.
    pub(super) over_budget: Option<BudgetExceeded>,
    /// A tool-call guardrail blocked a call: the run ends `blocked`.
    pub(super) blocked: Option<Blocked>,
    /// A tool-call guardrail failed: the run ends `guardrail_failed`.
    pub(super) guard_failed: Option<RunError>,
    /// The guardrails' outcomes, for the tool message's metadata.
    pub(super) records: Vec<Value>,
    /// What agents used as tools spent in this turn (tokens, dollars
    /// when priced): it rolls up on the tool message.
    pub(super) spent: Option<(Usage, Option<f64>)>,
    /// A handoff the turn made (`{"from", "to"}`), for the tool message's
    /// metadata.
    pub(super) handoff: Option<Value>,
}

impl Stop {
    /// Adds a sub-agent's spending to the turn's.
    pub(super) fn spent(&mut self, usage: Usage, cost: Option<f64>) {
        let (u, c) = self.spent.get_or_insert((Usage::default(), None));
        u.add(&usage);
        if let Some(cost) = cost {
            *c = Some(c.unwrap_or(0.0) + cost);
        }
    }

    pub(super) fn stops(&self) -> bool {
        self.failed_tool.is_some()
            || self.over_budget.is_some()
            || self.blocked.is_some()
            || self.guard_failed.is_some()
    }
}

/// A step could not be stored: the run fails with code `store`, the
/// storage's error as its source.
pub(super) fn not_stored(e: CheckpointError) -> RunError {
    RunError::new("store", format!("the step could not be stored: {e}"))
        .with_source(e.error().clone())
}
