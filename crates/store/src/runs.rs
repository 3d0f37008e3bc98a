//! Runs on threads: claiming a thread, the lease and its heartbeat,
//! committing steps, recording outcomes, and sweeping runs whose process
//! died.
//!
//! The lease rule, in one place: a run may write only while its lease has
//! not run out. Every write checks it in the same statement that makes the
//! write (`status = 'running' AND lease_until >= now`), and taking a thread
//! over checks the opposite (`lease_until < now`), so the two can never
//! both succeed.

use parlance_format::{Message, Response, RunError, RunStatus, Usage, new_id};
use serde_json::{Value, json};
use sqlx::Row;

use crate::batch::Batch;
use crate::repair::{repair, settle_pending};
use crate::store::{ActiveRun, R, RunRecord, Store, StoreError, Tx, now_ms};

/// The most messages one script of [`Store::append`] inserts.
const APPEND_CHUNK: usize = 32;

/// The error a run gets when it was found dead (its lease ran out).
fn interrupted_error() -> Value {
    json!({"code": "interrupted", "message": "the process running this run stopped before it finished (its lease ran out)"})
}

impl Store {
    pub(crate) fn run_from(row: &sqlx::any::AnyRow) -> R<RunRecord> {
        let text = |k: &str| -> R<Option<String>> { Ok(row.try_get::<Option<String>, _>(k)?) };
        Ok(RunRecord {
            id: row.try_get("id")?,
            thread_id: row.try_get("thread_id")?,
            status: row.try_get("status")?,
            settings: text("settings")?
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or(Value::Null),
            usage: text("usage")?
                .and_then(|s| serde_json::from_str::<Value>(&s).ok())
                .and_then(|v| Usage::from_value(&v).ok()),
            error: text("error")?.and_then(|s| serde_json::from_str(&s).ok()),
            output: text("output")?
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or(Value::Null),
            finish_reason: text("finish_reason")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
        })
    }

    const RUN_COLUMNS: &'static str = "id, thread_id, status, settings, usage, error, output, finish_reason, created_at, updated_at";

    /// The runs of a thread, oldest first. Dead runs of the thread (their
    /// lease ran out) are marked `interrupted` first, so none shows as
    /// `running` when it is not.
    pub async fn runs(&self, thread: &str) -> R<Vec<RunRecord>> {
        self.sweep_thread(thread).await?;
        let rows = sqlx::query(self.q(&format!(
            "SELECT {} FROM parlance_runs WHERE thread_id = ? ORDER BY created_at, id",
            Self::RUN_COLUMNS
        )))
        .bind(thread)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(Self::run_from).collect()
    }

    /// The run `id` (swept first, like [`Store::runs`]).
    pub async fn run(&self, id: &str) -> R<RunRecord> {
        let record = self.run_unswept(id).await?;
        if record.status == "running" && self.sweep_thread(&record.thread_id).await? > 0 {
            return self.run_unswept(id).await;
        }
        Ok(record)
    }

    async fn run_unswept(&self, id: &str) -> R<RunRecord> {
        let row = sqlx::query(self.q(&format!(
            "SELECT {} FROM parlance_runs WHERE id = ?",
            Self::RUN_COLUMNS
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("run {id}")))?;
        Self::run_from(&row)
    }

    async fn next_seq(&self, conn: &mut Tx, thread: &str) -> R<i64> {
        let row = sqlx::query(self.q("SELECT MAX(seq) FROM parlance_messages WHERE thread_id = ?"))
            .bind(thread)
            .fetch_one(&mut **conn)
            .await?;
        Ok(row.try_get::<Option<i64>, _>(0)?.map_or(0, |s| s + 1))
    }

    async fn insert_message(
        &self,
        conn: &mut Tx,
        thread: &str,
        run: Option<&str>,
        message: &Message,
    ) -> R<i64> {
        let seq = self.next_seq(conn, thread).await?;
        sqlx::query(self.q("INSERT INTO parlance_messages (thread_id, seq, run_id, body, created_at) VALUES (?, ?, ?, ?, ?)"))
            .bind(thread)
            .bind(seq)
            .bind(run)
            .bind(self.stored_text(parlance_format::to_json(message)))
            .bind(now_ms())
            .execute(&mut **conn)
            .await?;
        Ok(seq)
    }

    fn lease_lost(run: &ActiveRun) -> StoreError {
        StoreError::LeaseLost {
            run: run.id.clone(),
            thread: run.thread_id.clone(),
        }
    }

    /// The heartbeat: extends a running run's lease while a step is in
    /// progress (a slow model answer, a slow tool). Refused with
    /// [`StoreError::LeaseLost`] once the lease has run out: a run that
    /// lost its lease stays lost.
    pub async fn renew(&self, run: &ActiveRun) -> R<()> {
        let now = now_ms();
        let r = sqlx::query(self.q("UPDATE parlance_runs SET lease_until = ? WHERE id = ? AND status = 'running' AND lease_until >= ?"))
            .bind(now + self.lease.as_millis() as i64)
            .bind(&run.id)
            .bind(now)
            .execute(&self.pool)
            .await?;
        if r.rows_affected() == 0 {
            return Err(Self::lease_lost(run));
        }
        Ok(())
    }

    /// Claims the thread for a new run. A run whose process died (its lease
    /// ran out) is marked failed with code `interrupted` and the thread is
    /// repaired, in the same transaction. Another active run: `Busy`.
    pub async fn begin_run(&self, thread: &str, settings: &Value) -> R<ActiveRun> {
        self.thread(thread).await?;
        let mut tx = self.tx().await?;
        match self.claim(&mut tx, thread, settings).await {
            Ok(run) => {
                Self::commit(tx).await?;
                Ok(run)
            }
            Err(e) => {
                Self::rollback(tx).await;
                Err(e)
            }
        }
    }

    async fn claim(&self, tx: &mut Tx, thread: &str, settings: &Value) -> R<ActiveRun> {
        let now = now_ms();
        let active = sqlx::query(self.q("SELECT id, status, lease_until FROM parlance_runs WHERE thread_id = ? AND status IN ('running', 'requires_approval')"))
            .bind(thread)
            .fetch_optional(&mut **tx)
            .await?;
        if let Some(row) = active {
            let id: String = row.try_get("id")?;
            let status: String = row.try_get("status")?;
            let lease: i64 = row.try_get("lease_until")?;
            if !(status == "running" && lease < now && self.interrupt(tx, thread, &id).await?) {
                return Err(StoreError::Busy {
                    thread: thread.into(),
                    run: id,
                    status,
                });
            }
        }
        // No run waits for decisions here: requests left in the history
        // (by a run that failed while a call waited) cannot be decided.
        let last = self.last_message(tx, thread).await?;
        self.settle_last(tx, thread, last.as_ref()).await?;
        let run = ActiveRun {
            id: new_id("run"),
            thread_id: thread.to_string(),
        };
        let inserted = sqlx::query(self.q(
            "INSERT INTO parlance_runs (id, thread_id, status, settings, lease_until, created_at, updated_at) VALUES (?, ?, 'running', ?, ?, ?, ?)",
        ))
        .bind(&run.id)
        .bind(thread)
        .bind(settings.to_string())
        .bind(now + self.lease.as_millis() as i64)
        .bind(now)
        .bind(now)
        .execute(&mut **tx)
        .await;
        match inserted {
            Ok(_) => Ok(run),
            // Another server claimed it between our read and our write.
            Err(e)
                if e.as_database_error()
                    .is_some_and(|d| d.is_unique_violation()) =>
            {
                Err(StoreError::Busy {
                    thread: thread.into(),
                    run: "another run".into(),
                    status: "running".into(),
                })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Marks a dead run failed (`interrupted`) and repairs its thread,
    /// inside `tx`. Only if its lease really ran out: `false` when the run
    /// renewed it meanwhile (it is alive; nothing changed).
    async fn interrupt(&self, tx: &mut Tx, thread: &str, run: &str) -> R<bool> {
        let now = now_ms();
        let r = sqlx::query(self.q(
            "UPDATE parlance_runs SET status = 'failed', error = ?, lease_until = 0, updated_at = ? WHERE id = ? AND status = 'running' AND lease_until < ?",
        ))
        .bind(interrupted_error().to_string())
        .bind(now)
        .bind(run)
        .bind(now)
        .execute(&mut **tx)
        .await?;
        if r.rows_affected() == 0 {
            return Ok(false);
        }
        let rows =
            sqlx::query(self.q(
                "SELECT seq, run_id, body FROM parlance_messages WHERE thread_id = ? ORDER BY seq",
            ))
            .bind(thread)
            .fetch_all(&mut **tx)
            .await?;
        let history: Vec<Message> = rows
            .iter()
            .map(|r| Self::message_from(thread, r).map(|m| m.message))
            .collect::<R<_>>()?;
        if let Some(fix) = repair(&history) {
            self.insert_message(tx, thread, Some(run), &fix).await?;
            tracing::warn!(thread, run, "repaired a thread whose run died mid-step");
        } else {
            self.settle_last(tx, thread, history.last()).await?;
        }
        tracing::warn!(thread, run, "a dead run was marked interrupted");
        Ok(true)
    }

    /// Approval requests left in the last message by a run that can no
    /// longer be resumed (it failed, or died after a decision) become
    /// `interrupted` results, in place: the thread stays usable.
    async fn settle_last(&self, tx: &mut Tx, thread: &str, last: Option<&Message>) -> R<()> {
        let Some(fixed) = last.and_then(settle_pending) else {
            return Ok(());
        };
        let seq = self.next_seq(tx, thread).await? - 1;
        sqlx::query(
            self.q("UPDATE parlance_messages SET body = ? WHERE thread_id = ? AND seq = ?"),
        )
        .bind(parlance_format::to_json(&fixed))
        .bind(thread)
        .bind(seq)
        .execute(&mut **tx)
        .await?;
        tracing::warn!(
            thread,
            "approval requests nobody can decide any more were settled as interrupted"
        );
        Ok(())
    }

    async fn last_message(&self, tx: &mut Tx, thread: &str) -> R<Option<Message>> {
        let row = sqlx::query(self.q("SELECT seq, run_id, body FROM parlance_messages WHERE thread_id = ? ORDER BY seq DESC LIMIT 1"))
            .bind(thread)
            .fetch_optional(&mut **tx)
            .await?;
        row.map(|r| Self::message_from(thread, &r).map(|m| m.message))
            .transpose()
    }

    /// Marks every dead run of `thread` (running, lease run out) as
    /// `interrupted` and repairs the thread. Returns how many there were.
    pub async fn sweep_thread(&self, thread: &str) -> R<usize> {
        let rows = sqlx::query(self.q("SELECT id FROM parlance_runs WHERE thread_id = ? AND status = 'running' AND lease_until < ?"))
            .bind(thread)
            .bind(now_ms())
            .fetch_all(&self.pool)
            .await?;
        let mut n = 0;
        for row in rows {
            let id: String = row.try_get("id")?;
            n += usize::from(self.interrupt_now(thread, &id).await?);
        }
        Ok(n)
    }

    /// Marks every dead run of the store as `interrupted` (at start-up, and
    /// from time to time); returns the ids of the runs it marked.
    pub async fn sweep_expired(&self) -> R<Vec<String>> {
        let rows = sqlx::query(self.q(
            "SELECT id, thread_id FROM parlance_runs WHERE status = 'running' AND lease_until < ?",
        ))
        .bind(now_ms())
        .fetch_all(&self.pool)
        .await?;
        let mut out = Vec::new();
        for row in rows {
            let id: String = row.try_get("id")?;
            let thread: String = row.try_get("thread_id")?;
            if self.interrupt_now(&thread, &id).await? {
                out.push(id);
            }
        }
        Ok(out)
    }

    async fn interrupt_now(&self, thread: &str, run: &str) -> R<bool> {
        let mut tx = self.tx().await?;
        match self.interrupt(&mut tx, thread, run).await {
            Ok(done) => {
                Self::commit(tx).await?;
                Ok(done)
            }
            Err(e) => {
                Self::rollback(tx).await;
                Err(e)
            }
        }
    }

    /// The statements that renew `run`'s lease and move its thread's
    /// `updated_at` inside a write: the first one changes no row when the
    /// lease already ran out, and the caller then refuses the write.
    fn touch_batch(&self, run: &ActiveRun) -> Batch {
        let now = now_ms();
        let lease = now + self.lease.as_millis() as i64;
        let mut batch = Batch::new();
        batch
            .push(
                "UPDATE parlance_runs SET updated_at = ?, lease_until = ? WHERE id = ? AND status = 'running' AND lease_until >= ?",
                vec![now.into(), lease.into(), run.id.as_str().into(), now.into()],
            )
            .push(
                "UPDATE parlance_threads SET updated_at = ? WHERE id = ?",
                vec![now.into(), run.thread_id.as_str().into()],
            );
        batch
    }

    /// Appends messages for an active run, atomically, renewing its lease:
    /// one transaction, its statements sent together (see the `batch` module).
    pub async fn append(&self, run: &ActiveRun, messages: &[Message]) -> R<Vec<i64>> {
        let mut tx = self.tx().await?;
        let result = async {
            let mut seqs = Vec::with_capacity(messages.len());
            // A long history (an import) goes in scripts of a bounded size.
            // Nothing to insert still renews (and checks) the lease.
            let chunks: Vec<&[Message]> = if messages.is_empty() {
                vec![&[]]
            } else {
                messages.chunks(APPEND_CHUNK).collect()
            };
            for (i, chunk) in chunks.into_iter().enumerate() {
                let mut batch = if i == 0 {
                    self.touch_batch(run)
                } else {
                    Batch::new()
                };
                let now = now_ms();
                for m in chunk {
                    batch.push(
                        "INSERT INTO parlance_messages (thread_id, seq, run_id, body, created_at) SELECT ?, COALESCE(MAX(seq), -1) + 1, ?, ?, ? FROM parlance_messages WHERE thread_id = ? RETURNING seq",
                        vec![
                            run.thread_id.as_str().into(),
                            run.id.as_str().into(),
                            self.stored_text(parlance_format::to_json(m)).into(),
                            now.into(),
                            run.thread_id.as_str().into(),
                        ],
                    );
                }
                let done = self.batch(&mut tx, batch).await?;
                let inserted = if i == 0 {
                    if done[0].rows_affected == 0 {
                        return Err(Self::lease_lost(run));
                    }
                    &done[2..]
                } else {
                    &done[..]
                };
                for d in inserted {
                    let row = d.rows.first().ok_or_else(|| {
                        StoreError::Database("an inserted message returned no position".into())
                    })?;
                    seqs.push(row.try_get::<i64, _>(0)?);
                }
            }
            Ok::<_, StoreError>(seqs)
        }
        .await;
        match result {
            Ok(seqs) => {
                Self::commit(tx).await?;
                Ok(seqs)
            }
            Err(e) => {
                Self::rollback(tx).await;
                Err(e)
            }
        }
    }

    /// Replaces the thread's last message (decided approvals), atomically.
    pub async fn replace_last(&self, run: &ActiveRun, message: &Message) -> R<()> {
        let mut tx = self.tx().await?;
        let mut batch = self.touch_batch(run);
        // The message now belongs to the run that rewrote it (a retry
        // replacing the failed results of an earlier run).
        batch.push(
            "UPDATE parlance_messages SET body = ?, run_id = ? WHERE thread_id = ? AND seq = (SELECT MAX(seq) FROM parlance_messages WHERE thread_id = ?)",
            vec![
                self.stored_text(parlance_format::to_json(message)).into(),
                run.id.as_str().into(),
                run.thread_id.as_str().into(),
                run.thread_id.as_str().into(),
            ],
        );
        let result = match self.batch(&mut tx, batch).await {
            Ok(done) if done[0].rows_affected == 0 => Err(Self::lease_lost(run)),
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        };
        match result {
            Ok(()) => Self::commit(tx).await,
            Err(e) => {
                Self::rollback(tx).await;
                Err(e)
            }
        }
    }

    /// Records how a run ended (or that it waits for decisions): status,
    /// usage, error, output and finish reason. Only while the run still
    /// holds its lease ([`StoreError::LeaseLost`] otherwise: a run that was
    /// taken over keeps the `interrupted` it was given).
    pub async fn finish_run(&self, run: &ActiveRun, response: &Response) -> R<()> {
        let error = response.error.as_ref().map(|e: &RunError| {
            self.stored_text(serde_json::to_value(e).expect("json").to_string())
        });
        let lease = if response.status == RunStatus::RequiresApproval {
            i64::MAX
        } else {
            0
        };
        let output =
            (!response.output.is_null()).then(|| self.stored_text(response.output.to_string()));
        let finish = response
            .finish_reason
            .map(|f| serde_json::to_value(f).expect("json"))
            .and_then(|v| v.as_str().map(str::to_string));
        let now = now_ms();
        let r = sqlx::query(self.q("UPDATE parlance_runs SET status = ?, usage = ?, error = ?, output = ?, finish_reason = ?, lease_until = ?, updated_at = ? WHERE id = ? AND status = 'running' AND lease_until >= ?"))
            .bind(response.status.as_str())
            .bind(parlance_format::to_json(&response.usage))
            .bind(error)
            .bind(output)
            .bind(finish)
            .bind(lease)
            .bind(now)
            .bind(&run.id)
            .bind(now)
            .execute(&self.pool)
            .await?;
        if r.rows_affected() == 0 {
            return Err(Self::lease_lost(run));
        }
        Ok(())
    }

    /// Takes a run that waits for decisions back into `running` (any
    /// process may: the state is all in the store).
    pub async fn claim_paused(&self, run_id: &str) -> R<ActiveRun> {
        let run = self.run(run_id).await?;
        if run.status != "requires_approval" {
            return Err(StoreError::Conflict(format!(
                "run {run_id} is {}, not waiting for decisions",
                run.status
            )));
        }
        let r = sqlx::query(self.q("UPDATE parlance_runs SET status = 'running', lease_until = ?, updated_at = ? WHERE id = ? AND status = 'requires_approval'"))
            .bind(now_ms() + self.lease.as_millis() as i64)
            .bind(now_ms())
            .bind(run_id)
            .execute(&self.pool)
            .await?;
        if r.rows_affected() == 0 {
            return Err(StoreError::Conflict(format!(
                "run {run_id} is no longer waiting for decisions: another request decided it first"
            )));
        }
        Ok(ActiveRun {
            id: run.id,
            thread_id: run.thread_id,
        })
    }

    /// Puts a claimed run back to waiting (its decisions were refused).
    pub async fn release_paused(&self, run: &ActiveRun) -> R<()> {
        let r = sqlx::query(self.q(
            "UPDATE parlance_runs SET status = 'requires_approval', lease_until = ? WHERE id = ? AND status = 'running'",
        ))
        .bind(i64::MAX)
        .bind(&run.id)
        .execute(&self.pool)
        .await?;
        if r.rows_affected() == 0 {
            return Err(Self::lease_lost(run));
        }
        Ok(())
    }
}
