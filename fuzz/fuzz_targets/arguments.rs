//! The arguments target (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parlance_fuzz::arguments(data));
