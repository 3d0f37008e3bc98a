//! A replay server on 127.0.0.1: answers each request with the next
//! scripted reply (a full response, an SSE stream, or a stream cut off
//! mid-way) and records what it was sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A complete response.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// `200 text/event-stream`, written chunk by chunk; when `cut`, the
    /// connection is dropped before the stream is finished.
    Sse { chunks: Vec<String>, cut: bool },
    /// `200 application/vnd.amazon.eventstream` (AWS binary event-stream
    /// messages), written chunk by chunk; when `cut`, the connection is
    /// dropped before the stream is finished.
    Binary { chunks: Vec<Vec<u8>>, cut: bool },
    /// Another reply, after a delay (milliseconds).
    Delayed(u64, Box<Reply>),
    /// A stream (`Sse`) with a pause (milliseconds) before each chunk
    /// after the first: a model that answers slowly.
    Paced(u64, Box<Reply>),
}

impl Reply {
    pub fn json(status: u16, body: &Value) -> Reply {
        Reply::Full {
            status,
            headers: vec![],
            body: body.to_string(),
        }
    }

    pub fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Full {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.into(), value.into()));
                Reply::Full {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }
}

/// What the server received.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The body's bytes as sent.
    pub raw_body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Clone)]
pub struct ReplayServer {
    pub url: String,
    replies: Arc<Mutex<VecDeque<Reply>>>,
    received: Arc<Mutex<Vec<Received>>>,
}

impl ReplayServer {
    pub async fn start(replies: Vec<Reply>) -> ReplayServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = ReplayServer {
            url,
            replies: Arc::new(Mutex::new(replies.into())),
            received: Arc::default(),
        };
        let s = server.clone();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let s = s.clone();
                tokio::spawn(async move { s.serve(conn).await });
            }
        });
        server
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    async fn serve(&self, mut conn: TcpStream) {
        // Read the head, then the body by content-length.
        let mut buf = Vec::new();
        let mut tmp = [0u8; 8192];
        let head_end = loop {
            let n = match conn.read(&mut tmp).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            buf.extend_from_slice(&tmp[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
        let mut lines = head.split("\r\n");
        let path = lines
            .next()
            .unwrap_or("")
            .split(' ')
            .nth(1)
            .unwrap_or("")
            .to_string();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
            .collect();
        let len: usize = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let n = match conn.read(&mut tmp).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            buf.extend_from_slice(&tmp[..n]);
        }
        let body = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
        self.received.lock().unwrap().push(Received {
            path,
            headers,
            body,
            raw_body: buf[head_end..head_end + len].to_vec(),
        });
        let reply = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Reply::Full {
                status: 500,
                headers: vec![],
                body: "{\"error\": {\"message\": \"the replay script is exhausted\"}}".into(),
            });
        let reply = match reply {
            Reply::Delayed(ms, inner) => {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                *inner
            }
            other => other,
        };
        let (pace, reply) = match reply {
            Reply::Paced(ms, inner) => (std::time::Duration::from_millis(ms), *inner),
            other => (std::time::Duration::ZERO, other),
        };
        match reply {
            Reply::Delayed(..) | Reply::Paced(..) => unreachable!("unwrapped above"),
            Reply::Full {
                status,
                headers,
                body,
            } => {
                let mut out = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                    body.len()
                );
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                out.push_str(&body);
                let _ = conn.write_all(out.as_bytes()).await;
            }
            Reply::Sse { chunks, cut } => {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
                if conn.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for (i, c) in chunks.into_iter().enumerate() {
                    if i > 0 && !pace.is_zero() {
                        tokio::time::sleep(pace).await;
                    }
                    let frame = format!("{:x}\r\n{c}\r\n", c.len());
                    if conn.write_all(frame.as_bytes()).await.is_err() {
                        return;
                    }
                    let _ = conn.flush().await;
                }
                if !cut {
                    let _ = conn.write_all(b"0\r\n\r\n").await;
                }
            }
            Reply::Binary { chunks, cut } => {
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/vnd.amazon.eventstream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n";
                if conn.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for c in chunks {
                    let mut frame = format!("{:x}\r\n", c.len()).into_bytes();
                    frame.extend_from_slice(&c);
                    frame.extend_from_slice(b"\r\n");
                    if conn.write_all(&frame).await.is_err() {
                        return;
                    }
                    let _ = conn.flush().await;
                }
                if !cut {
                    let _ = conn.write_all(b"0\r\n\r\n").await;
                }
            }
        }
        let _ = conn.shutdown().await;
    }
}

/// SSE text for `(event, data)` pairs, one frame per pair.
pub fn sse_frames(events: &[(&str, String)]) -> Vec<String> {
    events
        .iter()
        .map(|(name, data)| {
            if name.is_empty() {
                format!("data: {data}\n\n")
            } else {
                format!("event: {name}\ndata: {data}\n\n")
            }
        })
        .collect()
}
