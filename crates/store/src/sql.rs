//! The SQL, written once with `?` placeholders; PostgreSQL gets `$1, $2...`.

/// Which database a store talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite (one file).
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl Dialect {
    /// `sql` with this dialect's placeholders.
    pub fn sql(self, sql: &str) -> String {
        match self {
            Dialect::Sqlite => sql.to_string(),
            Dialect::Postgres => {
                let mut out = String::with_capacity(sql.len() + 8);
                let mut n = 0;
                for c in sql.chars() {
                    if c == '?' {
                        n += 1;
                        out.push('$');
                        out.push_str(&n.to_string());
                    } else {
                        out.push(c);
                    }
                }
                out
            }
        }
    }

    /// Starts a write transaction. SQLite takes the write lock at once, so
    /// two processes never deadlock upgrading a read lock.
    pub fn begin(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }
}

/// The migrations, in order; version N is `MIGRATIONS[N - 1]`. Never edit
/// one that has shipped: add the next.
pub const MIGRATIONS: &[&[&str]] = &[
    &[
        "CREATE TABLE parlance_threads (
        id TEXT PRIMARY KEY,
        owner TEXT,
        metadata TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    )",
        "CREATE INDEX parlance_threads_by_owner ON parlance_threads (owner, created_at, id)",
        "CREATE TABLE parlance_messages (
        thread_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        run_id TEXT,
        body TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        PRIMARY KEY (thread_id, seq)
    )",
        "CREATE TABLE parlance_runs (
        id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL,
        status TEXT NOT NULL,
        settings TEXT NOT NULL,
        usage TEXT,
        error TEXT,
        lease_until BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    )",
        "CREATE INDEX parlance_runs_by_thread ON parlance_runs (thread_id, created_at)",
        // One active run per thread: the database itself refuses a second.
        "CREATE UNIQUE INDEX parlance_runs_one_active ON parlance_runs (thread_id) WHERE status IN ('running', 'requires_approval')",
    ],
    &[
        // A run's outcome is readable later (GET /v1/runs/{id}).
        "ALTER TABLE parlance_runs ADD COLUMN output TEXT",
        "ALTER TABLE parlance_runs ADD COLUMN finish_reason TEXT",
        // Sweeping dead runs looks them up by status and lease.
        "CREATE INDEX parlance_runs_by_lease ON parlance_runs (status, lease_until)",
        // Server-wide settings (the secret that signs paused runs).
        "CREATE TABLE parlance_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ],
    &[
        // Inbox sessions ended before they expire (`sessions` module):
        // one row per logged-out session, and one per subject (session
        // `*`) for "every session issued up to `issued_up_to`". Looked up
        // by the primary key on every page; a row is useless once the
        // sessions it ends have expired (`expires_at`), and goes.
        "CREATE TABLE parlance_ended_sessions (
        subject TEXT NOT NULL,
        session_id TEXT NOT NULL,
        issued_up_to BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        PRIMARY KEY (subject, session_id)
    )",
        "CREATE INDEX parlance_ended_sessions_by_expiry ON parlance_ended_sessions (expires_at)",
    ],
    &[
        // What threads and owners spent (`spend` module): one row per
        // scope (`thread:ID`, `owner:SUBJECT`) and period (`all`,
        // `day:YYYY-MM-DD`, `month:YYYY-MM`, UTC), added to in the
        // transaction that commits each step of a run whose agent has a
        // thread or owner budget.
        "CREATE TABLE parlance_spend (
        scope TEXT NOT NULL,
        period TEXT NOT NULL,
        tokens BIGINT NOT NULL,
        cost_nanos BIGINT NOT NULL,
        model_calls BIGINT NOT NULL,
        tool_calls BIGINT NOT NULL,
        PRIMARY KEY (scope, period)
    )",
    ],
    &[
        // Models cooling down after a 429 (`cooldowns` module), shared by
        // every server of the store: one row per `provider:model`.
        "CREATE TABLE parlance_cooldowns (
        model TEXT PRIMARY KEY,
        until_ms BIGINT NOT NULL
    )",
    ],
    &[
        // Runs that resume themselves (`takeover` module): who claimed
        // the run last (a server's identity), how many times it was taken
        // over without a step committed in between, and where the thread
        // stood at the last takeover (`2 * seq + 1` when its last message
        // was a repair, `2 * seq` otherwise).
        "ALTER TABLE parlance_runs ADD COLUMN holder TEXT",
        "ALTER TABLE parlance_runs ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0",
        "ALTER TABLE parlance_runs ADD COLUMN resumed_at BIGINT",
    ],
    &[
        // Streams that survive reconnects (`log` module): how many times
        // a message was rewritten in place by the run that owns it (the
        // last message replaced by a resume, a retry or a settlement), so
        // that a run's events are numbered from the store alone.
        "ALTER TABLE parlance_messages ADD COLUMN rev BIGINT NOT NULL DEFAULT 0",
    ],
    &[
        // Agents used as tools (`children` module): a sub-agent's runs
        // are kept on a thread of their own, made for one call of one
        // run (the parent's) and found again by it — one per call.
        "ALTER TABLE parlance_threads ADD COLUMN parent_run_id TEXT",
        "ALTER TABLE parlance_threads ADD COLUMN parent_call_id TEXT",
        "CREATE UNIQUE INDEX parlance_threads_by_parent ON parlance_threads (parent_run_id, parent_call_id)",
    ],
    &[
        // Handoffs: the agent a run handed the conversation to (its last
        // handoff), written with the run's outcome.
        "ALTER TABLE parlance_runs ADD COLUMN handoff TEXT",
    ],
];
