//! On SQLite, a run's write in one hand-over: the transaction's `BEGIN`
//! and `COMMIT` in the same script as its statements, on a connection kept
//! for these writes.
//!
//! The `batch` module sends a transaction's statements as one script, but
//! the transaction still cost a `BEGIN` and a `COMMIT` of its own, and the
//! pool a ping when the connection went back (sqlx pings every connection
//! it takes back): four hand-overs to the connection's thread per step.
//! Here a run's claim, its steps and its outcome are one each.
//!
//! What keeps that safe:
//! - every statement of such a script checks for itself what the write
//!   needs (the run still holds its lease; the run row was inserted): a
//!   run that lost its lease changes nothing, the script commits an empty
//!   transaction, and the caller reads from the results that nothing was
//!   written (the statement that checks the lease changed no row);
//! - a script that stops part way (the database busy past its timeout, a
//!   full disk) or whose caller is dropped part way leaves its connection
//!   inside its transaction: that connection is closed (SQLite rolls back
//!   what the transaction did) and the next write opens another;
//! - a process killed part way never reached the `COMMIT`: SQLite's
//!   journal rolls the transaction back.
//!
//! PostgreSQL takes one statement per round trip when values are bound:
//! there the same statements run in a transaction of the pool's.

use sqlx::Any;
use sqlx::pool::PoolConnection;
use tokio::sync::{Mutex, MutexGuard};

use crate::batch::{Batch, Done};
use crate::error::{R, StoreError};

/// The connection the scripts run on (`None` until the first one, and
/// after one was closed), and the runtime the store was opened on.
///
/// Runs wait for the connection in the order they asked for it (tokio's
/// mutex is fair): with a lock that lets a newcomer barge in, a run woken
/// for its turn could lose it again and again while others wrote.
#[derive(Debug)]
pub(crate) struct Writer {
    conn: Mutex<Option<PoolConnection<Any>>>,
    runtime: Option<tokio::runtime::Handle>,
}

impl Writer {
    /// A writer with no connection yet, for a store opened on the current
    /// runtime (if any).
    pub(crate) fn new() -> Writer {
        Writer {
            conn: Mutex::new(None),
            runtime: tokio::runtime::Handle::try_current().ok(),
        }
    }
}

/// A pool connection goes back to its pool on a task of the current
/// runtime, and panics where there is none. The Python and Node packages
/// drop their last store on the garbage collector's thread: the
/// connection goes back on the runtime the store was opened on (one that
/// has stopped drops the task unrun, which closes the connection).
impl Drop for Writer {
    fn drop(&mut self) {
        let Some(conn) = self.conn.get_mut().take() else {
            return;
        };
        match &self.runtime {
            Some(runtime) => {
                let _entered = runtime.enter();
                drop(conn);
            }
            // Opened outside any runtime (sqlx's tokio driver refuses that
            // today): closed where it is.
            None => drop(conn.detach()),
        }
    }
}

/// The writer's connection, lent to one script: closed when dropped
/// before the script was seen through (an error, a dropped future).
struct Lent<'a> {
    slot: MutexGuard<'a, Option<PoolConnection<Any>>>,
    finished: bool,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if !self.finished
            && let Some(mut conn) = self.slot.take()
        {
            conn.close_on_drop();
        }
    }
}

impl Writer {
    /// Runs `batch` between `BEGIN IMMEDIATE` and `COMMIT`, all in one
    /// script, on the writer's connection (SQLite only). Its statements
    /// must each check what the write needs (see the module's doc): the
    /// script commits whatever they did. One [`Done`] per statement.
    pub(crate) async fn script(&self, pool: &sqlx::AnyPool, batch: Batch) -> R<Vec<Done>> {
        let n = batch.len();
        let (sql, args) = batch.into_script("BEGIN IMMEDIATE", "COMMIT");
        let mut lent = Lent {
            slot: self.conn.lock().await,
            finished: false,
        };
        if lent.slot.is_none() {
            *lent.slot = Some(pool.acquire().await?);
        }
        let conn = lent.slot.as_mut().expect("a connection was just put there");
        let mut out = Vec::with_capacity(n + 2);
        crate::batch::run(conn, sql, args, &mut out).await?;
        if out.len() != n + 2 {
            // Whether it committed is not known: the connection is closed.
            return Err(StoreError::Database(format!(
                "a script of {n} statements reported {} results",
                out.len()
            )));
        }
        lent.finished = true;
        out.pop();
        out.remove(0);
        Ok(out)
    }
}
