//! AWS event-stream framing (`application/vnd.amazon.eventstream`, the
//! binary framing of Bedrock's ConverseStream): the byte stream cut into
//! messages, each decoded (prelude, headers, payload, both CRCs checked) by
//! `aws-smithy-eventstream`, and handed to a [`StreamDecoder`] as
//! `(name, payload)`:
//!
//! - `:message-type: event` → the `:event-type` header and the JSON payload;
//! - `:message-type: exception` → the `:exception-type` header (a member of
//!   the API's stream union, `modelStreamErrorException`...) and the payload;
//! - `:message-type: error` → `":error"` and `{"code", "message"}` from the
//!   `:error-code`/`:error-message` headers.
//!
//! A message's length is read from its prelude before any of it is kept:
//! one longer than [`MAX_MESSAGE`] is refused rather than buffered.
//!
//! [`StreamDecoder`]: super::StreamDecoder

use aws_smithy_eventstream::frame::read_message_from;
use aws_smithy_types::event_stream::{HeaderValue, Message};
use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use parlance_model::ModelError;

/// The longest message accepted: the event-stream format's own limit
/// (16 MiB of payload plus 128 KiB of headers).
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024 + 128 * 1024;

fn malformed(message: String) -> ModelError {
    ModelError::MalformedResponse { message }
}

fn header<'a>(m: &'a Message, name: &str) -> Option<&'a str> {
    m.headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| match h.value() {
            HeaderValue::String(s) => Some(s.as_str()),
            _ => None,
        })
}

/// One decoded message → `(name, payload text)`.
pub fn message_event(m: &Message) -> Result<(String, String), ModelError> {
    let payload = std::str::from_utf8(m.payload())
        .map_err(|_| malformed("event-stream message: the payload is not UTF-8".into()))?;
    let need = |name: &str| {
        header(m, name).ok_or_else(|| malformed(format!("event-stream message: no {name} header")))
    };
    match header(m, ":message-type").unwrap_or("event") {
        "event" => Ok((need(":event-type")?.to_string(), payload.to_string())),
        "exception" => Ok((need(":exception-type")?.to_string(), payload.to_string())),
        "error" => Ok((
            ":error".to_string(),
            serde_json::json!({
                "code": header(m, ":error-code").unwrap_or("error"),
                "message": header(m, ":error-message").unwrap_or(""),
            })
            .to_string(),
        )),
        other => Err(malformed(format!(
            "event-stream message: unknown :message-type {other:?}"
        ))),
    }
}

/// Cuts the first whole message off `buf`, if one is there.
fn next_message(buf: &mut BytesMut) -> Result<Option<Message>, ModelError> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let total = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    if total > MAX_MESSAGE {
        return Err(malformed(format!(
            "event-stream message of {total} bytes (the limit is {MAX_MESSAGE})"
        )));
    }
    if buf.len() < total.max(16) {
        return Ok(None);
    }
    let frame = buf.split_to(total.max(16)).freeze();
    read_message_from(frame)
        .map(Some)
        .map_err(|e| malformed(format!("bad event-stream message: {e}")))
}

/// A byte stream → its messages as `(name, payload)` pairs. Bytes left
/// over when the stream ends are a message cut short: an error.
pub fn frames<S>(bytes: S) -> impl Stream<Item = Result<(String, String), ModelError>> + Send
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send + Unpin + 'static,
{
    futures::stream::unfold(
        (bytes, BytesMut::new(), false),
        |(mut bytes, mut buf, failed)| async move {
            if failed {
                return None;
            }
            loop {
                match next_message(&mut buf) {
                    Ok(Some(m)) => return Some((message_event(&m), (bytes, buf, false))),
                    Ok(None) => {}
                    Err(e) => return Some((Err(e), (bytes, buf, true))),
                }
                match bytes.next().await {
                    Some(Ok(chunk)) => buf.extend_from_slice(&chunk),
                    Some(Err(e)) => return Some((Err(e), (bytes, buf, true))),
                    None if buf.is_empty() => return None,
                    None => {
                        let n = buf.len();
                        return Some((
                            Err(ModelError::Network {
                                message: format!(
                                    "the connection closed in the middle of an event-stream message ({n} bytes of it)"
                                ),
                            }),
                            (bytes, buf, true),
                        ));
                    }
                }
            }
        },
    )
}

/// Splits recorded event-stream bytes into `(name, payload)` pairs, as the
/// transport would (for tests, fuzzing and `parlance convert`).
pub fn parse_event_stream(bytes: &[u8]) -> Result<Vec<(String, String)>, ModelError> {
    let mut buf = BytesMut::from(bytes);
    let mut out = Vec::new();
    while let Some(m) = next_message(&mut buf)? {
        out.push(message_event(&m)?);
    }
    if !buf.is_empty() {
        return Err(malformed(format!(
            "{} bytes after the last whole event-stream message",
            buf.len()
        )));
    }
    Ok(out)
}
