//! What the peer and the mock share: peerbench's task (prompt, tool, the
//! orders and their statuses) and process figures (CPU time, peak RSS).
//!
//! The contract is peerbench's (see `bench/peerbench/README.md`); these
//! programs are benchmarks, not part of the product, and are never
//! published.

/// The system prompt every peer uses.
pub const SYSTEM: &str =
    "You are an order-status assistant. Use the get_order tool to look up orders.";
/// The user prompt every peer sends.
pub const PROMPT: &str = "What is the status of my orders A-1001, A-1002 and A-1003?";
/// The model name sent (the mock ignores it).
pub const MODEL: &str = "gpt-4o-mini";
/// The tool's description.
pub const TOOL_DESCRIPTION: &str = "Look up one order by its id and return its status.";
/// The order ids a correct answer names.
pub const ORDERS: [&str; 3] = ["A-1001", "A-1002", "A-1003"];

/// The status of an order, as the task's tool reports it.
pub fn order_status(order_id: &str) -> &'static str {
    match order_id {
        "A-1001" => "shipped",
        "A-1002" => "processing",
        "A-1003" => "delivered",
        _ => "unknown",
    }
}

/// Whether an answer names every order.
pub fn answer_ok(text: &str) -> bool {
    ORDERS.iter().all(|id| text.contains(id))
}

fn rusage() -> libc::rusage {
    // SAFETY: getrusage only writes the struct it is given; a zeroed
    // rusage is a valid value of it.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    }
}

/// CPU time of this process so far (user + system, all threads), seconds.
pub fn cpu_seconds() -> f64 {
    let ru = rusage();
    let secs = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec;
    let micros = ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
    secs as f64 + micros as f64 / 1e6
}

/// Peak resident set size of this process so far, KiB.
pub fn max_rss_kb() -> i64 {
    rusage().ru_maxrss
}

/// Resident set size now, KiB (from /proc/self/statm; 0 where there is none).
pub fn rss_now_kb() -> i64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<i64>().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages * page as i64 / 1024
}

/// Raises this process's open-file limit to its hard limit: ten thousand
/// runs in flight hold ten thousand connections.
pub fn raise_open_files_limit() {
    // SAFETY: getrlimit/setrlimit only read and write the struct given.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// The `main` of a serving program: `serve` on a multi-threaded runtime,
/// its error on stderr under the program's `name`.
pub fn serve_main(
    name: &str,
    serve: impl std::future::Future<Output = std::io::Result<()>>,
) -> std::process::ExitCode {
    let served = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .and_then(|rt| rt.block_on(serve));
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The `p`th percentile of sorted samples (nearest rank); 0 for none.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let k = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[k.min(sorted.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_the_nearest_rank() {
        let s = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile(&s, 0.0), 1.0);
        assert_eq!(percentile(&s, 50.0), 3.0);
        assert_eq!(percentile(&s, 99.0), 5.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }

    #[test]
    fn an_answer_must_name_every_order() {
        assert!(answer_ok(
            "A-1001 shipped, A-1002 processing, A-1003 delivered"
        ));
        assert!(!answer_ok("A-1001 shipped, A-1003 delivered"));
    }

    #[test]
    fn figures_of_this_process_are_plausible() {
        assert!(max_rss_kb() > 0);
        assert!(rss_now_kb() > 0);
        assert!(cpu_seconds() >= 0.0);
    }
}
