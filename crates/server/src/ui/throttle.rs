//! Login attempts limited per key (an address, a subject): a token bucket
//! per key in memory, as many attempts as the limit per minute at once,
//! then one more every `60 / limit` seconds. In memory, per server: each
//! server sharing a store limits its own callers (a bucket in the store
//! would make every attempt, wrong ones included, a write).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// Above this many keys, the full buckets (keys that have not tried for a
/// minute or more) are forgotten: an attacker cycling through addresses
/// cannot grow the map without bound.
const MAX_KEYS: usize = 10_000;

/// Attempts per key per minute.
pub struct Throttle {
    per_minute: u32,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl Throttle {
    /// `per_minute` attempts per key per minute; `0` means no limit.
    pub fn per_minute(per_minute: u32) -> Throttle {
        Throttle {
            per_minute,
            buckets: Mutex::default(),
        }
    }

    /// Takes one attempt for `key` now, or says in how many seconds the
    /// next one will be allowed.
    pub fn take(&self, key: &str) -> Result<(), u64> {
        self.take_at(key, Instant::now())
    }

    fn take_at(&self, key: &str, now: Instant) -> Result<(), u64> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let cap = f64::from(self.per_minute);
        let rate = cap / 60.0; // per second
        let level = |(tokens, at): (f64, Instant)| {
            (tokens + now.saturating_duration_since(at).as_secs_f64() * rate).min(cap)
        };
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_KEYS && !buckets.contains_key(key) {
            buckets.retain(|_, b| level(*b) < cap);
        }
        let bucket = buckets.entry(key.to_string()).or_insert((cap, now));
        let tokens = level(*bucket);
        if tokens >= 1.0 {
            *bucket = (tokens - 1.0, now);
            Ok(())
        } else {
            *bucket = (tokens, now);
            Err(((1.0 - tokens) / rate).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_key_gets_its_limit_at_once_then_one_per_interval() {
        let t = Throttle::per_minute(3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(t.take_at("a", t0), Ok(()));
        }
        assert_eq!(t.take_at("a", t0), Err(20), "one every 20 s");
        assert_eq!(t.take_at("b", t0), Ok(()), "another key has its own");
        assert_eq!(t.take_at("a", t0 + Duration::from_secs(15)), Err(5));
        assert_eq!(t.take_at("a", t0 + Duration::from_secs(20)), Ok(()));
        assert!(t.take_at("a", t0 + Duration::from_secs(21)).is_err());
        // A long pause refills to the limit, never above.
        let later = t0 + Duration::from_secs(3600);
        for _ in 0..3 {
            assert_eq!(t.take_at("a", later), Ok(()));
        }
        assert!(t.take_at("a", later).is_err());
    }

    #[test]
    fn zero_means_no_limit() {
        let t = Throttle::per_minute(0);
        let now = Instant::now();
        assert!((0..1000).all(|_| t.take_at("a", now).is_ok()));
    }

    #[test]
    fn forgotten_keys_are_the_full_ones() {
        let t = Throttle::per_minute(1);
        let t0 = Instant::now();
        assert!(t.take_at("busy", t0).is_ok());
        for i in 0..MAX_KEYS {
            let _ = t.take_at(&format!("k{i}"), t0 - Duration::from_secs(120));
        }
        // Adding one more forgets the refilled keys, not the busy one.
        assert!(t.take_at("new", t0).is_ok());
        assert!(t.take_at("busy", t0).is_err(), "still counted");
        assert!(t.buckets.lock().unwrap().len() < 10);
    }
}
