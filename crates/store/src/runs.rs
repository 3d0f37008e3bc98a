//! Runs on threads: reading them, the lease and its heartbeat, runs
//! waiting for decisions taken back, and sweeping runs whose process died.
//! Claiming a thread is the `claim` module's; a run's writes (its steps,
//! its outcome) are the `write` module's.
//!
//! The lease rule, in one place: a run may write only while its lease has
//! not run out. Every write checks it in the same statement that makes the
//! write (`status = 'running' AND lease_until >= now`), and taking a thread
//! over checks the opposite (`lease_until < now`), so the two can never
//! both succeed.

use parlance_format::{Message, Usage};
use serde_json::{Value, json};
use sqlx::Row;

use crate::repair::{repair, settle_pending};
use crate::store::{ActiveRun, R, RunRecord, Store, StoreError, Tx, now_ms};

/// How a run is known to be dead.
pub(crate) enum Dead<'a> {
    /// Its lease ran out before this time.
    Before(i64),
    /// It is held by this holder (a server's previous incarnation, or a
    /// resumer that took it over to end it).
    HeldBy(&'a str),
}

/// The error a run gets when it was found dead (its lease ran out).
pub(crate) fn interrupted_error() -> Value {
    json!({"code": "interrupted", "message": "the process running this run stopped before it finished (its lease ran out)"})
}

impl Store {
    pub(crate) fn run_from(row: &sqlx::any::AnyRow) -> R<RunRecord> {
        let id: String = row.try_get("id")?;
        // A column that does not read is left out, and logged: one
        // damaged run never hides the others from a list.
        let json = |k: &str| -> R<Option<Value>> {
            let Some(text) = row.try_get::<Option<String>, _>(k)? else {
                return Ok(None);
            };
            Ok(serde_json::from_str(&text)
                .inspect_err(|e| {
                    tracing::warn!(run = %id, column = k, error = %e, "store: a run's column is not readable")
                })
                .ok())
        };
        Ok(RunRecord {
            thread_id: row.try_get("thread_id")?,
            status: row.try_get("status")?,
            settings: json("settings")?.unwrap_or(Value::Null),
            usage: json("usage")?.and_then(|v| Usage::from_value(&v).ok()),
            error: json("error")?,
            output: json("output")?.unwrap_or(Value::Null),
            finish_reason: row.try_get::<Option<String>, _>("finish_reason")?,
            handoff: row.try_get::<Option<String>, _>("handoff")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            id,
        })
    }

    const RUN_COLUMNS: &'static str = "id, thread_id, status, settings, usage, error, output, finish_reason, handoff, created_at, updated_at";

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

    pub(crate) async fn run_unswept(&self, id: &str) -> R<RunRecord> {
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

    pub(crate) async fn insert_message(
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
            .bind(self.stored_message(message)?)
            .bind(now_ms())
            .execute(&mut **conn)
            .await?;
        Ok(seq)
    }

    pub(crate) fn lease_lost(run: &ActiveRun) -> StoreError {
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

    /// Leases that ran out before this are dead for good: left to no
    /// resumer any more ([`Store::with_resume_grace`]).
    pub(crate) fn dead_before(&self) -> i64 {
        now_ms() - self.resume_grace.as_millis() as i64
    }

    /// Marks a dead run failed (`interrupted`) and repairs its thread,
    /// inside `tx`. Only if its lease really ran out (past the resume
    /// grace): `false` when the run renewed it meanwhile (it is alive;
    /// nothing changed).
    pub(crate) async fn interrupt(&self, tx: &mut Tx, thread: &str, run: &str) -> R<bool> {
        self.interrupt_if(
            tx,
            thread,
            run,
            &interrupted_error(),
            Dead::Before(self.dead_before()),
        )
        .await
    }

    /// [`Store::interrupt`] with its error and its proof of death.
    pub(crate) async fn interrupt_if(
        &self,
        tx: &mut Tx,
        thread: &str,
        run: &str,
        error: &Value,
        dead: Dead<'_>,
    ) -> R<bool> {
        let now = now_ms();
        let set = "UPDATE parlance_runs SET status = 'failed', error = ?, lease_until = 0, updated_at = ? WHERE id = ? AND status = 'running'";
        let error = error.to_string();
        let r = match dead {
            Dead::Before(t) => {
                sqlx::query(self.q(&format!("{set} AND lease_until < ?")))
                    .bind(error)
                    .bind(now)
                    .bind(run)
                    .bind(t)
                    .execute(&mut **tx)
                    .await?
            }
            Dead::HeldBy(h) => {
                sqlx::query(self.q(&format!("{set} AND holder = ?")))
                    .bind(error)
                    .bind(now)
                    .bind(run)
                    .bind(h)
                    .execute(&mut **tx)
                    .await?
            }
        };
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
        self.settle(tx, thread, seq, &fixed).await
    }

    /// Marks every dead run of `thread` (running, lease run out) as
    /// `interrupted` and repairs the thread. Returns how many there were.
    pub async fn sweep_thread(&self, thread: &str) -> R<usize> {
        let rows = sqlx::query(self.q("SELECT id FROM parlance_runs WHERE thread_id = ? AND status = 'running' AND lease_until < ?"))
            .bind(thread)
            .bind(self.dead_before())
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
        .bind(self.dead_before())
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
        let r = sqlx::query(self.q("UPDATE parlance_runs SET status = 'running', holder = ?, lease_until = ?, updated_at = ? WHERE id = ? AND status = 'requires_approval'"))
            .bind(self.holder.as_ref())
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
            count_spend: false,
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
