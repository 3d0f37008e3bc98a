//! Requests read in one API and written for every other (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parlance_fuzz::encode_after_decode(data));
