//! The transport's NDJSON framing over real HTTP on 127.0.0.1: lines split
//! across chunks, `\r\n` and blank lines, a last line without a newline, a
//! connection cut mid-line, an over-long line. A tiny decoder stands in
//! for a provider's: each line one JSON object `{"text": …}` or
//! `{"done": true}`.

mod common;

use std::time::Duration;

use futures::StreamExt;
use parlance_format::Message;
use parlance_model::{ModelError, StreamEvent};
use parlance_providers::Transport;
use parlance_providers::transport::{Framing, HttpRequest, StreamDecoder, ndjson};
use parlance_testkit::replay::{ReplayServer, Reply};

#[derive(Default)]
struct Lines {
    text: String,
}

impl StreamDecoder for Lines {
    fn event(&mut self, name: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        assert_eq!(name, "", "NDJSON lines have no event name");
        let v: serde_json::Value =
            serde_json::from_str(data).map_err(|e| ModelError::MalformedResponse {
                message: format!("line {data:?}: {e}"),
            })?;
        if v["done"] == true {
            return Ok(vec![StreamEvent::Done(Message::assistant(
                self.text.clone(),
            ))]);
        }
        let t = v["text"].as_str().unwrap_or_default().to_string();
        self.text.push_str(&t);
        Ok(vec![StreamEvent::TextDelta { index: 0, text: t }])
    }

    fn end(&mut self) -> Result<Vec<StreamEvent>, ModelError> {
        Err(ModelError::MalformedResponse {
            message: "truncated".into(),
        })
    }
}

fn transport() -> Transport {
    Transport::new(common::http::quick_retries()).unwrap()
}

fn classify(status: u16, _: &[u8], _: Option<Duration>) -> ModelError {
    ModelError::Server {
        status,
        message: "failed".into(),
    }
}

async fn run(server: &ReplayServer) -> (Vec<String>, Result<Message, ModelError>) {
    let req = HttpRequest::new(format!("{}/api/chat", server.url), b"{}".to_vec());
    let mut s = transport().post_stream(req, classify, Framing::NdJson, Lines::default);
    let mut texts = Vec::new();
    while let Some(e) = s.next().await {
        match e {
            Ok(StreamEvent::TextDelta { text, .. }) => texts.push(text),
            Ok(StreamEvent::Done(m)) => return (texts, Ok(m)),
            Ok(_) => {}
            Err(e) => return (texts, Err(e)),
        }
    }
    (
        texts,
        Err(ModelError::Network {
            message: "no Done".into(),
        }),
    )
}

fn chunks(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn lines_split_across_chunks_with_crlf_and_blank_lines_decode() {
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: chunks(&[
            "{\"text\":\"Hel",
            "lo\"}\r\n\r\n{\"text\":",
            "\", world\"}\n\n",
            "{\"done\":true}",
        ]),
        cut: false,
    }])
    .await;
    let (texts, m) = run(&server).await;
    assert_eq!(texts, vec!["Hello", ", world"]);
    assert_eq!(m.unwrap(), Message::assistant("Hello, world"));
}

#[tokio::test]
async fn a_connection_cut_mid_line_is_a_network_error_after_output_and_retried_before() {
    // After output: the error ends the stream, no retry.
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: chunks(&["{\"text\":\"a\"}\n{\"text\":\"b"]),
        cut: true,
    }])
    .await;
    let (texts, m) = run(&server).await;
    assert_eq!(texts, vec!["a"]);
    assert!(matches!(m, Err(ModelError::Network { .. })), "{m:?}");
    assert_eq!(server.received().len(), 1);

    // Before any output: retried, and the second answer is used.
    let server = ReplayServer::start(vec![
        Reply::Sse {
            chunks: chunks(&["{\"te"]),
            cut: true,
        },
        Reply::Sse {
            chunks: chunks(&["{\"text\":\"ok\"}\n{\"done\":true}\n"]),
            cut: false,
        },
    ])
    .await;
    let (_, m) = run(&server).await;
    assert_eq!(m.unwrap(), Message::assistant("ok"));
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn a_stream_ending_cleanly_without_the_final_object_is_a_network_error() {
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: chunks(&["{\"text\":\"a\"}\n"]),
        cut: false,
    }])
    .await;
    let (_, m) = run(&server).await;
    assert!(
        matches!(&m, Err(ModelError::Network { message }) if message.contains("closed early")),
        "{m:?}"
    );
}

#[tokio::test]
async fn an_over_long_line_is_a_malformed_response_not_unbounded_memory() {
    let big = "x".repeat(ndjson::MAX_LINE / 4);
    let server = ReplayServer::start(vec![Reply::Sse {
        chunks: vec![
            "{\"text\":\"a\"}\n".to_string(),
            big.clone(),
            big.clone(),
            big.clone(),
            big.clone(),
            big,
        ],
        cut: false,
    }])
    .await;
    let (texts, m) = run(&server).await;
    assert_eq!(texts, vec!["a"]);
    assert!(
        matches!(&m, Err(ModelError::MalformedResponse { message }) if message.contains("longer than")),
        "{m:?}"
    );
}

#[test]
fn recorded_text_is_framed_like_the_transport_frames_it() {
    use parlance_providers::transport::parse_stream;
    let text = "{\"a\":1}\r\n\n{\"b\":2}";
    assert_eq!(
        parse_stream(Framing::NdJson, text),
        vec![
            (String::new(), "{\"a\":1}".to_string()),
            (String::new(), "{\"b\":2}".to_string())
        ]
    );
    assert_eq!(
        parse_stream(Framing::Sse, "data: {\"a\":1}\n\n"),
        vec![("message".to_string(), "{\"a\":1}".to_string())]
    );
}
