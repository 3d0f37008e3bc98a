//! Models cooling down after a `429`, shared by every process and server
//! of the store (a fallback skips them without a request: see
//! `parlance_model::fallback`). One row per `provider:model`, holding the
//! latest time until which it is skipped; rows long past go when another
//! is written.

use crate::store::{R, Store, now_ms};

/// A cooldown is kept, or extended; never shortened by a later, shorter one.
const COOL: &str = "INSERT INTO parlance_cooldowns (model, until_ms) VALUES (?, ?) ON CONFLICT (model) DO UPDATE SET until_ms = excluded.until_ms WHERE parlance_cooldowns.until_ms < excluded.until_ms";

/// Rows an hour past their end (the longest cooldown is an hour).
const FORGET: &str = "DELETE FROM parlance_cooldowns WHERE until_ms < ?";

impl Store {
    /// Records that `model` is cooling down until `until_ms` (milliseconds
    /// since the epoch).
    pub async fn cool(&self, model: &str, until_ms: i64) -> R<()> {
        sqlx::query(self.q(COOL))
            .bind(model)
            .bind(until_ms)
            .execute(&self.pool)
            .await?;
        sqlx::query(self.q(FORGET))
            .bind(now_ms() - 3_600_000)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Until when `model` is cooling down (milliseconds since the epoch),
    /// if it is.
    pub async fn cooldown(&self, model: &str) -> R<Option<i64>> {
        let row: Option<(i64,)> = sqlx::query_as(
            self.q("SELECT until_ms FROM parlance_cooldowns WHERE model = ? AND until_ms > ?"),
        )
        .bind(model)
        .bind(now_ms())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.0))
    }
}
