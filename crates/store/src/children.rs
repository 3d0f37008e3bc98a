//! Agents used as tools: a sub-agent's runs are kept on a thread of their
//! own, made for one call of its parent's run and found again by it
//! (`parent_run_id`, `parent_call_id`, unique together), so that a call
//! made again — its parent resumed, or carried on after a crash — finds
//! the run it made instead of making another.

use crate::store::{R, Store, Thread, now_ms};

impl Store {
    /// The thread of the sub-agent answering call `call` of run `run`:
    /// made now (with `owner`, so that its runs show to whom the parent's
    /// show) or, when the call made it before, that one.
    pub async fn child_thread(&self, run: &str, call: &str, owner: Option<&str>) -> R<Thread> {
        let now = now_ms();
        // Two servers making it at once: the unique index keeps one.
        sqlx::query(self.q(
            "INSERT INTO parlance_threads (id, owner, metadata, created_at, updated_at, parent_run_id, parent_call_id) VALUES (?, ?, '{}', ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        ))
        .bind(parlance_format::new_id("thr"))
        .bind(owner)
        .bind(now)
        .bind(now)
        .bind(run)
        .bind(call)
        .execute(&self.pool)
        .await?;
        let row = sqlx::query(self.q(&format!(
            "SELECT {} FROM parlance_threads WHERE parent_run_id = ? AND parent_call_id = ?",
            Self::THREAD_COLUMNS
        )))
        .bind(run)
        .bind(call)
        .fetch_one(&self.pool)
        .await?;
        Self::thread_from(&row)
    }

    /// The threads of the sub-agents run `run` called, oldest first.
    pub async fn child_threads(&self, run: &str) -> R<Vec<Thread>> {
        let rows = sqlx::query(self.q(&format!(
            "SELECT {} FROM parlance_threads WHERE parent_run_id = ? ORDER BY created_at, id",
            Self::THREAD_COLUMNS
        )))
        .bind(run)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(Self::thread_from).collect()
    }

    /// The threads of the sub-agents any run of thread `thread` called,
    /// oldest first (one query, for a thread's page).
    pub async fn child_threads_of(&self, thread: &str) -> R<Vec<Thread>> {
        let rows = sqlx::query(self.q(&format!(
            "SELECT {} FROM parlance_threads WHERE parent_run_id IN (SELECT id FROM parlance_runs WHERE thread_id = ?) ORDER BY created_at, id",
            Self::THREAD_COLUMNS
        )))
        .bind(thread)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(Self::thread_from).collect()
    }
}
