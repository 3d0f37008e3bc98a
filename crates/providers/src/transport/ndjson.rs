//! Newline-delimited JSON framing (Ollama's native API streams this way):
//! one JSON object per line. Lines end with `\n` or `\r\n`; blank lines are
//! skipped; a last line without a newline still counts. A line longer than
//! [`MAX_LINE`] is refused with a malformed-response error instead of
//! growing the buffer without bound (a server that never sends a newline).

use bytes::Bytes;
use futures::{Stream, StreamExt};
use parlance_model::ModelError;

/// The longest line accepted (16 MiB): far above any chunk or final
/// object a model server sends, low enough to stop a runaway line.
pub const MAX_LINE: usize = 16 << 20;

/// Splits bytes arriving in arbitrary chunks into lines.
#[derive(Debug)]
pub struct LineSplitter {
    buf: Vec<u8>,
    max: usize,
}

impl Default for LineSplitter {
    fn default() -> Self {
        LineSplitter::new(MAX_LINE)
    }
}

impl LineSplitter {
    /// A splitter refusing lines longer than `max` bytes.
    pub fn new(max: usize) -> Self {
        LineSplitter {
            buf: Vec::new(),
            max,
        }
    }

    /// Adds a chunk; returns the lines it completed (without their line
    /// ends, blank ones skipped).
    pub fn push(&mut self, chunk: &[u8]) -> Result<Vec<String>, ModelError> {
        let mut lines = Vec::new();
        let mut rest = chunk;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.take(&rest[..i])?;
            if let Some(line) = self.line()? {
                lines.push(line);
            }
            rest = &rest[i + 1..];
        }
        self.take(rest)?;
        Ok(lines)
    }

    /// The stream ended: the last line, if it had no newline.
    pub fn finish(&mut self) -> Result<Option<String>, ModelError> {
        self.line()
    }

    fn take(&mut self, part: &[u8]) -> Result<(), ModelError> {
        if self.buf.len() + part.len() > self.max {
            self.buf.clear();
            return Err(ModelError::MalformedResponse {
                message: format!(
                    "bad NDJSON stream: a line is longer than {} bytes",
                    self.max
                ),
            });
        }
        self.buf.extend_from_slice(part);
        Ok(())
    }

    fn line(&mut self) -> Result<Option<String>, ModelError> {
        let mut raw = std::mem::take(&mut self.buf);
        if raw.last() == Some(&b'\r') {
            raw.pop();
        }
        let text = String::from_utf8(raw).map_err(|e| ModelError::MalformedResponse {
            message: format!("bad NDJSON stream: a line is not UTF-8: {e}"),
        })?;
        Ok((!text.trim().is_empty()).then_some(text))
    }
}

/// The lines of a byte stream. A transport error ends it (after the lines
/// before it); at the end, an unterminated last line is yielded too.
pub fn lines<S>(bytes: S, max: usize) -> impl Stream<Item = Result<String, ModelError>> + Send
where
    S: Stream<Item = Result<Bytes, ModelError>> + Send + Unpin,
{
    struct State<S> {
        bytes: S,
        split: LineSplitter,
        ready: std::collections::VecDeque<String>,
        done: bool,
    }
    let state = State {
        bytes,
        split: LineSplitter::new(max),
        ready: Default::default(),
        done: false,
    };
    futures::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(line) = s.ready.pop_front() {
                return Some((Ok(line), s));
            }
            if s.done {
                return None;
            }
            match s.bytes.next().await {
                Some(Ok(chunk)) => match s.split.push(&chunk) {
                    Ok(lines) => s.ready.extend(lines),
                    Err(e) => {
                        s.done = true;
                        return Some((Err(e), s));
                    }
                },
                Some(Err(e)) => {
                    s.done = true;
                    return Some((Err(e), s));
                }
                None => {
                    s.done = true;
                    match s.split.finish() {
                        Ok(Some(line)) => return Some((Ok(line), s)),
                        Ok(None) => return None,
                        Err(e) => return Some((Err(e), s)),
                    }
                }
            }
        }
    })
}

/// Splits recorded NDJSON text into `(event, data)` pairs (the event name
/// is always empty), as the transport would.
pub fn parse_ndjson(text: &str) -> Vec<(String, String)> {
    let mut split = LineSplitter::new(usize::MAX);
    let mut lines = split.push(text.as_bytes()).unwrap_or_default();
    lines.extend(split.finish().ok().flatten());
    lines.into_iter().map(|l| (String::new(), l)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_all(chunks: &[&[u8]], max: usize) -> Result<Vec<String>, ModelError> {
        let mut s = LineSplitter::new(max);
        let mut out = Vec::new();
        for c in chunks {
            out.extend(s.push(c)?);
        }
        out.extend(s.finish()?);
        Ok(out)
    }

    #[test]
    fn lines_split_across_chunks_crlf_blank_lines_and_a_last_line_without_newline() {
        let got = split_all(
            &[b"{\"a\":", b"1}\r", b"\n\n  \r\n{\"b\":2}\n{\"c\"", b":3}"],
            1024,
        )
        .unwrap();
        assert_eq!(got, vec!["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]);
    }

    #[test]
    fn every_split_point_gives_the_same_lines() {
        let text = b"{\"x\":\"\xc3\xa9\"}\r\n\n{\"y\":2}\n";
        for i in 0..=text.len() {
            let got = split_all(&[&text[..i], &text[i..]], 1024).unwrap();
            assert_eq!(got, vec!["{\"x\":\"é\"}", "{\"y\":2}"], "split at {i}");
        }
    }

    #[test]
    fn an_over_long_line_is_a_malformed_response_even_without_a_newline() {
        let err = split_all(&[b"0123456789", b"0123456789"], 16).unwrap_err();
        assert!(
            matches!(&err, ModelError::MalformedResponse { message } if message.contains("longer than 16 bytes")),
            "{err:?}"
        );
        // At the limit is fine.
        assert_eq!(split_all(&[b"0123456789abcdef\n"], 16).unwrap().len(), 1);
    }

    #[test]
    fn bad_utf8_is_named() {
        let err = split_all(&[b"{\"a\":\"\xff\"}\n"], 64).unwrap_err();
        assert!(err.to_string().contains("not UTF-8"), "{err}");
    }

    #[test]
    fn parse_ndjson_matches_the_splitter() {
        assert_eq!(
            parse_ndjson("{\"a\":1}\r\n\n{\"b\":2}"),
            vec![
                (String::new(), "{\"a\":1}".to_string()),
                (String::new(), "{\"b\":2}".to_string())
            ]
        );
    }

    #[test]
    fn the_stream_yields_lines_then_the_transport_error() {
        let chunks: Vec<Result<Bytes, ModelError>> = vec![
            Ok(Bytes::from_static(b"{\"a\":1}\n{\"b\"")),
            Err(ModelError::Network {
                message: "cut".into(),
            }),
        ];
        let got: Vec<_> =
            futures::executor::block_on(lines(futures::stream::iter(chunks), 64).collect());
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].as_ref().unwrap(), "{\"a\":1}");
        assert!(matches!(got[1], Err(ModelError::Network { .. })));
    }
}
