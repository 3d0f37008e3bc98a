//! The ledger of what threads and their owners spent, for budgets.
//!
//! A run whose [`ActiveRun::count_spend`] is on adds each step's spending
//! ([`Spend::of`] its messages) to three rows of `parlance_spend`: its
//! thread's (period `all`), and its thread owner's for the day and the
//! month (UTC; none for a thread without an owner). The addition is one
//! statement of the step's own write, checking the run's lease like the
//! write's other statements: a step is counted exactly when it is
//! committed, so a step that did not commit (its process died) is not
//! counted, and one that did is never counted again (a resumed or retried
//! run never writes it twice). Sums saturate at `i64::MAX`.
//!
//! Deleting a thread deletes its row; its owner's rows stay (what was
//! spent was spent).

use parlance_format::{Message, Spend, ThreadSpend};
use sqlx::Row;

use crate::batch::{Arg, Batch};
use crate::store::{ActiveRun, R, Store, now_ms};

/// A column's sum with the excluded row's, saturating (PostgreSQL refuses an overflow,
/// SQLite would turn it into a float).
macro_rules! add_saturating {
    ($col:literal) => {
        concat!(
            $col,
            " = CASE WHEN parlance_spend.",
            $col,
            " > 9223372036854775807 - excluded.",
            $col,
            " THEN 9223372036854775807 ELSE parlance_spend.",
            $col,
            " + excluded.",
            $col,
            " END"
        )
    };
}

/// The row added to, each sum saturating.
macro_rules! on_conflict {
    () => {
        concat!(
            " ON CONFLICT (scope, period) DO UPDATE SET ",
            add_saturating!("tokens"),
            ", ",
            add_saturating!("cost_nanos"),
            ", ",
            add_saturating!("model_calls"),
            ", ",
            add_saturating!("tool_calls")
        )
    };
}

/// The lease check every statement of a run's write makes.
macro_rules! held {
    () => {
        "EXISTS (SELECT 1 FROM parlance_runs WHERE id = ? AND status = 'running' AND lease_until >= ?)"
    };
}

/// The spending of a step added to the thread's row and to its owner's
/// for the day and the month (none without an owner), in one statement:
/// the four sums, the thread's scope, the day, the thread, the month, the
/// thread, then the run and the time of the lease check.
const ADD: &str = concat!(
    "INSERT INTO parlance_spend (scope, period, tokens, cost_nanos, model_calls, tool_calls) SELECT s.scope, s.period, ?, ?, ?, ? FROM (",
    "SELECT CAST(? AS TEXT) AS scope, CAST('all' AS TEXT) AS period",
    " UNION ALL SELECT 'owner:' || owner, CAST(? AS TEXT) FROM parlance_threads WHERE id = ? AND owner IS NOT NULL",
    " UNION ALL SELECT 'owner:' || owner, CAST(? AS TEXT) FROM parlance_threads WHERE id = ? AND owner IS NOT NULL",
    ") s WHERE ",
    held!(),
    on_conflict!()
);

/// The thread's row and its owner's for two periods.
const SPENT: &str = "SELECT scope, period, tokens, cost_nanos, model_calls, tool_calls FROM parlance_spend WHERE (scope = ? AND period = 'all') OR (scope = (SELECT 'owner:' || owner FROM parlance_threads WHERE id = ?) AND period IN (?, ?))";

/// The ledger's scope of a thread.
fn thread_scope(thread: &str) -> String {
    format!("thread:{thread}")
}

/// The day and month periods of `ms` (milliseconds since the epoch), UTC.
fn periods(ms: i64) -> (String, String) {
    let t = time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    let (y, m, d) = (t.year(), u8::from(t.month()), t.day());
    (
        format!("day:{y:04}-{m:02}-{d:02}"),
        format!("month:{y:04}-{m:02}"),
    )
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store {
    /// Adds to `batch` the ledger's additions for `messages` written by
    /// `run` at `now` (nothing unless the run counts, or when they spent
    /// nothing).
    pub(crate) fn push_spend(
        &self,
        batch: &mut Batch,
        run: &ActiveRun,
        messages: &[Message],
        now: i64,
    ) {
        if !run.count_spend {
            return;
        }
        let spent = Spend::of_all(messages);
        if spent.is_zero() {
            return;
        }
        let (day, month) = periods(now);
        let thread = run.thread_id.as_str();
        let mut args: Vec<Arg> = [
            spent.tokens,
            spent.cost_nanos,
            spent.model_calls,
            spent.tool_calls,
        ]
        .map(|n| int(n).into())
        .into();
        args.extend([
            thread_scope(thread).into(),
            day.into(),
            thread.into(),
            month.into(),
            thread.into(),
            run.id.as_str().into(),
            now.into(),
        ]);
        batch.push(ADD, args);
    }

    /// What the ledger counted for `thread` and its owner (today and this
    /// month, UTC): zero where nothing was counted.
    pub async fn spent(&self, thread: &str) -> R<ThreadSpend> {
        let (day, month) = periods(now_ms());
        let rows = sqlx::query(self.q(SPENT))
            .bind(thread_scope(thread))
            .bind(thread)
            .bind(&day)
            .bind(&month)
            .fetch_all(&self.pool)
            .await?;
        let mut out = ThreadSpend::default();
        for row in rows {
            let scope: String = row.try_get("scope")?;
            let period: String = row.try_get("period")?;
            let get = |c: &str| -> R<u64> { Ok(row.try_get::<i64, _>(c)?.max(0) as u64) };
            let spend = Spend {
                tokens: get("tokens")?,
                cost_nanos: get("cost_nanos")?,
                model_calls: get("model_calls")?,
                tool_calls: get("tool_calls")?,
            };
            if scope.starts_with("thread:") {
                out.thread = spend;
            } else if period == day {
                out.owner_day = spend;
            } else {
                out.owner_month = spend;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_utc_days_and_months() {
        // 2026-12-04T23:59:59.999Z, then the next millisecond.
        let ms = 1_796_428_799_999;
        assert_eq!(
            periods(ms),
            ("day:2026-12-04".into(), "month:2026-12".into())
        );
        assert_eq!(
            periods(ms + 1),
            ("day:2026-12-05".into(), "month:2026-12".into())
        );
        assert_eq!(
            periods(0),
            ("day:1970-01-01".into(), "month:1970-01".into())
        );
    }

    #[test]
    fn sums_saturate_in_sql() {
        let tokens = "tokens = CASE WHEN parlance_spend.tokens > 9223372036854775807 - excluded.tokens THEN 9223372036854775807 ELSE parlance_spend.tokens + excluded.tokens END";
        assert!(ADD.contains(tokens) && ADD.ends_with(on_conflict!()));
        assert_eq!(int(u64::MAX), i64::MAX);
    }
}
