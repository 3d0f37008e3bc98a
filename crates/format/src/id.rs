//! Ids for what Parlance makes: runs, threads, messages, tool calls.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh id with a prefix (`run_…`, `thread_…`, `call_…`): the time in
/// nanoseconds, the process id and a counter, in hex, so that ids sort by
/// creation and never collide between processes or within one.
pub fn new_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!(
        "{prefix}_{nanos:016x}{:05x}{:04x}",
        std::process::id() & 0xfffff,
        n & 0xffff
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_unique_and_sort_by_creation() {
        let ids: Vec<String> = (0..1000).map(|_| super::new_id("run")).collect();
        assert!(ids.iter().all(|id| id.starts_with("run_")));
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
    }
}
