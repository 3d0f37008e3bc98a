//! Parlance's runs on [Temporal]: the executor for deployments past one
//! database primary.
//!
//! - A thread is a workflow ([`ThreadWorkflow`]; its id is the thread's
//!   id, so Temporal's id rules keep one active run per thread).
//! - A run goes forward in activities ([`Steps::advance`]), each carrying
//!   it from where the store says it stands to its next rest: its end, or
//!   a pause for decisions. Every step inside commits to the thread store
//!   as it completes (the same [`parlance_runtime::ThreadRunner`] as the
//!   built-in executor), so a retried activity — its worker killed, its
//!   heartbeat lost — carries the run on from its last committed step and
//!   nothing that committed runs twice.
//! - A decision is a Temporal Update ([`ThreadWorkflow::decide`]) whose
//!   validator is the engine's own check ([`parlance_agent::Agent::validate_decisions`]):
//!   a forged digest or invalid edited arguments are refused before they
//!   reach the workflow's history.
//! - The thread's messages land in the SQL store step by step, so listing
//!   threads, the inbox and the HTTP API read them as ever; a run's events
//!   reach the server that streams it by polling the store ([`Temporal`]).
//!
//! What travels through Temporal is small: ids, a new run's input, and a
//! paused run's last two messages (for the Update validator). A run's
//! input must fit Temporal's payload limit (2 MiB): a larger one is
//! refused before the workflow starts ([`MAX_INPUT_BYTES`]).
//!
//! [Temporal]: https://temporal.io

mod executor;
mod registry;
mod steps;
mod task;
mod workflow;

pub use executor::{MAX_INPUT_BYTES, Settings, Temporal, TemporalError, Worker};
pub use steps::Steps;
pub use task::{Advance, Begin, Rest, Work};
pub use workflow::ThreadWorkflow;
