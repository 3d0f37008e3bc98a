//! The store itself: one implementation over SQLite and PostgreSQL (sqlx's
//! `Any` driver), with the few dialect differences in [`crate::sql`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parlance_format::{Block, Message, Usage};
use serde_json::Value;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor, Row};

use crate::sql::{Dialect, MIGRATIONS};

pub use crate::error::StoreError;
pub(crate) use crate::error::{R, Tx};

/// The default lease of a running run: 30 s, renewed every 10 s while the
/// run is alive.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The most messages one [`Store::messages`] page returns (a larger limit
/// is cut to it). A whole thread, however long, is [`Store::all_messages`].
pub const MAX_PAGE: u32 = 100_000;

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A thread.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Thread {
    /// Its id.
    pub id: String,
    /// Who may see it (an API token's subject), if anyone in particular.
    pub owner: Option<String>,
    /// The application's data.
    pub metadata: Value,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch; moves with every message.
    pub updated_at: i64,
    /// For a sub-agent's thread (an agent used as a tool): the run whose
    /// call made it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_run_id: Option<String>,
    /// For a sub-agent's thread: the call of the parent's run it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call_id: Option<String>,
}

/// A stored message and its place.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StoredMessage {
    /// Its position in the thread, from 0.
    pub seq: i64,
    /// The run that wrote it.
    pub run_id: Option<String>,
    /// The message.
    pub message: Message,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRecord {
    /// Its id.
    pub id: String,
    /// Its thread.
    pub thread_id: String,
    /// `running`, `requires_approval`, `completed` or `failed`.
    pub status: String,
    /// The agent's settings when it ran.
    pub settings: Value,
    /// Tokens used.
    pub usage: Option<Usage>,
    /// Why it failed (code, message, cause).
    pub error: Option<Value>,
    /// The final answer (text, or the JSON value of an output schema);
    /// `null` until the run completes.
    pub output: Value,
    /// Why the model stopped, when it did.
    pub finish_reason: Option<String>,
    /// The agent the run handed the conversation to (its last handoff),
    /// if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handoff: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: i64,
    /// Milliseconds since the epoch.
    pub updated_at: i64,
}

/// An artifact, from a stored tool result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Artifact {
    /// The message holding it.
    pub seq: i64,
    /// The call it belongs to.
    pub tool_call_id: String,
    /// The artifact.
    pub artifact: Value,
}

/// A page of a listing, and where the next one starts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// Pass as `after` for the next page; `None` at the end.
    pub next: Option<String>,
}

/// A run this process holds: it may write to the thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveRun {
    /// The run's id.
    pub id: String,
    /// Its thread.
    pub thread_id: String,
    /// Whether its steps' spending is added to its thread's and its
    /// owner's in the ledger ([`Store::spent`]), in the transaction that
    /// commits each step (off unless the caller turns it on: a run whose
    /// agent has a thread or owner budget).
    pub count_spend: bool,
}

/// A thread store.
#[derive(Debug, Clone)]
pub struct Store {
    pub(crate) pool: AnyPool,
    pub(crate) dialect: Dialect,
    pub(crate) lease: Duration,
    pub(crate) redactor: std::sync::Arc<crate::Redactor>,
    /// SQLite: the connection a run's writes go through (`writer` module).
    pub(crate) writer: std::sync::Arc<crate::writer::Writer>,
    /// Who claims runs through this store (written on each run it
    /// claims): a server's identity, which survives its restarts, or an
    /// id of this store's own (`takeover` module).
    pub(crate) holder: std::sync::Arc<str>,
    /// How long a dead run (its lease run out) is left for a resumer to
    /// take over before touching its thread marks it interrupted.
    pub(crate) resume_grace: Duration,
}

impl Store {
    /// Opens (and migrates) a store: `sqlite://PATH` (created when
    /// missing), a bare file path (SQLite), `sqlite::memory:` (a database
    /// in memory, gone with the store: for tests), or `postgres://...`.
    pub async fn open(url: &str) -> R<Store> {
        sqlx::any::install_default_drivers();
        let in_memory = matches!(url, "sqlite::memory:" | "sqlite://:memory:" | ":memory:");
        let (url, dialect) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            (url.to_string(), Dialect::Postgres)
        } else if in_memory {
            // A name of its own, shared by the pool's connections (sqlx's
            // `sqlite::memory:` is renamed for each connection of an Any
            // pool: each would see a database of its own).
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (
                format!(
                    "sqlite:file:parlance-memory-{}-{n}?mode=memory&cache=shared",
                    std::process::id()
                ),
                Dialect::Sqlite,
            )
        } else {
            let path = url.strip_prefix("sqlite://").unwrap_or(url);
            if let Some(dir) = std::path::Path::new(path)
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
            {
                std::fs::create_dir_all(dir).map_err(|e| {
                    StoreError::Database(format!("creating {}: {e}", dir.display()))
                })?;
            }
            (format!("sqlite://{path}?mode=rwc"), Dialect::Sqlite)
        };
        let options: AnyConnectOptions = url
            .parse()
            .map_err(|e: sqlx::Error| StoreError::Database(e.to_string()))?;
        let mut pool = AnyPoolOptions::new();
        if in_memory {
            // The database lives while one connection to it does.
            pool = pool
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None);
        }
        let pool = pool
            .max_connections(if dialect == Dialect::Sqlite { 4 } else { 8 })
            // A SQLite file cannot drop its connection: pinging it before
            // each use is one more hand-over to its thread for nothing.
            .test_before_acquire(dialect == Dialect::Postgres)
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if dialect == Dialect::Sqlite {
                        // Writers from other processes wait instead of failing.
                        conn.execute("PRAGMA busy_timeout = 10000").await?;
                        conn.execute("PRAGMA synchronous = NORMAL").await?;
                    }
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        if dialect == Dialect::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL")
                .fetch_all(&pool)
                .await?;
        }
        let store = Store {
            pool,
            dialect,
            lease: DEFAULT_LEASE,
            redactor: Default::default(),
            writer: std::sync::Arc::new(crate::writer::Writer::new()),
            holder: parlance_format::new_id("holder").into(),
            resume_grace: Duration::ZERO,
        };
        store.migrate().await?;
        Ok(store)
    }

    /// How long a running run's claim on its thread lasts without being
    /// renewed (default 30 s). The process running it renews it every
    /// third of that ([`Store::renew`]); once it has really run out, the
    /// run may no longer write, and another process may take the thread.
    pub fn with_lease(mut self, lease: Duration) -> Store {
        self.lease = lease;
        self
    }

    /// Claims runs as `holder` (a server's identity, kept across its
    /// restarts): at start-up, the runs still `running` under it are its
    /// previous incarnation's, dead, and are taken over at once
    /// ([`Store::dead_runs`]). Default: an id of this store's own.
    pub fn with_holder(mut self, holder: &str) -> Store {
        self.holder = holder.into();
        self
    }

    /// Who claims runs through this store.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Leaves a dead run (its lease run out) this long for a resumer to
    /// take over ([`Store::take_over`]) before a touch of its thread
    /// (a new run, a read of its runs, a delete, a sweep) marks it
    /// `interrupted`. Default zero: nothing resumes runs unless asked.
    pub fn with_resume_grace(mut self, grace: Duration) -> Store {
        self.resume_grace = grace;
        self
    }

    /// Scrubs these secrets from everything stored from now on (messages,
    /// errors, outputs).
    pub fn with_redactor(mut self, redactor: crate::Redactor) -> Store {
        self.redactor = std::sync::Arc::new(redactor);
        self
    }

    /// What a message or a value becomes when stored: canonical JSON,
    /// secrets scrubbed.
    pub(crate) fn stored_text(&self, json: String) -> String {
        match self.redactor.redact(&json) {
            std::borrow::Cow::Borrowed(_) => json,
            std::borrow::Cow::Owned(s) => s,
        }
    }

    /// A message as stored: [`Store::stored_text`] of its canonical JSON,
    /// refused ([`StoreError::Unstorable`]) when the reader would refuse it
    /// (nested deeper than `parlance_format::MAX_VALUE_DEPTH`): nothing is
    /// written that cannot be read back.
    pub(crate) fn stored_message(&self, message: &Message) -> R<String> {
        let json = parlance_format::to_readable_json(message)
            .map_err(|e| StoreError::Unstorable(format!("message {e}")))?;
        Ok(self.stored_text(json))
    }

    /// The lease of running runs.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// Which database this is.
    pub fn is_postgres(&self) -> bool {
        self.dialect == Dialect::Postgres
    }

    /// Our SQL, in this dialect. Every statement is a literal of this file
    /// (placeholders only change), so no value ever reaches the text.
    pub(crate) fn q(&self, sql: &str) -> sqlx::AssertSqlSafe<String> {
        sqlx::AssertSqlSafe(self.dialect.sql(sql))
    }

    /// A write transaction. Dropped before its commit (a request whose
    /// client left, a cancelled future), it is rolled back before its
    /// connection serves anyone else: sqlx queues the rollback.
    pub(crate) async fn tx(&self) -> R<Tx> {
        Ok(self.pool.begin_with(self.dialect.begin()).await?)
    }

    pub(crate) async fn commit(tx: Tx) -> R<()> {
        tx.commit().await?;
        Ok(())
    }

    pub(crate) async fn rollback(tx: Tx) {
        let _ = tx.rollback().await;
    }

    /// Applies the migrations not yet applied, all in one transaction: a
    /// store is at one version or the next, never between, and a new
    /// store is made in a few hand-overs to its connection rather than
    /// five per migration (on an empty SQLite file that was most of
    /// `parlance serve`'s start-up).
    async fn migrate(&self) -> R<()> {
        let mut tx = self.tx().await?;
        if self.dialect == Dialect::Postgres {
            // Servers starting together migrate one at a time (creating
            // the version table included: PostgreSQL's IF NOT EXISTS is
            // not safe against a concurrent CREATE).
            tx.execute("SELECT pg_advisory_xact_lock(7470726)").await?;
        }
        tx.execute("CREATE TABLE IF NOT EXISTS parlance_schema (version BIGINT NOT NULL)")
            .await?;
        let row = sqlx::query("SELECT MAX(version) FROM parlance_schema")
            .fetch_one(&mut *tx)
            .await?;
        let version: i64 = row.try_get::<Option<i64>, _>(0)?.unwrap_or(0);
        let pending = MIGRATIONS.get(version as usize..).unwrap_or_default();
        let mut applied = Vec::with_capacity(pending.len());
        for (n, steps) in (version + 1..).zip(pending) {
            // One migration's statements in one hand-over.
            let script = steps.join(";\n");
            // Our own constants, not input.
            let script = sqlx::AssertSqlSafe(script);
            if let Err(e) = sqlx::raw_sql(script).execute(&mut *tx).await {
                Self::rollback(tx).await;
                return Err(StoreError::Database(format!("migration {n}: {e}")));
            }
            applied.push(format!("({n})"));
        }
        if !applied.is_empty() {
            let insert = format!(
                "INSERT INTO parlance_schema (version) VALUES {}",
                applied.join(", ")
            );
            // Our own constants and version numbers, not input.
            tx.execute(sqlx::AssertSqlSafe(insert)).await?;
        }
        Self::commit(tx).await?;
        if !applied.is_empty() {
            tracing::info!(
                from = version,
                to = version + applied.len() as i64,
                "store migrated"
            );
        }
        Ok(())
    }

    /// The schema version in force.
    pub async fn schema_version(&self) -> R<i64> {
        let row = sqlx::query("SELECT MAX(version) FROM parlance_schema")
            .fetch_one(&self.pool)
            .await?;
        Ok(row.try_get::<Option<i64>, _>(0)?.unwrap_or(0))
    }

    /// A new, empty thread.
    pub async fn create_thread(&self, owner: Option<&str>, metadata: Value) -> R<Thread> {
        parlance_format::check_depth(&metadata, "metadata")
            .map_err(|e| StoreError::Unstorable(e.to_string()))?;
        let t = Thread {
            id: parlance_format::new_id("thr"),
            owner: owner.map(str::to_string),
            metadata,
            created_at: now_ms(),
            updated_at: now_ms(),
            parent_run_id: None,
            parent_call_id: None,
        };
        sqlx::query(self.q("INSERT INTO parlance_threads (id, owner, metadata, created_at, updated_at) VALUES (?, ?, ?, ?, ?)"))
            .bind(&t.id)
            .bind(t.owner.clone())
            .bind(t.metadata.to_string())
            .bind(t.created_at)
            .bind(t.updated_at)
            .execute(&self.pool)
            .await?;
        Ok(t)
    }

    pub(crate) fn thread_from(row: &sqlx::any::AnyRow) -> R<Thread> {
        let metadata: String = row.try_get("metadata")?;
        Ok(Thread {
            id: row.try_get("id")?,
            owner: row.try_get("owner")?,
            metadata: serde_json::from_str(&metadata).unwrap_or_else(|e| {
                let id: String = row.try_get("id").unwrap_or_default();
                tracing::warn!(thread = %id, error = %e, "store: a thread's metadata is not readable");
                Value::Null
            }),
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            parent_run_id: row.try_get("parent_run_id")?,
            parent_call_id: row.try_get("parent_call_id")?,
        })
    }

    /// The columns [`Store::thread_from`] reads.
    pub(crate) const THREAD_COLUMNS: &'static str =
        "id, owner, metadata, created_at, updated_at, parent_run_id, parent_call_id";

    /// The thread `id`.
    pub async fn thread(&self, id: &str) -> R<Thread> {
        let row = sqlx::query(self.q(&format!(
            "SELECT {} FROM parlance_threads WHERE id = ?",
            Self::THREAD_COLUMNS
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("thread {id}")))?;
        Self::thread_from(&row)
    }

    /// Threads (of `owner`, when given), oldest first, `limit` at a time,
    /// starting after the thread `after`.
    pub async fn list_threads(
        &self,
        owner: Option<&str>,
        after: Option<&str>,
        limit: u32,
    ) -> R<Page<Thread>> {
        let limit = limit.clamp(1, 1000) as i64;
        let (after_created, after_id) = match after {
            Some(id) => {
                let t = self.thread(id).await?;
                (t.created_at, t.id)
            }
            None => (i64::MIN, String::new()),
        };
        let rows = sqlx::query(self.q(&format!(
            "SELECT {} FROM parlance_threads
             WHERE (? IS NULL OR owner = ?) AND (created_at > ? OR (created_at = ? AND id > ?))
             ORDER BY created_at, id LIMIT ?",
            Self::THREAD_COLUMNS
        )))
        .bind(owner)
        .bind(owner)
        .bind(after_created)
        .bind(after_created)
        .bind(after_id)
        .bind(limit + 1)
        .fetch_all(&self.pool)
        .await?;
        let mut items: Vec<Thread> = rows.iter().map(Self::thread_from).collect::<R<_>>()?;
        let next = if items.len() as i64 > limit {
            items.truncate(limit as usize);
            items.last().map(|t| t.id.clone())
        } else {
            None
        };
        Ok(Page { items, next })
    }

    /// Deletes a thread with its messages, runs and artifacts. Refused while
    /// a run is active on it.
    pub async fn delete_thread(&self, id: &str) -> R<()> {
        self.delete(id, false).await
    }

    /// Deletes a thread even while a run waits for decisions on it (what
    /// is left when that run cannot be read or decided any more: its
    /// record is damaged); still refused while a run is running.
    pub async fn delete_thread_waiting(&self, id: &str) -> R<()> {
        self.delete(id, true).await
    }

    async fn delete(&self, id: &str, waiting_too: bool) -> R<()> {
        // A dead run (its lease ran out) does not hold the thread.
        self.sweep_thread(id).await?;
        let mut tx = self.tx().await?;
        let blocking = if waiting_too {
            "SELECT id, status FROM parlance_runs WHERE thread_id = ? AND status = 'running'"
        } else {
            "SELECT id, status FROM parlance_runs WHERE thread_id = ? AND status IN ('running', 'requires_approval')"
        };
        let active = sqlx::query(self.q(blocking))
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(row) = active {
            let run: String = row.try_get("id")?;
            let status: String = row.try_get("status")?;
            Self::rollback(tx).await;
            return Err(StoreError::Busy {
                thread: id.into(),
                run,
                status,
            });
        }
        for table in ["parlance_messages", "parlance_runs"] {
            sqlx::query(self.q(&format!("DELETE FROM {table} WHERE thread_id = ?")))
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        // The thread's ledger row goes with it; its owner's stay.
        sqlx::query(
            self.q("DELETE FROM parlance_spend WHERE scope = 'thread:' || ? AND period = 'all'"),
        )
        .bind(id)
        .execute(&mut *tx)
        .await?;
        let gone = sqlx::query(self.q("DELETE FROM parlance_threads WHERE id = ?"))
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if gone.rows_affected() == 0 {
            Self::rollback(tx).await;
            return Err(StoreError::NotFound(format!("thread {id}")));
        }
        Self::commit(tx).await
    }

    pub(crate) fn message_from(thread: &str, row: &sqlx::any::AnyRow) -> R<StoredMessage> {
        let seq: i64 = row.try_get("seq")?;
        let body: String = row.try_get("body")?;
        let message = serde_json::from_str::<Value>(&body)
            .map_err(|e| e.to_string())
            .and_then(|v| Message::from_value(&v).map_err(|e| e.to_string()))
            .map_err(|error| {
                tracing::warn!(thread, seq, %error, "store: a stored message is not readable");
                StoreError::Corrupt {
                    thread: thread.into(),
                    seq,
                    error,
                }
            })?;
        Ok(StoredMessage {
            seq,
            run_id: row.try_get("run_id")?,
            message,
        })
    }

    /// Messages of a thread from position `from`, at most `limit` (cut to
    /// [`MAX_PAGE`]; at least one).
    pub async fn messages(&self, thread: &str, from: i64, limit: u32) -> R<Vec<StoredMessage>> {
        self.thread(thread).await?;
        let rows = sqlx::query(self.q("SELECT seq, run_id, body FROM parlance_messages WHERE thread_id = ? AND seq >= ? ORDER BY seq LIMIT ?"))
            .bind(thread)
            .bind(from)
            .bind(limit.clamp(1, MAX_PAGE) as i64)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| Self::message_from(thread, r)).collect()
    }

    /// Every message of a thread, in order, however many: what a run, a
    /// thread's page or an export reads (a page could cut a long thread
    /// short, and a run must never see half its history).
    pub async fn all_messages(&self, thread: &str) -> R<Vec<StoredMessage>> {
        self.thread(thread).await?;
        let rows =
            sqlx::query(self.q(
                "SELECT seq, run_id, body FROM parlance_messages WHERE thread_id = ? ORDER BY seq",
            ))
            .bind(thread)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| Self::message_from(thread, r)).collect()
    }

    /// The whole history of a thread, in order.
    pub async fn history(&self, thread: &str) -> R<Vec<Message>> {
        Ok(self
            .all_messages(thread)
            .await?
            .into_iter()
            .map(|m| m.message)
            .collect())
    }

    /// Every artifact of a thread (never sent to a model; for operators).
    pub async fn artifacts(&self, thread: &str) -> R<Vec<Artifact>> {
        let mut out = Vec::new();
        for m in self.all_messages(thread).await? {
            for b in &m.message.content {
                if let Block::ToolResult { tool_result } = b
                    && let Some(a) = &tool_result.artifact
                {
                    out.push(Artifact {
                        seq: m.seq,
                        tool_call_id: tool_result.tool_call_id.clone(),
                        artifact: a.clone(),
                    });
                }
            }
        }
        Ok(out)
    }

    async fn setting(&self, name: &str) -> R<Option<String>> {
        let row = sqlx::query(self.q("SELECT value FROM parlance_settings WHERE name = ?"))
            .bind(name)
            .fetch_optional(&self.pool)
            .await?;
        Ok(match row {
            Some(r) => Some(r.try_get::<String, _>("value")?),
            None => None,
        })
    }

    /// A server-wide setting, made by `make` the first time it is asked
    /// for and kept: every process sharing the store gets the same value
    /// (the first writer wins).
    pub async fn setting_or_init(&self, name: &str, make: impl FnOnce() -> String) -> R<String> {
        if let Some(v) = self.setting(name).await? {
            return Ok(v);
        }
        let insert =
            sqlx::query(self.q("INSERT INTO parlance_settings (name, value) VALUES (?, ?)"))
                .bind(name)
                .bind(make())
                .execute(&self.pool)
                .await;
        match insert {
            Ok(_) => {}
            // Another process wrote it first: theirs is kept.
            Err(e)
                if e.as_database_error()
                    .is_some_and(|d| d.is_unique_violation()) => {}
            Err(e) => return Err(e.into()),
        }
        self.setting(name)
            .await?
            .ok_or_else(|| StoreError::Database(format!("setting {name} vanished")))
    }
}

#[cfg(test)]
mod migrate_tests {
    use sqlx::any::AnyPoolOptions;
    use sqlx::{Executor, Row};

    use super::{MIGRATIONS, Store};

    /// A SQLite file at schema `version`, made as the releases of that
    /// version made it (one migration at a time), with one thread in it.
    async fn file_at(version: usize) -> String {
        sqlx::any::install_default_drivers();
        let dir = std::env::temp_dir().join(format!("parlance-migrate-{}", rand::random::<u64>()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("old.db").display().to_string();
        let pool = AnyPoolOptions::new()
            .max_connections(1)
            .connect(&format!("sqlite://{path}?mode=rwc"))
            .await
            .unwrap();
        pool.execute("CREATE TABLE parlance_schema (version BIGINT NOT NULL)")
            .await
            .unwrap();
        for (n, steps) in (1..).zip(&MIGRATIONS[..version]) {
            for step in *steps {
                pool.execute(*step).await.unwrap();
            }
            pool.execute(sqlx::AssertSqlSafe(format!(
                "INSERT INTO parlance_schema (version) VALUES ({n})"
            )))
            .await
            .unwrap();
        }
        pool.execute("INSERT INTO parlance_threads (id, metadata, created_at, updated_at) VALUES ('thr_old', '{}', 1, 1)")
            .await
            .unwrap();
        pool.close().await;
        path
    }

    async fn versions(store: &Store) -> Vec<i64> {
        sqlx::query("SELECT version FROM parlance_schema ORDER BY version")
            .fetch_all(&store.pool)
            .await
            .unwrap()
            .iter()
            .map(|r| r.get::<i64, _>(0))
            .collect()
    }

    /// An older store is brought to the last version, each version
    /// recorded once, its data kept; opening it again changes nothing.
    #[tokio::test]
    async fn an_older_store_is_migrated_whole_and_keeps_its_data() {
        let path = file_at(3).await;
        let all: Vec<i64> = (1..=MIGRATIONS.len() as i64).collect();
        for _ in 0..2 {
            let store = Store::open(&path).await.unwrap();
            assert_eq!(
                store.schema_version().await.unwrap(),
                MIGRATIONS.len() as i64
            );
            assert_eq!(versions(&store).await, all);
            let t = store.thread("thr_old").await.unwrap();
            assert_eq!(t.parent_run_id, None);
        }
    }

    /// A migration that fails leaves the store at the version before the
    /// first one pending: nothing of the run of migrations is kept, and
    /// the error names the one that failed.
    #[tokio::test]
    async fn a_failed_migration_leaves_the_store_as_it_was() {
        let path = file_at(6).await;
        {
            // An object in the way of migration 8 (not of 7).
            let pool = AnyPoolOptions::new()
                .connect(&format!("sqlite://{path}"))
                .await
                .unwrap();
            pool.execute("CREATE TABLE in_the_way (a TEXT)")
                .await
                .unwrap();
            pool.execute("CREATE INDEX parlance_threads_by_parent ON in_the_way (a)")
                .await
                .unwrap();
            pool.close().await;
        }
        let e = Store::open(&path).await.unwrap_err().to_string();
        assert!(e.contains("migration 8:"), "{e}");
        let pool = AnyPoolOptions::new()
            .connect(&format!("sqlite://{path}"))
            .await
            .unwrap();
        let v: i64 = sqlx::query("SELECT MAX(version) FROM parlance_schema")
            .fetch_one(&pool)
            .await
            .unwrap()
            .get(0);
        assert_eq!(v, 6);
        // Migration 7's column was not kept either.
        assert!(
            pool.execute("SELECT rev FROM parlance_messages")
                .await
                .is_err()
        );
    }
}
