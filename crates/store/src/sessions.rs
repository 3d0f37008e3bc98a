//! Sessions ended before they expire.
//!
//! The inbox's session cookies are signed: any server sharing the store
//! accepts one without asking anybody. Ending one early (a logout, or an
//! operator ending every session of a subject) is therefore a record here,
//! which every server sharing the store reads: one row per ended session,
//! and one row per subject (session [`ALL_SESSIONS`]) that ends every
//! session of the subject issued up to a time. A server asks
//! [`Store::session_ended`] on each request: one lookup by primary key.
//! Rows whose sessions have all expired anyway are deleted as new ones
//! are written.

use sqlx::Row;

use crate::store::{R, Store, now_ms};

/// The session id of a subject's "every session issued up to" row.
pub const ALL_SESSIONS: &str = "*";

impl Store {
    /// Ends the session `session_id` of `subject` (a logout): it is
    /// refused from now on by every server sharing the store.
    /// `expires_at_ms`: when it would have expired anyway (the record is
    /// kept until then).
    pub async fn end_session(&self, subject: &str, session_id: &str, expires_at_ms: i64) -> R<()> {
        self.write_ended(subject, session_id, 0, expires_at_ms)
            .await
    }

    /// Ends every session of `subject` issued at or before `issued_up_to_us`
    /// (microseconds since the epoch; later sessions are not affected).
    /// `expires_at_ms`: when the last of them would have expired anyway.
    /// A later call with an earlier time keeps the later one.
    pub async fn end_sessions_of(
        &self,
        subject: &str,
        issued_up_to_us: i64,
        expires_at_ms: i64,
    ) -> R<()> {
        self.write_ended(subject, ALL_SESSIONS, issued_up_to_us, expires_at_ms)
            .await
    }

    async fn write_ended(
        &self,
        subject: &str,
        session_id: &str,
        issued_up_to: i64,
        expires_at: i64,
    ) -> R<()> {
        sqlx::query(self.q("DELETE FROM parlance_ended_sessions WHERE expires_at < ?"))
            .bind(now_ms())
            .execute(&self.pool)
            .await?;
        sqlx::query(self.q(
            "INSERT INTO parlance_ended_sessions (subject, session_id, issued_up_to, expires_at)
             VALUES (?, ?, ?, ?)
             ON CONFLICT (subject, session_id) DO UPDATE SET
               issued_up_to = CASE WHEN excluded.issued_up_to > parlance_ended_sessions.issued_up_to
                 THEN excluded.issued_up_to ELSE parlance_ended_sessions.issued_up_to END,
               expires_at = CASE WHEN excluded.expires_at > parlance_ended_sessions.expires_at
                 THEN excluded.expires_at ELSE parlance_ended_sessions.expires_at END",
        ))
        .bind(subject)
        .bind(session_id)
        .bind(issued_up_to)
        .bind(expires_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Whether the session `session_id` of `subject`, issued at
    /// `issued_us` (microseconds since the epoch), was ended: logged out,
    /// or issued at or before a time its subject's sessions were ended.
    pub async fn session_ended(&self, subject: &str, session_id: &str, issued_us: i64) -> R<bool> {
        let rows = sqlx::query(self.q(
            "SELECT session_id, issued_up_to FROM parlance_ended_sessions
             WHERE subject = ? AND session_id IN (?, ?)",
        ))
        .bind(subject)
        .bind(session_id)
        .bind(ALL_SESSIONS)
        .fetch_all(&self.pool)
        .await?;
        for row in rows {
            let id: String = row.try_get("session_id")?;
            let up_to: i64 = row.try_get("issued_up_to")?;
            if id != ALL_SESSIONS || issued_us <= up_to {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
