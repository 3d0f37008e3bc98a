//! a failed answer's headers read by the transport and acted on by the retry policy (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parlance_fuzz::retry_headers(data));
