//! Several statements of one transaction sent to the database together.
//!
//! sqlx's SQLite driver runs each connection on a thread of its own and
//! hands it every statement over a channel: each statement costs two task
//! switches, and a run's step (renew the lease, touch the thread, insert
//! its messages) was five or more of them. On SQLite a [`Batch`] goes over
//! as one script (the driver runs a string of statements in one hand-over,
//! binding the `?` parameters in order); on PostgreSQL, which takes one
//! statement per round trip when parameters are bound, the statements are
//! sent one after the other. Either way they run inside the caller's
//! transaction, so they stand or fall together.

use futures::TryStreamExt;
use sqlx::Either;
use sqlx::any::AnyRow;

use crate::error::{R, Tx};
use crate::sql::Dialect;

/// A value bound to a `?` of a batched statement.
#[derive(Debug, Clone)]
pub(crate) enum Arg {
    Int(i64),
    Text(String),
    MaybeText(Option<String>),
}

impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}

impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Text(v.to_string())
    }
}

impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Text(v)
    }
}

impl From<Option<&str>> for Arg {
    fn from(v: Option<&str>) -> Self {
        Arg::MaybeText(v.map(str::to_string))
    }
}

/// One statement: SQL text of this crate (never a value) and its values.
#[derive(Debug)]
struct Statement {
    sql: &'static str,
    args: Vec<Arg>,
}

/// What one statement of a batch did.
#[derive(Default)]
pub(crate) struct Done {
    /// Rows it changed.
    pub rows_affected: u64,
    /// Rows it returned (`RETURNING`, `SELECT`).
    pub rows: Vec<AnyRow>,
}

/// Statements to run together, in order, inside one transaction.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    statements: Vec<Statement>,
}

impl Batch {
    pub(crate) fn new() -> Batch {
        Batch::default()
    }

    /// Adds a statement (`sql` holds no `;`, one `?` per value).
    pub(crate) fn push(&mut self, sql: &'static str, args: Vec<Arg>) -> &mut Batch {
        debug_assert!(!sql.contains(';'), "one statement at a time: {sql}");
        debug_assert_eq!(sql.matches('?').count(), args.len(), "{sql}");
        self.statements.push(Statement { sql, args });
        self
    }

    /// Adds `other`'s statements after these.
    pub(crate) fn extend(&mut self, other: Batch) {
        self.statements.extend(other.statements);
    }

    /// How many statements it holds.
    pub(crate) fn len(&self) -> usize {
        self.statements.len()
    }
}

type Query<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

impl Arg {
    /// Binds this value to the next `?` of `q`.
    pub(crate) fn bind_to(self, q: Query<'_>) -> Query<'_> {
        match self {
            Arg::Int(v) => q.bind(v),
            Arg::Text(v) => q.bind(v),
            Arg::MaybeText(v) => q.bind(v),
        }
    }
}

impl Batch {
    /// The statements as one script between `begin` and `end`, and their
    /// values in order.
    pub(crate) fn into_script(self, begin: &str, end: &str) -> (String, Vec<Arg>) {
        let mut sql = String::from(begin);
        let mut args = Vec::new();
        for s in self.statements {
            sql.push_str(";\n");
            sql.push_str(s.sql);
            args.extend(s.args);
        }
        sql.push_str(";\n");
        sql.push_str(end);
        (sql, args)
    }

    /// The one statement of a batch of one, to run on its own.
    pub(crate) fn into_single(mut self) -> (&'static str, Vec<Arg>) {
        assert_eq!(self.statements.len(), 1, "a batch of one statement");
        let s = self.statements.remove(0);
        (s.sql, s.args)
    }
}

fn bind(q: Query<'_>, args: Vec<Arg>) -> Query<'_> {
    args.into_iter().fold(q, |q, a| a.bind_to(q))
}

/// Runs `sql` with `args` and splits what comes back per statement: the
/// driver yields each statement's rows, then its result.
pub(crate) async fn run(
    conn: &mut sqlx::AnyConnection,
    sql: String,
    args: Vec<Arg>,
    out: &mut Vec<Done>,
) -> Result<(), sqlx::Error> {
    // sqlx deprecates several statements in one prepared query (only its
    // SQLite driver takes them, and may stop); it is what makes a step one
    // hand-over, and the store tests run it on every build.
    #[allow(deprecated)]
    let mut results = bind(sqlx::query(sqlx::AssertSqlSafe(sql)), args).fetch_many(conn);
    let mut current = Done::default();
    while let Some(item) = results.try_next().await? {
        match item {
            Either::Left(result) => {
                current.rows_affected = result.rows_affected();
                out.push(std::mem::take(&mut current));
            }
            Either::Right(row) => current.rows.push(row),
        }
    }
    Ok(())
}

/// Runs `batch` in `tx`: one hand-over on SQLite, one round trip per
/// statement on PostgreSQL. One [`Done`] per statement, in order; the
/// first failing statement fails the whole (the caller rolls back).
pub(crate) async fn batch(dialect: Dialect, tx: &mut Tx, batch: Batch) -> R<Vec<Done>> {
    Ok(batch_sqlx(dialect, tx, batch).await?)
}

/// [`batch`] with the driver's error as it is (a caller tells a unique
/// violation from other failures).
pub(crate) async fn batch_sqlx(
    dialect: Dialect,
    tx: &mut Tx,
    batch: Batch,
) -> Result<Vec<Done>, sqlx::Error> {
    let n = batch.statements.len();
    let mut out = Vec::with_capacity(n);
    match dialect {
        Dialect::Sqlite => {
            let sql = batch
                .statements
                .iter()
                .map(|s| s.sql)
                .collect::<Vec<_>>()
                .join(";\n");
            let args = batch.statements.into_iter().flat_map(|s| s.args).collect();
            run(tx, sql, args, &mut out).await?;
        }
        Dialect::Postgres => {
            for s in batch.statements {
                run(tx, dialect.sql(s.sql), s.args, &mut out).await?;
            }
        }
    }
    if out.len() != n {
        return Err(sqlx::Error::Protocol(format!(
            "a batch of {n} statements reported {} results",
            out.len()
        )));
    }
    Ok(out)
}
