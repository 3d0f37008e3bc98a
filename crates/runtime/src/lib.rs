//! Parlance's thread runner: an agent run on a thread of a
//! [`parlance_store::Store`].
//!
//! - [`ThreadRunner`]: the history is loaded from the store (a thread whose
//!   last run died mid-step is repaired first), the input and each step are
//!   committed atomically as they complete, approvals are resumed from the
//!   store alone (by any process), failed runs are retried.
//! - [`RunHandle`]: a started run. Runs on threads are detached from their
//!   callers: they go on to their end and store their outcome whatever the
//!   caller does (a client hanging up, a dropped future); a heartbeat
//!   renews the run's lease while it lives, slow steps included.
//! - [`Resumer`]: runs whose process died are taken over and carried on
//!   from their last committed step, by the agent that made them.
//! - [`children`]: agents used as tools keep their runs on threads of
//!   their own; their approvals are listed and decided through the parent.
//! - [`StoreCooldowns`]: a fallback's cooldowns (models that answered
//!   `429`) shared by every process and server of the store.
//!
//! This crate joins the agent and the store, so that neither depends on
//! the other: the store stores (it knows the conversation format only),
//! the agent runs (it knows nothing of SQL).

pub mod children;
mod cooldowns;
mod resumer;
mod runner;

pub use cooldowns::StoreCooldowns;
pub use resumer::{DEFAULT_MAX_ATTEMPTS, NotResumed, Resumed, Resumer, log as log_resumed};
pub use runner::{AgentsByName, ResumeError, RunHandle, TakenOver, ThreadRunner};
