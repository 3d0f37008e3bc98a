//! A fallback's cooldowns shared through a store: a model one server saw
//! rate limited (a `429` with a `retry-after`) is skipped by every server
//! of the store, without a request, until its time has passed.
//!
//! What the store says of a model is kept here for a second: a fallback
//! asks before each model it tries, and one indexed read a second per
//! model is all it costs. So a cooldown shared by another server is seen
//! here within a second; this server's own are seen at once. A store that
//! cannot be read or written is logged and otherwise ignored: the
//! fallback keeps its own cooldowns, and the run goes on.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use parlance_model::SharedCooldowns;
use parlance_store::Store;

/// How long what the store said of a model is believed.
const FRESH: Duration = Duration::from_secs(1);

/// Cooldowns kept in a [`Store`] (see the module's doc).
///
/// ```no_run
/// # async fn f(store: parlance_store::Store, models: Vec<std::sync::Arc<dyn parlance_model::Model>>) {
/// use std::sync::Arc;
/// use parlance_model::Fallback;
/// use parlance_runtime::StoreCooldowns;
///
/// let board = Arc::new(StoreCooldowns::new(store));
/// let model = Fallback::new(models).unwrap().shared_cooldowns(board);
/// # }
/// ```
pub struct StoreCooldowns {
    store: Store,
    /// Per model: when the store was last read, and what it said.
    seen: Mutex<HashMap<String, (Instant, Option<SystemTime>)>>,
}

impl StoreCooldowns {
    /// Cooldowns in `store`.
    pub fn new(store: Store) -> StoreCooldowns {
        StoreCooldowns {
            store,
            seen: Mutex::default(),
        }
    }

    fn remember(&self, name: &str, until: Option<SystemTime>) {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), (Instant::now(), until));
    }
}

fn to_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn from_ms(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)
}

impl SharedCooldowns for StoreCooldowns {
    fn until<'a>(&'a self, name: &'a str) -> BoxFuture<'a, Option<SystemTime>> {
        Box::pin(async move {
            let cached = self
                .seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(name)
                .copied();
            if let Some((at, until)) = cached
                && at.elapsed() < FRESH
            {
                return until;
            }
            match self.store.cooldown(name).await {
                Ok(ms) => {
                    let until = ms.map(from_ms);
                    self.remember(name, until);
                    until
                }
                Err(e) => {
                    tracing::warn!(target: "parlance::fallback", model = name, error = %e, "the shared cooldowns could not be read");
                    cached.and_then(|c| c.1)
                }
            }
        })
    }

    fn cool<'a>(&'a self, name: &'a str, until: SystemTime) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.remember(name, Some(until));
            if let Err(e) = self.store.cool(name, to_ms(until)).await {
                tracing::warn!(target: "parlance::fallback", model = name, error = %e, "a cooldown could not be shared");
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_through_milliseconds() {
        let t = UNIX_EPOCH + Duration::from_millis(1_796_428_799_999);
        assert_eq!(from_ms(to_ms(t)), t);
        assert_eq!(from_ms(-5), UNIX_EPOCH);
    }
}
