//! What a reviewer's inbox reads: the runs waiting for decisions across
//! threads, newest first, and the turn each one paused in.
//!
//! Kept apart from the run machinery: these are reads only, for people
//! (the server's approval inbox), never used to decide anything. A
//! decision still goes through `ThreadRunner`, which checks the stored
//! state again.

use parlance_format::Role;
use sqlx::Row;

use crate::store::{R, RunRecord, Store, StoredMessage, Thread};

/// A run waiting for decisions, with its thread's owner.
#[derive(Debug, Clone, PartialEq)]
pub struct WaitingRun {
    /// The run as stored (`status` is `requires_approval`).
    pub run: RunRecord,
    /// Who owns its thread.
    pub owner: Option<String>,
}

impl Store {
    /// Runs waiting for decisions, the most recently paused first, at most
    /// `limit` (1 to 1,000); only threads of `owner` when given.
    pub async fn waiting_runs(&self, owner: Option<&str>, limit: u32) -> R<Vec<WaitingRun>> {
        let rows = sqlx::query(self.q(
            "SELECT r.id, r.thread_id, r.status, r.settings, r.usage, r.error, r.output, r.finish_reason, r.handoff, r.created_at, r.updated_at, t.owner
             FROM parlance_runs r JOIN parlance_threads t ON t.id = r.thread_id
             WHERE r.status = 'requires_approval' AND (? IS NULL OR t.owner = ?)
             ORDER BY r.updated_at DESC, r.id DESC LIMIT ?",
        ))
        .bind(owner)
        .bind(owner)
        .bind(limit.clamp(1, 1000) as i64)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(WaitingRun {
                    run: Self::run_from(row)?,
                    owner: row.try_get("owner")?,
                })
            })
            .collect()
    }

    /// A cheap mark of every waiting run (id and last change), to tell
    /// when an inbox must be drawn again: it changes when a run starts or
    /// stops waiting, and when some of its calls are decided.
    pub async fn waiting_marker(&self) -> R<Vec<(String, i64)>> {
        let rows = sqlx::query(self.q(
            "SELECT id, updated_at FROM parlance_runs WHERE status = 'requires_approval' ORDER BY id",
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get("id")?, r.try_get("updated_at")?)))
            .collect()
    }

    /// The messages of the turn a run made: the ones it wrote, and, when
    /// the first of them is a tool message (a retry rewrites the failed
    /// run's results), the assistant message whose calls they answer.
    pub async fn run_turn(&self, run: &RunRecord) -> R<Vec<StoredMessage>> {
        let rows = sqlx::query(self.q(
            "SELECT seq, run_id, body FROM parlance_messages WHERE thread_id = ? AND run_id = ? ORDER BY seq",
        ))
        .bind(&run.thread_id)
        .bind(&run.id)
        .fetch_all(&self.pool)
        .await?;
        let mut turn: Vec<StoredMessage> = rows
            .iter()
            .map(|r| Self::message_from(&run.thread_id, r))
            .collect::<R<_>>()?;
        if let Some(first) = turn.first()
            && first.message.role == Role::Tool
            && first.seq > 0
        {
            let earlier = self.messages(&run.thread_id, first.seq - 1, 1).await?;
            turn.splice(0..0, earlier);
        }
        Ok(turn)
    }
    /// Threads (of `owner`, when given), the most recently changed first,
    /// each with the status of its last run (`None`: no run yet).
    pub async fn recent_threads(
        &self,
        owner: Option<&str>,
        limit: u32,
    ) -> R<Vec<(Thread, Option<String>)>> {
        let rows = sqlx::query(self.q(
            "SELECT t.id, t.owner, t.metadata, t.created_at, t.updated_at, t.parent_run_id, t.parent_call_id,
               (SELECT r.status FROM parlance_runs r WHERE r.thread_id = t.id ORDER BY r.created_at DESC, r.id DESC LIMIT 1) AS last_status
             FROM parlance_threads t WHERE (? IS NULL OR t.owner = ?)
             ORDER BY t.updated_at DESC, t.id DESC LIMIT ?",
        ))
        .bind(owner)
        .bind(owner)
        .bind(limit.clamp(1, 1000) as i64)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| Ok((Self::thread_from(row)?, row.try_get("last_status")?)))
            .collect()
    }
}
