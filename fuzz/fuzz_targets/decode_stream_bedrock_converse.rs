//! decode ConverseStreams of the `bedrock-converse` wire format: raw AWS
//! event-stream bytes through the transport's frame decoder (see `src/lib.rs`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| parlance_fuzz::decode_event_stream("bedrock-converse", data));
