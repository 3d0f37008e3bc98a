//! Claiming a thread for a new run, together with what the run needs
//! first: the thread's history read and the run's input written.
//!
//! A run's claim used to be a thread read, then a transaction of four
//! statements (the active run, the last message, the run row), then the
//! history read and the input appended: fourteen hand-overs to SQLite's
//! connection thread before the model was first called. Now it is one
//! transaction: the run row inserted only if the thread exists and holds
//! no active run, the history read and the input inserted only if the run
//! row went in.
//!
//! On SQLite the common case is one script with its own `BEGIN` and
//! `COMMIT` (the `writer` module): it claims only a thread with no active
//! run whose last message holds no approval request, and otherwise
//! changes nothing. Every other case (another run holds the thread, its
//! process died and it must be interrupted and its thread repaired first,
//! approval requests nobody can decide any more, no such thread) and
//! PostgreSQL take the general path: a transaction of the pool's, whose
//! script also reads the active run, and whatever its results call for in
//! the same transaction.

use parlance_format::{Message, new_id};
use serde_json::Value;
use sqlx::Row;

use crate::batch::{Batch, Done};
use crate::repair::settle_pending;
use crate::sql::Dialect;
use crate::store::{ActiveRun, R, Store, StoreError, StoredMessage, Tx, now_ms};
use crate::write::{APPEND_CHUNK, Check};

/// A thread claimed for a new run.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The run, which now holds the thread.
    pub run: ActiveRun,
    /// The thread's messages before the run's input, in order (a dead
    /// run's thread repaired, undecidable approval requests settled).
    /// Empty unless asked for.
    pub history: Vec<Message>,
    /// Where the input was written.
    pub input_seqs: Vec<i64>,
}

impl Ask<'_> {
    fn run_id(&self) -> String {
        self.id.map_or_else(|| new_id("run"), str::to_string)
    }
}

/// The run that holds the thread, if any.
const ACTIVE: &str = "SELECT id, status, lease_until FROM parlance_runs WHERE thread_id = ? AND status IN ('running', 'requires_approval')";

/// The run row, only for a thread that exists and has no active run (the
/// unique index `parlance_runs_one_active` refuses a second one anyway).
const INSERT_RUN: &str = "INSERT INTO parlance_runs (id, thread_id, status, settings, lease_until, created_at, updated_at, holder) SELECT ?, id, 'running', ?, ?, ?, ?, ? FROM parlance_threads WHERE id = ? AND NOT EXISTS (SELECT 1 FROM parlance_runs WHERE thread_id = ? AND status IN ('running', 'requires_approval'))";

/// [`INSERT_RUN`], and only if the thread's last message holds no approval
/// request (SQLite's `instr`; a false alarm only sends the claim down the
/// general path, which looks at the message itself).
const INSERT_RUN_PLAIN: &str = "INSERT INTO parlance_runs (id, thread_id, status, settings, lease_until, created_at, updated_at, holder) SELECT ?, id, 'running', ?, ?, ?, ?, ? FROM parlance_threads WHERE id = ? AND NOT EXISTS (SELECT 1 FROM parlance_runs WHERE thread_id = ? AND status IN ('running', 'requires_approval')) AND NOT EXISTS (SELECT 1 FROM parlance_messages WHERE thread_id = ? AND seq = (SELECT MAX(seq) FROM parlance_messages WHERE thread_id = ?) AND instr(body, '\"approval_request\"') > 0)";

/// The whole history, once the run row is in.
const HISTORY: &str = "SELECT seq, run_id, body FROM parlance_messages WHERE thread_id = ? AND EXISTS (SELECT 1 FROM parlance_runs WHERE id = ?) ORDER BY seq";

/// The last message only (approval requests left there are settled).
const LAST: &str = "SELECT seq, run_id, body FROM parlance_messages WHERE thread_id = ? AND EXISTS (SELECT 1 FROM parlance_runs WHERE id = ?) ORDER BY seq DESC LIMIT 1";

/// What a claim needs besides the thread.
struct Ask<'a> {
    /// The run's id, when the caller chose it.
    id: Option<&'a str>,
    settings: String,
    input: &'a [Message],
    history: bool,
}

impl Store {
    /// Claims the thread for a new run. A run whose process died (its lease
    /// ran out) is marked failed with code `interrupted` and the thread is
    /// repaired, in the same transaction. Another active run: `Busy`.
    pub async fn begin_run(&self, thread: &str, settings: &Value) -> R<ActiveRun> {
        Ok(self.claim_thread(thread, settings, &[], false).await?.run)
    }

    /// Claims the thread for a new run (as [`Store::begin_run`]), writes
    /// the run's `input` after the thread's messages and, with `history`,
    /// reads those messages: one transaction, one hand-over on SQLite when
    /// nothing stands in the way. The input is stored or refused with the
    /// claim.
    pub async fn claim_thread(
        &self,
        thread: &str,
        settings: &Value,
        input: &[Message],
        history: bool,
    ) -> R<Claim> {
        self.claim_thread_as(None, thread, settings, input, history)
            .await
    }

    /// [`Store::claim_thread`], the run's id chosen by the caller (`None`:
    /// a new one), as an executor that names a run before it starts does
    /// (a Temporal workflow, whose retried first step must find the run it
    /// claimed). An id already taken is refused: nothing is written.
    pub async fn claim_thread_as(
        &self,
        id: Option<&str>,
        thread: &str,
        settings: &Value,
        input: &[Message],
        history: bool,
    ) -> R<Claim> {
        if let Some(id) = id
            && self.run_unswept(id).await.is_ok()
        {
            return Err(StoreError::Conflict(format!("run {id} exists already")));
        }
        let ask = Ask {
            id,
            settings: settings.to_string(),
            input,
            history,
        };
        if self.dialect == Dialect::Sqlite
            && input.len() <= APPEND_CHUNK
            && let Some(claim) = self.claim_plain(thread, &ask).await?
        {
            return Ok(claim);
        }
        let mut tx = self.tx().await?;
        match self.claim_in(&mut tx, thread, &ask).await {
            Ok(claim) => {
                Self::commit(tx).await?;
                Ok(claim)
            }
            Err(e) => {
                Self::rollback(tx).await;
                Err(e)
            }
        }
    }

    /// The common case on SQLite, in one script: `None` (and nothing
    /// written) when anything stands in the way.
    async fn claim_plain(&self, thread: &str, ask: &Ask<'_>) -> R<Option<Claim>> {
        let run = ActiveRun {
            id: ask.run_id(),
            thread_id: thread.to_string(),
            count_spend: false,
        };
        let mut batch = Batch::new();
        self.push_claim(&mut batch, &run, ask, INSERT_RUN_PLAIN)?;
        let done = self.writer.script(&self.pool, batch).await?;
        if done[0].rows_affected == 0 {
            return Ok(None);
        }
        Ok(Some(Self::claimed(run, &done[1..], ask, |_| Ok(()))?))
    }

    /// The general path, inside `tx`.
    async fn claim_in(&self, tx: &mut Tx, thread: &str, ask: &Ask<'_>) -> R<Claim> {
        let (first, rest) = ask.input.split_at(ask.input.len().min(APPEND_CHUNK));
        let first_only = Ask {
            id: ask.id,
            settings: ask.settings.clone(),
            input: first,
            history: ask.history,
        };
        // Twice at most: a dead run found the first time is interrupted
        // (its thread repaired) and the claim made again.
        for attempt in 0..2 {
            let run = ActiveRun {
                id: ask.run_id(),
                thread_id: thread.to_string(),
                count_spend: false,
            };
            let mut batch = Batch::new();
            batch.push(ACTIVE, vec![thread.into()]);
            self.push_claim(&mut batch, &run, &first_only, INSERT_RUN)?;
            let done = crate::batch::batch_sqlx(self.dialect, tx, batch)
                .await
                .map_err(|e| match e.as_database_error() {
                    // Another server claimed it between our read and our write.
                    Some(d) if d.is_unique_violation() => {
                        Self::busy(thread, "another run", "running")
                    }
                    _ => e.into(),
                })?;
            if done[1].rows_affected == 0 {
                let Some(active) = done[0].rows.first() else {
                    // PostgreSQL: a run claimed after our read; or no thread.
                    self.thread(thread).await?;
                    return Err(Self::busy(thread, "another run", "running"));
                };
                let id: String = active.try_get("id")?;
                let status: String = active.try_get("status")?;
                let lease: i64 = active.try_get("lease_until")?;
                let dead = status == "running" && lease < self.dead_before();
                if attempt == 0 && dead && self.interrupt(tx, thread, &id).await? {
                    continue;
                }
                return Err(Self::busy(thread, &id, &status));
            }
            // Approval requests left in the last message (by a run that
            // failed while a call waited) cannot be decided any more.
            let mut fix = None;
            let mut claim = Self::claimed(run, &done[2..], &first_only, |last| {
                fix = settle_pending(&last.message).map(|m| (last.seq, m));
                if let Some((_, m)) = &fix {
                    last.message = m.clone();
                }
                Ok(())
            })?;
            if let Some((seq, fixed)) = fix {
                self.settle(tx, thread, seq, &fixed).await?;
            }
            if !rest.is_empty() {
                let now = now_ms();
                let more = self
                    .write_in(
                        tx,
                        &claim.run,
                        now,
                        Batch::new(),
                        rest,
                        Batch::new(),
                        Check::First,
                    )
                    .await?;
                claim.input_seqs.extend(more);
            }
            return Ok(claim);
        }
        unreachable!("the second attempt returns")
    }

    fn busy(thread: &str, run: &str, status: &str) -> StoreError {
        StoreError::Busy {
            thread: thread.into(),
            run: run.into(),
            status: status.into(),
        }
    }

    /// The claim's statements: the run row (with `insert_run`), the history
    /// or the last message, the input, the thread's `updated_at`.
    fn push_claim(
        &self,
        batch: &mut Batch,
        run: &ActiveRun,
        ask: &Ask<'_>,
        insert_run: &'static str,
    ) -> R<()> {
        let now = now_ms();
        let lease = now + self.lease.as_millis() as i64;
        let thread = run.thread_id.as_str();
        let mut args = vec![
            run.id.as_str().into(),
            ask.settings.as_str().into(),
            lease.into(),
            now.into(),
            now.into(),
            self.holder.as_ref().into(),
            thread.into(),
            thread.into(),
        ];
        if insert_run == INSERT_RUN_PLAIN {
            args.extend([thread.into(), thread.into()]);
        }
        batch.push(insert_run, args).push(
            if ask.history { HISTORY } else { LAST },
            vec![thread.into(), run.id.as_str().into()],
        );
        for m in ask.input {
            self.push_insert(batch, run, m, now)?;
        }
        if !ask.input.is_empty() {
            self.push_touch(batch, run, now);
        }
        Ok(())
    }

    /// The claim read from its results (the read first, then the inserts),
    /// `settle` given the last message read.
    fn claimed(
        run: ActiveRun,
        done: &[Done],
        ask: &Ask<'_>,
        settle: impl FnOnce(&mut StoredMessage) -> R<()>,
    ) -> R<Claim> {
        let mut stored = done[0]
            .rows
            .iter()
            .map(|r| Self::message_from(&run.thread_id, r))
            .collect::<R<Vec<StoredMessage>>>()?;
        if let Some(last) = stored.last_mut() {
            settle(last)?;
        }
        if !ask.history {
            stored.clear();
        }
        let input_seqs = Self::positions(&done[1..1 + ask.input.len()])?;
        Ok(Claim {
            run,
            history: stored.into_iter().map(|m| m.message).collect(),
            input_seqs,
        })
    }

    /// Writes `fixed` over the message at `seq` (settled approval requests).
    pub(crate) async fn settle(
        &self,
        tx: &mut Tx,
        thread: &str,
        seq: i64,
        fixed: &Message,
    ) -> R<()> {
        sqlx::query(self.q(
            "UPDATE parlance_messages SET body = ?, rev = rev + 1 WHERE thread_id = ? AND seq = ?",
        ))
        .bind(parlance_format::to_json(fixed))
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
}
