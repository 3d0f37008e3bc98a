//! a failed answer (status and body) to each provider's error classifier (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parlance_fuzz::classify_error(data));
