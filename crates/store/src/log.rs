//! A run's messages as a numbered log, read from the store alone: what a
//! client that lost its stream missed, wherever the run ran.
//!
//! Every write of a message body is one entry of its run's log: an insert,
//! or a rewrite in place (the last message replaced by a resume, a retry,
//! a takeover's settlement), which bumps the message's `rev`. A message is
//! rewritten only while it is its thread's last, so once another follows
//! it its entries are final, and the log position of a message's newest
//! version is the count of the entries up to it:
//!
//! ```text
//! position(m) = Σ (rev + 1) over the run's messages before m, + rev(m) + 1
//! ```
//!
//! A live stream numbers its `message` events the same way, from the
//! run's [`Store::log_position`] when its phase started, because each one
//! it sends is one committed write. A client that saw position `p` gets
//! every message whose newest version lies past `p`, each whole.

use sqlx::Row;

use crate::store::{R, Store};
use parlance_format::Message;

/// A message of a run's log and where it stands.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LoggedMessage {
    /// Its log position (from 1): the `id` of its `message` event.
    pub position: u64,
    /// Its position in the thread.
    pub seq: i64,
    /// The message as it is now.
    pub message: Message,
}

impl Store {
    /// How many entries the log of `run` (on `thread`) holds: the
    /// position its next `message` event takes, less one.
    pub async fn log_position(&self, thread: &str, run: &str) -> R<u64> {
        let row = sqlx::query(self.q(
            "SELECT CAST(COALESCE(SUM(rev + 1), 0) AS BIGINT) FROM parlance_messages WHERE thread_id = ? AND run_id = ?",
        ))
        .bind(thread)
        .bind(run)
        .fetch_one(&self.pool)
        .await?;
        Ok(row.try_get::<i64, _>(0)?.max(0) as u64)
    }

    /// The messages of `run` (on `thread`) whose newest version lies past
    /// log position `after`, in thread order, each as it is now.
    pub async fn log_after(&self, thread: &str, run: &str, after: u64) -> R<Vec<LoggedMessage>> {
        // Positions counted by the database, so that only the messages
        // past `after` travel (a follower reads the log every poll).
        let rows = sqlx::query(self.q(
            "SELECT seq, run_id, body, position FROM (SELECT seq, run_id, body, CAST(SUM(rev + 1) OVER (ORDER BY seq) AS BIGINT) AS position FROM parlance_messages WHERE thread_id = ? AND run_id = ?) AS logged WHERE position > ? ORDER BY seq",
        ))
        .bind(thread)
        .bind(run)
        .bind(after.min(i64::MAX as u64) as i64)
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let position: i64 = row.try_get("position")?;
            let stored = Self::message_from(thread, row)?;
            out.push(LoggedMessage {
                position: position.max(0) as u64,
                seq: stored.seq,
                message: stored.message,
            });
        }
        Ok(out)
    }
}
