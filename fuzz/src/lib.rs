//! What every fuzz target checks, beyond "no panic, no abort, no hang":
//!
//! - a decoder that accepts an input gives what the canonical reader
//!   accepts (a message written and read back is the same message);
//! - a request read from a provider's body can be written for every API
//!   (or is refused with an error), and what Parlance writes for an API,
//!   Parlance can read back;
//! - the canonical readers read back exactly what they write;
//! - argument validation: `is_valid` agrees with `problems`;
//! - the transport's reading of a failed answer (its headers, each
//!   provider's error body) never makes the retry policy wait longer than
//!   its longest wait, and a longer wait asked for is the caller's error,
//!   naming it;
//! - AWS event-stream bytes cut into messages in one go and as they
//!   arrive, in chunks of any size, give the same messages.
//!
//! A crash found here becomes a test in the normal suite
//! (`crates/providers/tests/robustness.rs`, `crates/format/tests/limits.rs`).

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderMap, HeaderName, HeaderValue};
use parlance_format::{Conversation, Decision, Message, Response};
use parlance_model::{ModelError, ModelRequest, RequestDocument};
use parlance_providers::transport::aws_eventstream::{frames, parse_event_stream};
use parlance_providers::transport::{
    parse_stream, retry_after_from_headers, should_retry_from_headers,
};
use parlance_providers::{RetryPolicy, WIRE_FORMATS, WireFormat, wire_format};
use serde_json::Value;

fn format(name: &str) -> &'static WireFormat {
    wire_format(name).expect("a registered wire format")
}

fn json(data: &[u8]) -> Option<Value> {
    serde_json::from_slice(data).ok()
}

/// A decoded message must be canonical: written and read back, the same.
pub fn check_canonical(m: &Message, what: &str) {
    let written = parlance_format::to_json(m);
    match Message::from_json_str(&written) {
        Ok(back) => assert_eq!(&back, m, "{what}: read back differently: {written}"),
        Err(e) => {
            panic!("{what}: the canonical reader refuses what a decoder gave: {e}\n{written}")
        }
    }
}

/// Writes a request for every API; writing for `same` must read back.
fn encode_everywhere(req: &ModelRequest, same: Option<&WireFormat>) {
    for to in WIRE_FORMATS {
        let Ok(enc) = (to.encode_request)(req, "m", false) else {
            continue;
        };
        if same.is_some_and(|s| s.name == to.name) {
            if let Err(e) = (to.decode_request)(&enc.body) {
                panic!(
                    "{}: Parlance cannot read back the request it wrote: {e}\n{}",
                    to.name, enc.body
                );
            }
        }
    }
}

/// A provider's request body.
pub fn decode_request(name: &str, data: &[u8]) {
    let f = format(name);
    let Some(v) = json(data) else { return };
    let Ok(d) = (f.decode_request)(&v) else {
        return;
    };
    for m in &d.request.messages {
        check_canonical(m, name);
    }
    // The canonical document reads back the same.
    let doc = d.document();
    let back = RequestDocument::from_value(&doc.to_value())
        .unwrap_or_else(|e| panic!("{name}: the request document does not read back: {e}"));
    assert_eq!(
        back, doc,
        "{name}: the request document reads back differently"
    );
    encode_everywhere(&d.request, Some(f));
}

/// A provider's response body.
pub fn decode_response(name: &str, data: &[u8]) {
    let f = format(name);
    let Some(v) = json(data) else { return };
    if let Ok(m) = (f.decode_response)(&v) {
        check_canonical(&m, name);
        append_and_encode(m);
    }
}

/// A provider's stream, as raw text in its framing (SSE, or NDJSON lines).
pub fn decode_stream(name: &str, data: &[u8]) {
    let f = format(name);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let events = parse_stream(f.endpoint.framing, text);
    if let Ok((_, m)) = parlance_providers::decode_stream(f, &events) {
        check_canonical(&m, name);
        append_and_encode(m);
    }
}

/// A provider's stream as raw AWS event-stream bytes (Bedrock's
/// ConverseStream): cut into messages by the transport's frame decoder
/// (`aws-smithy-eventstream`), then decoded.
pub fn decode_event_stream(name: &str, data: &[u8]) {
    let f = format(name);
    let Ok(events) = parse_event_stream(data) else {
        return;
    };
    if let Ok((_, m)) = parlance_providers::decode_stream(f, &events) {
        check_canonical(&m, name);
        append_and_encode(m);
    }
}

/// A decoded answer goes back in a conversation, to every API.
fn append_and_encode(answer: Message) {
    let req = ModelRequest {
        messages: vec![Message::user("q"), answer],
        ..ModelRequest::default()
    };
    encode_everywhere(&req, None);
}

/// Any request body, read in one format (chosen by the first byte) and
/// written for every other: encoding after decoding.
pub fn encode_after_decode(data: &[u8]) {
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    let from = WIRE_FORMATS[*first as usize % WIRE_FORMATS.len()];
    let Some(v) = json(rest) else { return };
    if let Ok(d) = (from.decode_request)(&v) {
        encode_everywhere(&d.request, Some(from));
    }
}

fn reads_back<T: PartialEq + std::fmt::Debug>(
    value: &T,
    written: String,
    read: impl Fn(&str) -> Result<T, parlance_format::FormatError>,
) {
    match read(&written) {
        Ok(back) => assert_eq!(&back, value, "read back differently: {written}"),
        Err(e) => panic!("what was written does not read back: {e}\n{written}"),
    }
}

/// Every canonical reader on the same text: what it accepts, written
/// and read back, is the same.
pub fn canonical_reader(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(c) = parlance_format::parse_conversation(text) {
        reads_back(&c, parlance_format::to_json(&c), |t| {
            Conversation::from_json_str(t)
        });
    }
    if let Ok(m) = Message::from_json_str(text) {
        reads_back(&m, parlance_format::to_json(&m), Message::from_json_str);
    }
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return;
    };
    if let Ok(r) = Response::from_value(&v) {
        reads_back(&r, parlance_format::to_json(&r), |t| {
            Response::from_value(&serde_json::from_str(t).expect("we wrote JSON"))
        });
    }
    if let Ok(d) = Decision::from_value(&v) {
        reads_back(&d, parlance_format::to_json(&d), |t| {
            Decision::from_value(&serde_json::from_str(t).expect("we wrote JSON"))
        });
    }
    if let Ok(b) = parlance_format::Block::from_value(&v) {
        reads_back(&b, parlance_format::to_json(&b), |t| {
            parlance_format::Block::from_value(&serde_json::from_str(t).expect("we wrote JSON"))
        });
    }
}

/// The canonical request document.
pub fn request_document(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(d) = RequestDocument::from_json_str(text) {
        reads_back(&d, d.to_value().to_string(), RequestDocument::from_json_str);
        encode_everywhere(&d.request, None);
    }
}

/// Argument validation: a schema and arguments, split at the first NUL.
pub fn arguments(data: &[u8]) {
    let Some(at) = data.iter().position(|b| *b == 0) else {
        return;
    };
    let (Some(schema), Some(args)) = (json(&data[..at]), json(&data[at + 1..])) else {
        return;
    };
    let Ok(v) = parlance_agent::ArgValidator::new("f", &schema) else {
        return;
    };
    let valid = v.is_valid(&args);
    let problems = v.problems(&args);
    assert_eq!(
        valid,
        problems.is_empty(),
        "is_valid and problems disagree: {problems:?}"
    );
}

/// What the retry policy makes of `err` after the first attempt: a wait
/// no longer than its longest, or the error for the caller, of the same
/// kind, naming a wait it will not take.
fn check_policy(err: ModelError, hint: Option<bool>) {
    let policy = RetryPolicy::default();
    let max = policy.max_retry_after;
    let asked = err.retry_after();
    match policy.next(0, err.clone(), hint) {
        Ok(wait) => assert!(
            wait <= max,
            "a wait of {wait:?} (at most {max:?}) for {err:?}"
        ),
        Err(e) => {
            assert_eq!(e.kind(), err.kind(), "{e:?} for {err:?}");
            if asked.is_some_and(|d| d > max) {
                assert!(e.to_string().contains("asked to wait"), "{e}");
            }
        }
    }
}

/// A failed answer's headers, as lines `name: value` (the lines that are
/// not a header are skipped): the transport reads `retry-after-ms`,
/// `retry-after` and `x-should-retry` among the others (rate-limit ones,
/// content lengths) and the retry policy acts on them.
pub fn retry_headers(data: &[u8]) {
    let mut headers = HeaderMap::new();
    for line in data.split(|b| *b == b'\n') {
        let Some(at) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(line[..at].trim_ascii()),
            HeaderValue::from_bytes(line[at + 1..].trim_ascii()),
        ) else {
            continue;
        };
        headers.append(name, value);
    }
    let retry_after = retry_after_from_headers(&headers);
    let hint = should_retry_from_headers(&headers);
    for err in [
        ModelError::RateLimited {
            message: "slow down".into(),
            retry_after,
        },
        ModelError::Overloaded {
            message: "busy".into(),
            retry_after,
        },
    ] {
        check_policy(err, hint);
    }
}

/// A failed answer to one provider's classifier: the first byte picks
/// the wire format (its top bit: a `retry-after` header of the longest
/// wait came with it), the next two are the HTTP status, the rest is the
/// body.
pub fn classify_error(data: &[u8]) {
    let [pick, hi, lo, body @ ..] = data else {
        return;
    };
    let format = WIRE_FORMATS[usize::from(*pick & 0x7f) % WIRE_FORMATS.len()];
    let header = (*pick & 0x80 != 0).then_some(Duration::MAX);
    let err = (format.classify)(u16::from_be_bytes([*hi, *lo]), body, header);
    assert!(!err.to_string().is_empty());
    check_policy(err, None);
}

/// Sets both CRCs of each whole message in `bytes` (prelude, then the
/// message), so that the fuzzer's changes reach the headers and payload
/// behind them.
fn fix_crcs(bytes: &mut [u8]) {
    let mut at = 0;
    while bytes.len() >= at + 16 {
        let total = u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        if total < 16 || bytes.len() - at < total {
            return;
        }
        let m = &mut bytes[at..at + total];
        let prelude = crc32fast::hash(&m[..8]);
        m[8..12].copy_from_slice(&prelude.to_be_bytes());
        let message = crc32fast::hash(&m[..total - 4]);
        m[total - 4..].copy_from_slice(&message.to_be_bytes());
        at += total;
    }
}

/// AWS event-stream framing and its CRCs: the first byte's lowest bit
/// says to set the CRCs right first, its other bits the size of the
/// chunks the bytes arrive in (1 to 128). Cut in one go or as they
/// arrive, the same messages come out, and bytes that are not whole,
/// good messages are an error both ways.
pub fn event_stream_framing(data: &[u8]) {
    let [mode, rest @ ..] = data else { return };
    let mut bytes = rest.to_vec();
    if mode & 1 == 1 {
        fix_crcs(&mut bytes);
    }
    let whole = parse_event_stream(&bytes);
    let chunk = usize::from(mode >> 1) + 1;
    let chunks: Vec<Result<Bytes, ModelError>> = bytes
        .chunks(chunk)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let arrived: Vec<_> =
        futures::executor::block_on(frames(futures::stream::iter(chunks)).collect());
    match whole {
        Ok(events) => {
            let got: Vec<_> = arrived
                .into_iter()
                .collect::<Result<_, _>>()
                .unwrap_or_else(|e| panic!("whole messages, yet an error as they arrive: {e}"));
            assert_eq!(got, events, "cut in {chunk}-byte chunks");
        }
        // The transport stops at the first error, as the whole reading does.
        Err(e) => assert!(
            arrived.iter().any(Result::is_err),
            "refused whole ({e}), yet read as they arrive: {arrived:?}"
        ),
    }
}
