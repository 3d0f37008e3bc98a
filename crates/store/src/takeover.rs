//! Taking over a run whose process died, to carry it on from its last
//! committed step.
//!
//! A run is dead when it is `running` and either its lease ran out, or
//! (at start-up only) it is held by this store's holder: a server whose
//! identity survives its restarts knows that the runs it held before are
//! its previous incarnation's. A takeover, in one transaction:
//!
//! - counts the attempt: the run's `attempts` grow only while no step
//!   commits between two takeovers (the thread's last message is the same
//!   as at the last takeover); past the limit the run is a poison one and
//!   is marked failed (`interrupted`, its thread repaired and free);
//! - claims the run (this holder, a fresh lease), checked in the very
//!   statement, so two resumers never both carry it on;
//! - a run that died after its decisions were taken, before the calls
//!   committed, goes back to waiting for decisions;
//! - otherwise the calls of the last step that had not committed get
//!   `interrupted` results marked as a repair (stored, so the thread is
//!   consistent should this attempt die too), which the resumed run runs
//!   again; a model step that had not committed is asked again.

use parlance_format::{Block, Message};
use serde_json::{Value, json};
use sqlx::Row;

use crate::repair::repair;
use crate::runs::Dead;
use crate::store::{ActiveRun, R, Store, Tx, now_ms};

/// A dead run, as a resumer sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadRun {
    /// The run.
    pub id: String,
    /// Its thread.
    pub thread_id: String,
    /// The settings of the agent that made it (its `name`, for a
    /// configured agent).
    pub settings: Value,
}

/// What taking a dead run over came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Takeover {
    /// Claimed: carry it on from `history` (the thread's messages; calls
    /// that had not committed hold `interrupted` results marked as a
    /// repair, to be run again).
    Claimed {
        /// The run, held by this store's holder now.
        run: ActiveRun,
        /// The thread's messages, in order.
        history: Vec<Message>,
        /// How many times in a row it was taken over at this step (1 the
        /// first time).
        attempt: u32,
    },
    /// It died after its decisions were taken, before its calls
    /// committed: it waits for decisions again.
    Waiting,
    /// It died more than the limit times at the same step: marked failed
    /// (`interrupted`, the attempts in its cause), its thread free.
    GaveUp {
        /// Takeovers at that step, this one included.
        attempts: u32,
    },
    /// Nothing to take over: another process took it first, it ended, or
    /// it is alive.
    Gone,
}

/// Where a thread stands, for counting attempts: its last message's place,
/// and whether that message is a repair (which the resumed run replaces
/// in place once its calls commit: progress, at the same place).
fn progress_marker(last_seq: Option<i64>, last: Option<&Message>) -> i64 {
    match (last_seq, last) {
        (Some(seq), Some(m)) => 2 * seq + i64::from(m.is_repair()),
        _ => -2,
    }
}

impl Store {
    /// Runs whose process died, for a resumer: `running` with their lease
    /// run out and, with `mine`, also those held by this store's holder,
    /// whatever their lease — call it so only before this holder claims
    /// any run (at start-up), when they are its previous incarnation's.
    /// Oldest first.
    pub async fn dead_runs(&self, mine: bool) -> R<Vec<DeadRun>> {
        let rows = sqlx::query(self.q(
            "SELECT id, thread_id, settings FROM parlance_runs WHERE status = 'running' AND (lease_until < ? OR holder = ?) ORDER BY created_at, id",
        ))
        .bind(now_ms())
        .bind(if mine { Some(self.holder.as_ref()) } else { None })
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let settings: String = row.try_get("settings")?;
                Ok(DeadRun {
                    id: row.try_get("id")?,
                    thread_id: row.try_get("thread_id")?,
                    settings: serde_json::from_str(&settings).unwrap_or(Value::Null),
                })
            })
            .collect()
    }

    /// Takes the dead run `id` over to carry it on (see the module's doc):
    /// `mine` as for [`Store::dead_runs`]; `max_attempts` takeovers at the
    /// same step at most.
    pub async fn take_over(&self, id: &str, mine: bool, max_attempts: u32) -> R<Takeover> {
        let mut tx = self.tx().await?;
        match self.take_over_in(&mut tx, id, mine, max_attempts).await {
            Ok(t) => {
                Self::commit(tx).await?;
                if let Takeover::GaveUp { attempts } = &t {
                    tracing::error!(
                        run = id,
                        attempts,
                        "a run that kept dying at the same step was marked failed"
                    );
                }
                Ok(t)
            }
            Err(e) => {
                Self::rollback(tx).await;
                Err(e)
            }
        }
    }

    /// Marks the dead run `id` failed (`interrupted`) and repairs its
    /// thread, at once: for a run nothing here can resume (its agent is
    /// not here, or does not resume). `mine` as for [`Store::dead_runs`].
    /// `false` when it was not dead.
    pub async fn end_dead_run(&self, id: &str, mine: bool) -> R<bool> {
        let Some(thread) = self.thread_of(id).await? else {
            return Ok(false);
        };
        let mut tx = self.tx().await?;
        let dead = self.dead(mine);
        let error = crate::runs::interrupted_error();
        match self.interrupt_if(&mut tx, &thread, id, &error, dead).await {
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

    /// How a run found dead by [`Store::dead_runs`] is known to be.
    fn dead(&self, mine: bool) -> Dead<'_> {
        match mine {
            true => Dead::HeldBy(&self.holder),
            false => Dead::Before(now_ms()),
        }
    }

    async fn thread_of(&self, id: &str) -> R<Option<String>> {
        let row = sqlx::query(self.q("SELECT thread_id FROM parlance_runs WHERE id = ?"))
            .bind(id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| r.try_get("thread_id").map_err(Into::into))
            .transpose()
    }

    async fn take_over_in(
        &self,
        tx: &mut Tx,
        id: &str,
        mine: bool,
        max_attempts: u32,
    ) -> R<Takeover> {
        let Some(row) = sqlx::query(self.q(
            "SELECT thread_id, attempts, resumed_at FROM parlance_runs WHERE id = ? AND status = 'running' AND (lease_until < ? OR holder = ?)",
        ))
        .bind(id)
        .bind(now_ms())
        .bind(if mine { Some(self.holder.as_ref()) } else { None })
        .fetch_optional(&mut **tx)
        .await?
        else {
            return Ok(Takeover::Gone);
        };
        let thread: String = row.try_get("thread_id")?;
        let attempts: i64 = row.try_get("attempts")?;
        let resumed_at: Option<i64> = row.try_get("resumed_at")?;
        let rows =
            sqlx::query(self.q(
                "SELECT seq, run_id, body FROM parlance_messages WHERE thread_id = ? ORDER BY seq",
            ))
            .bind(&thread)
            .fetch_all(&mut **tx)
            .await?;
        let stored = rows
            .iter()
            .map(|r| Self::message_from(&thread, r))
            .collect::<R<Vec<_>>>()?;
        let mut last_seq = stored.last().map(|m| m.seq);
        let mut history: Vec<Message> = stored.into_iter().map(|m| m.message).collect();
        let fix = repair(&history);
        let waiting = fix.is_none()
            && history.last().is_some_and(|m| {
                m.content
                    .iter()
                    .any(|b| matches!(b, Block::ApprovalRequest { .. }))
            });
        if let Some(fix) = &fix {
            last_seq = Some(last_seq.map_or(0, |s| s + 1));
            history.push(fix.clone());
        }
        let marker = progress_marker(last_seq, history.last());
        let attempt = match resumed_at {
            Some(at) if at == marker => u32::try_from(attempts)
                .unwrap_or(u32::MAX)
                .saturating_add(1),
            _ => 1,
        };
        let now = now_ms();
        if attempt > max_attempts {
            let error = json!({
                "code": "interrupted",
                "message": format!("the run died {attempt} times at the same step (its process stopped before the step committed, each time); it is not resumed again"),
                "cause": {"attempts": attempt, "max_attempts": max_attempts},
            });
            return Ok(
                match self
                    .interrupt_if(tx, &thread, id, &error, self.dead(mine))
                    .await?
                {
                    true => Takeover::GaveUp { attempts: attempt },
                    false => Takeover::Gone,
                },
            );
        }
        let (lease, status) = match waiting {
            true => (i64::MAX, "requires_approval"),
            false => (now + self.lease.as_millis() as i64, "running"),
        };
        let r = sqlx::query(self.q(
            "UPDATE parlance_runs SET status = ?, holder = ?, lease_until = ?, attempts = ?, resumed_at = ?, updated_at = ? WHERE id = ? AND status = 'running' AND (lease_until < ? OR holder = ?)",
        ))
        .bind(status)
        .bind(self.holder.as_ref())
        .bind(lease)
        .bind(i64::from(attempt))
        .bind(marker)
        .bind(now)
        .bind(id)
        .bind(now)
        .bind(if mine { Some(self.holder.as_ref()) } else { None })
        .execute(&mut **tx)
        .await?;
        if r.rows_affected() == 0 {
            return Ok(Takeover::Gone);
        }
        if waiting {
            tracing::warn!(
                run = id,
                thread,
                "a run that died after its decisions were taken waits for decisions again"
            );
            return Ok(Takeover::Waiting);
        }
        if let Some(fix) = &fix {
            self.insert_message(tx, &thread, Some(id), fix).await?;
        }
        tracing::warn!(
            run = id,
            thread,
            attempt,
            "a run whose process died was taken over"
        );
        Ok(Takeover::Claimed {
            run: ActiveRun {
                id: id.to_string(),
                thread_id: thread,
                count_spend: false,
            },
            history,
            attempt,
        })
    }
}
