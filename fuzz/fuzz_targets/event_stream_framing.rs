//! AWS event-stream framing and its CRCs, in one go and chunk by chunk (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parlance_fuzz::event_stream_framing(data));
