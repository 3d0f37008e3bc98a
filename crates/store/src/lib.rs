//! Parlance threads: every conversation stored, in SQLite (the embedded
//! default: one file, nothing to install) or PostgreSQL (many servers
//! sharing one store).
//!
//! - [`Store`]: threads, messages (canonical JSON, in order), runs (status,
//!   error and cause, usage, the agent's settings), artifacts (inside the
//!   stored tool results, listed apart), pending approvals (the paused
//!   run's stored messages), the inbox's sessions ended before they
//!   expire. Migrations run themselves and are versioned.
//!
//! The store stores: it depends on the conversation format alone. Running
//! an agent on a thread (history loaded, each step committed as it
//! completes, approvals resumed, failed runs retried) is
//! `parlance_runtime::ThreadRunner`'s job, written with this crate's calls.
//!
//! One run at a time per thread, across processes and servers: a unique
//! index admits one active (running or waiting) run per thread; a running
//! run holds a lease that a heartbeat renews while it lives (slow steps
//! included); a run whose lease ran out writes nothing more, and is marked
//! `interrupted` (its thread repaired) as soon as its thread is touched or
//! the store is swept — or, given a resume grace, taken over by a resumer
//! first and carried on from its last committed step ([`Store::take_over`]). Runs on threads are detached from their callers:
//! they end and store their outcome whatever the caller does.

mod batch;
mod children;
mod claim;
mod cooldowns;
mod error;
mod inbox;
mod log;
mod redact;
mod repair;
mod runs;
mod sessions;
mod spend;
mod sql;
mod store;
mod takeover;
mod write;
mod writer;

pub use claim::Claim;
pub use inbox::WaitingRun;
pub use log::LoggedMessage;
pub use parlance_format::ThreadSpend;
pub use redact::{MIN_SECRET_LEN, REDACTED, Redactor};
pub use repair::{repair, settle_pending};
pub use sessions::ALL_SESSIONS;
pub use store::{
    ActiveRun, Artifact, DEFAULT_LEASE, MAX_PAGE, Page, RunRecord, Store, StoreError,
    StoredMessage, Thread,
};
pub use takeover::{DeadRun, Takeover};
