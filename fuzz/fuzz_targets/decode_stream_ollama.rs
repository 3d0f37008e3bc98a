//! decode streams of the `ollama` wire format (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parlance_fuzz::decode_stream("ollama", data));
