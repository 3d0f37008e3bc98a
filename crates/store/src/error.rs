//! What the store's calls fail with, and the types every file of the
//! store writes with: apart from the `Store`, so that the files that
//! write (`batch`, `writer`) need nothing of it and its files import one
//! way (`store` → `writer` → `batch` → `error`).

use sqlx::Any;

/// What went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// Another run is active on the thread (running, or waiting for decisions).
    #[error("thread {thread} is busy: run {run} is {status}")]
    Busy {
        /// The thread.
        thread: String,
        /// The active run.
        run: String,
        /// `running` or `requires_approval`.
        status: String,
    },
    /// No such thread or run.
    #[error("{0} not found")]
    NotFound(String),
    /// The request does not fit the stored state.
    #[error("{0}")]
    Conflict(String),
    /// The run no longer holds its thread: its lease ran out (its process
    /// stalled longer than the lease, or another process took the thread
    /// over). It must stop without writing.
    #[error("run {run} no longer holds thread {thread}: its lease ran out")]
    LeaseLost {
        /// The run.
        run: String,
        /// Its thread.
        thread: String,
    },
    /// A stored message is not canonical JSON (the store was altered).
    #[error("thread {thread} message {seq} is not readable: {error}")]
    Corrupt {
        /// The thread.
        thread: String,
        /// The message's position.
        seq: i64,
        /// The reader's error.
        error: String,
    },
    /// A value the store would not read back (nested deeper than the
    /// format's limit): refused, nothing written.
    #[error("not stored: {0}")]
    Unstorable(String),
    /// The database failed.
    #[error("database error: {0}")]
    Database(String),
}

impl StoreError {
    /// The error's kind as one word (`busy`, `not_found`, `conflict`,
    /// `lease_lost`, `corrupt`, `unstorable`, `database`): what the
    /// packages' `StoreError.kind` says.
    pub fn kind(&self) -> &'static str {
        match self {
            StoreError::Busy { .. } => "busy",
            StoreError::NotFound(_) => "not_found",
            StoreError::Conflict(_) => "conflict",
            StoreError::LeaseLost { .. } => "lease_lost",
            StoreError::Corrupt { .. } => "corrupt",
            StoreError::Unstorable(_) => "unstorable",
            StoreError::Database(_) => "database",
        }
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError::Database(e.to_string())
    }
}

pub(crate) type R<T> = Result<T, StoreError>;

/// A write transaction on the store's pool.
pub(crate) type Tx = sqlx::Transaction<'static, Any>;
