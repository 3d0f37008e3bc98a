//! A run's writes: its steps (messages appended, the last one replaced)
//! and its outcome, the final answer with it.
//!
//! Every statement of a write checks the run's lease itself (`HELD`), so
//! a write is whole or nothing even where its statements commit together
//! whatever they did (the `writer` module's scripts on SQLite): a run that
//! lost its lease changes no row, and the statement that checks the lease
//! first (the renewal) or last (the outcome) tells the caller so.

use parlance_format::{Message, Response, RunError, RunStatus};

use crate::batch::{Arg, Batch, Done};
use crate::sql::Dialect;
use crate::store::{ActiveRun, R, Store, StoreError, Tx, now_ms};

/// The most messages one script inserts: a long list (an import) goes in
/// several, in one transaction of the pool's.
pub(crate) const APPEND_CHUNK: usize = 32;

/// A message inserted at the end of its thread, only while the run holds
/// its lease. `RETURNING` gives its position.
/// (`MAX(seq)` as a scalar subquery: the database reads it off the
/// primary key's end instead of scanning the thread.)
pub(crate) const INSERT_MESSAGE: &str = "INSERT INTO parlance_messages (thread_id, seq, run_id, body, created_at) SELECT ?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM parlance_messages WHERE thread_id = ?), ?, ?, ? WHERE EXISTS (SELECT 1 FROM parlance_runs WHERE id = ? AND status = 'running' AND lease_until >= ?) RETURNING seq";

/// The thread's `updated_at` moved, only while the run holds its lease.
pub(crate) const TOUCH_THREAD: &str = "UPDATE parlance_threads SET updated_at = ? WHERE id = ? AND EXISTS (SELECT 1 FROM parlance_runs WHERE id = ? AND status = 'running' AND lease_until >= ?)";

/// The lease renewed: no row changed once it ran out.
const RENEW: &str = "UPDATE parlance_runs SET updated_at = ?, lease_until = ? WHERE id = ? AND status = 'running' AND lease_until >= ?";

/// The last message replaced, only while the run holds its lease. It now
/// belongs to the run that rewrote it (a retry replacing the failed
/// results of an earlier run): its revision counts the run's own
/// rewrites, from 0 for a run that takes it over (see the `log` module).
const REPLACE_LAST: &str = "UPDATE parlance_messages SET body = ?, rev = CASE WHEN run_id = ? THEN rev + 1 ELSE 0 END, run_id = ? WHERE thread_id = ? AND seq = (SELECT MAX(seq) FROM parlance_messages WHERE thread_id = ?) AND EXISTS (SELECT 1 FROM parlance_runs WHERE id = ? AND status = 'running' AND lease_until >= ?)";

/// The outcome: no row changed once the lease ran out.
const OUTCOME: &str = "UPDATE parlance_runs SET status = ?, usage = ?, error = ?, output = ?, finish_reason = ?, handoff = ?, lease_until = ?, updated_at = ? WHERE id = ? AND status = 'running' AND lease_until >= ?";

/// Which statement of a write tells whether the run held its lease.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Check {
    /// The first (the renewal of a step).
    First,
    /// The last (the outcome, after the final answer).
    Last,
}

impl Store {
    /// Appends messages for an active run, atomically, renewing its lease:
    /// one transaction, one script on SQLite (see the `writer` module).
    pub async fn append(&self, run: &ActiveRun, messages: &[Message]) -> R<Vec<i64>> {
        let now = now_ms();
        let mut head = self.renewal(run, now);
        self.push_spend(&mut head, run, messages, now);
        self.write(run, now, head, messages, Batch::new(), Check::First)
            .await
    }

    /// Replaces the thread's last message (decided approvals), atomically.
    pub async fn replace_last(&self, run: &ActiveRun, message: &Message) -> R<()> {
        let now = now_ms();
        let mut head = self.renewal(run, now);
        head.push(
            REPLACE_LAST,
            vec![
                self.stored_message(message)?.into(),
                run.id.as_str().into(),
                run.id.as_str().into(),
                run.thread_id.as_str().into(),
                run.thread_id.as_str().into(),
                run.id.as_str().into(),
                now.into(),
            ],
        );
        self.write(run, now, head, &[], Batch::new(), Check::First)
            .await
            .map(drop)
    }

    /// Records how a run ended (or that it waits for decisions): status,
    /// usage, error, output and finish reason. Only while the run still
    /// holds its lease ([`StoreError::LeaseLost`] otherwise: a run that was
    /// taken over keeps the `interrupted` it was given).
    pub async fn finish_run(&self, run: &ActiveRun, response: &Response) -> R<()> {
        self.finish_with(run, &[], response).await.map(drop)
    }

    /// [`Store::finish_run`] together with the run's last messages (its
    /// final answer), in one transaction: a process that dies leaves both
    /// or neither, never an answer stored for a run that did not end. The
    /// messages' positions, in order.
    pub async fn finish_with(
        &self,
        run: &ActiveRun,
        messages: &[Message],
        response: &Response,
    ) -> R<Vec<i64>> {
        let now = now_ms();
        let mut head = Batch::new();
        if !messages.is_empty() {
            self.push_touch(&mut head, run, now);
            self.push_spend(&mut head, run, messages, now);
        }
        let mut tail = Batch::new();
        self.push_outcome(&mut tail, run, response, now);
        if messages.is_empty() && self.dialect == Dialect::Postgres {
            // One statement: no transaction needed.
            let (sql, args) = tail.into_single();
            let q = args
                .into_iter()
                .fold(sqlx::query(self.q(sql)), |q, a| a.bind_to(q));
            let r = q.execute(&self.pool).await?;
            return match r.rows_affected() {
                0 => Err(Self::lease_lost(run)),
                _ => Ok(Vec::new()),
            };
        }
        self.write(run, now, head, messages, tail, Check::Last)
            .await
    }

    /// The statements that renew `run`'s lease and move its thread's
    /// `updated_at`: the first changes no row once the lease ran out.
    fn renewal(&self, run: &ActiveRun, now: i64) -> Batch {
        let lease = now + self.lease.as_millis() as i64;
        let mut batch = Batch::new();
        batch.push(
            RENEW,
            vec![now.into(), lease.into(), run.id.as_str().into(), now.into()],
        );
        self.push_touch(&mut batch, run, now);
        batch
    }

    pub(crate) fn push_touch(&self, batch: &mut Batch, run: &ActiveRun, now: i64) {
        batch.push(
            TOUCH_THREAD,
            vec![
                now.into(),
                run.thread_id.as_str().into(),
                run.id.as_str().into(),
                now.into(),
            ],
        );
    }

    /// Adds to `batch` the insert of `message` at the end of `run`'s thread.
    pub(crate) fn push_insert(
        &self,
        batch: &mut Batch,
        run: &ActiveRun,
        message: &Message,
        now: i64,
    ) -> R<()> {
        batch.push(
            INSERT_MESSAGE,
            vec![
                run.thread_id.as_str().into(),
                run.thread_id.as_str().into(),
                run.id.as_str().into(),
                self.stored_message(message)?.into(),
                now.into(),
                run.id.as_str().into(),
                now.into(),
            ],
        );
        Ok(())
    }

    /// The statement that records `response` as `run`'s outcome.
    fn push_outcome(&self, batch: &mut Batch, run: &ActiveRun, response: &Response, now: i64) {
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
        batch.push(
            OUTCOME,
            vec![
                response.status.as_str().into(),
                parlance_format::to_json(&response.usage).into(),
                Arg::MaybeText(error),
                Arg::MaybeText(output),
                Arg::MaybeText(finish),
                Arg::MaybeText(response.handoff().map(str::to_string)),
                lease.into(),
                now.into(),
                run.id.as_str().into(),
                now.into(),
            ],
        );
    }

    /// One write of `run`: `head`, the inserts of `messages`, `tail`, whole
    /// or not at all. On SQLite one script with its own transaction; a long
    /// list, and PostgreSQL, in a transaction of the pool's.
    async fn write(
        &self,
        run: &ActiveRun,
        now: i64,
        head: Batch,
        messages: &[Message],
        tail: Batch,
        check: Check,
    ) -> R<Vec<i64>> {
        if self.dialect == Dialect::Sqlite && messages.len() <= APPEND_CHUNK {
            let skip = head.len();
            let mut batch = head;
            for m in messages {
                self.push_insert(&mut batch, run, m, now)?;
            }
            batch.extend(tail);
            let done = self.writer.script(&self.pool, batch).await?;
            Self::checked(run, &done, check)?;
            return Self::positions(&done[skip..skip + messages.len()]);
        }
        let mut tx = self.tx().await?;
        match self
            .write_in(&mut tx, run, now, head, messages, tail, check)
            .await
        {
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

    /// [`Store::write`] inside `tx`, in scripts of at most
    /// [`APPEND_CHUNK`] inserts (`head` with the first, `tail` with the
    /// last). The caller rolls back on an error.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn write_in(
        &self,
        tx: &mut Tx,
        run: &ActiveRun,
        now: i64,
        head: Batch,
        messages: &[Message],
        tail: Batch,
        check: Check,
    ) -> R<Vec<i64>> {
        let chunks: Vec<&[Message]> = messages.chunks(APPEND_CHUNK).collect();
        let n = chunks.len().max(1);
        let (mut head, mut tail) = (Some(head), Some(tail));
        let mut inserted = Vec::with_capacity(messages.len());
        let mut checked = None;
        for i in 0..n {
            let chunk = chunks.get(i).copied().unwrap_or_default();
            let mut batch = head.take().unwrap_or_default();
            let skip = batch.len();
            for m in chunk {
                self.push_insert(&mut batch, run, m, now)?;
            }
            let last = i + 1 == n;
            if last {
                batch.extend(tail.take().unwrap_or_default());
            }
            let mut done = crate::batch::batch(self.dialect, tx, batch).await?;
            if (i == 0 && check == Check::First) || (last && check == Check::Last) {
                checked = Some(Self::checked(run, &done, check));
            }
            inserted.extend(done.drain(skip..skip + chunk.len()));
        }
        checked.unwrap_or(Ok(()))?;
        Self::positions(&inserted)
    }

    /// [`StoreError::LeaseLost`] when the statement that checks the lease
    /// changed no row (then no statement of the write changed any).
    fn checked(run: &ActiveRun, done: &[Done], check: Check) -> R<()> {
        let d = match check {
            Check::First => done.first(),
            Check::Last => done.last(),
        };
        match d {
            Some(d) if d.rows_affected > 0 => Ok(()),
            _ => Err(Self::lease_lost(run)),
        }
    }

    /// The positions `INSERT ... RETURNING seq` statements gave back.
    pub(crate) fn positions(inserted: &[Done]) -> R<Vec<i64>> {
        inserted
            .iter()
            .map(|d| {
                let row = d.rows.first().ok_or_else(|| {
                    StoreError::Database("an inserted message returned no position".into())
                })?;
                Ok(sqlx::Row::try_get::<i64, _>(row, 0)?)
            })
            .collect()
    }
}
