//! `parlance model pull --url` against a loopback file server that cuts
//! connections mid-way, refuses, or cannot resume: the real binary, a
//! temporary model cache.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the server does with one request.
#[derive(Debug, Clone, Copy)]
enum Act {
    /// Answers the request (honouring `Range`) but closes the connection
    /// after this many body bytes.
    Cut(usize),
    /// Answers it whole (honouring `Range`).
    Full,
    /// Answers 200 with the whole file whatever the `Range`.
    IgnoreRange,
    /// Answers this status with no body.
    Status(u16),
    /// Answers 206 with the part one byte after the one asked for.
    WrongStart,
    /// Answers the part asked for, chunked, but ends it cleanly after this
    /// many bytes.
    ChunkedShort(usize),
}

struct FileServer {
    url: String,
    /// The `Range` header of each request (empty when none).
    ranges: Arc<Mutex<Vec<String>>>,
}

fn content() -> Vec<u8> {
    let mut v = b"GGUF\x03\x00\x00\x00".to_vec();
    v.extend((0..3_000_000u32).map(|i| (i.wrapping_mul(7) ^ (i >> 11)) as u8));
    v
}

fn sha256(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}

/// Serves `body` on 127.0.0.1 following `script`, one act per request (the
/// last one repeats).
async fn serve(body: Vec<u8>, script: Vec<Act>) -> FileServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://{}/models/tiny-model.gguf",
        listener.local_addr().unwrap()
    );
    let ranges = Arc::new(Mutex::new(Vec::new()));
    let seen = ranges.clone();
    let body = Arc::new(body);
    tokio::spawn(async move {
        let mut n = 0;
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            let act = script[n.min(script.len() - 1)];
            n += 1;
            let body = body.clone();
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut req = Vec::new();
                let mut buf = [0u8; 1024];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    let k = sock.read(&mut buf).await.unwrap();
                    if k == 0 {
                        return;
                    }
                    req.extend(&buf[..k]);
                }
                let head = String::from_utf8_lossy(&req).to_ascii_lowercase();
                let range = head
                    .lines()
                    .find_map(|l| l.strip_prefix("range: "))
                    .unwrap_or("")
                    .trim()
                    .to_string();
                seen.lock().unwrap().push(range.clone());
                let start: usize = range
                    .strip_prefix("bytes=")
                    .and_then(|r| r.strip_suffix('-'))
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let total = body.len();
                let partial = if start > 0 { 206 } else { 200 };
                let (status, from, limit) = match act {
                    // As servers do: nothing left to send is a 416.
                    _ if start >= total && !matches!(act, Act::IgnoreRange) => (416, 0, Some(0)),
                    Act::Status(s) => (s, 0, Some(0)),
                    Act::IgnoreRange => (200, 0, None),
                    Act::WrongStart => (206, start + 1, None),
                    Act::Full => (partial, start, None),
                    Act::Cut(k) | Act::ChunkedShort(k) => (partial, start, Some(k)),
                };
                let mut head = format!("HTTP/1.1 {status} X\r\nconnection: close\r\n");
                if status == 416 {
                    head.push_str(&format!(
                        "content-range: bytes */{total}\r\ncontent-length: 0\r\n\r\n"
                    ));
                    let _ = sock.write_all(head.as_bytes()).await;
                    return;
                }
                if matches!(act, Act::Status(_)) {
                    head.push_str("content-length: 0\r\n\r\n");
                    let _ = sock.write_all(head.as_bytes()).await;
                    return;
                }
                if let Act::ChunkedShort(k) = act {
                    head.push_str("transfer-encoding: chunked\r\n");
                    head.push_str(&format!(
                        "content-range: bytes {from}-{}/{total}\r\n\r\n",
                        total - 1
                    ));
                    let end = (from + k).min(total);
                    let _ = sock.write_all(head.as_bytes()).await;
                    let _ = sock
                        .write_all(format!("{:x}\r\n", end - from).as_bytes())
                        .await;
                    let _ = sock.write_all(&body[from..end]).await;
                    let _ = sock.write_all(b"\r\n0\r\n\r\n").await;
                    return;
                }
                head.push_str(&format!("content-length: {}\r\n", total - from));
                if status == 206 {
                    head.push_str(&format!(
                        "content-range: bytes {from}-{}/{total}\r\n",
                        total - 1
                    ));
                }
                head.push_str("\r\n");
                let _ = sock.write_all(head.as_bytes()).await;
                let end = limit.map_or(total, |k| (from + k).min(total));
                let _ = sock.write_all(&body[from..end]).await;
                let _ = sock.flush().await;
                // Dropping the socket cuts the connection.
            });
        }
    });
    FileServer { url, ranges }
}

fn temp_cache() -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "parlance-pull-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

async fn pull(cache: &Path, args: &[&str]) -> Output {
    let (cache, args): (PathBuf, Vec<String>) = (
        cache.to_path_buf(),
        args.iter().map(|s| s.to_string()).collect(),
    );
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_parlance"))
            .args(["model", "pull"])
            .args(&args)
            .env("PARLANCE_MODELS", &cache)
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_download_resumes_where_it_stopped_and_is_checked() {
    let body = content();
    let server = serve(body.clone(), vec![Act::Cut(1_200_000), Act::Full]).await;
    let cache = temp_cache();
    let out = pull(
        &cache,
        &[
            "--url",
            &server.url,
            "--sha256",
            &sha256(&body).to_uppercase(),
        ],
    )
    .await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let kept = cache.join("tiny-model.gguf");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        kept.display().to_string()
    );
    assert_eq!(std::fs::read(&kept).unwrap(), body);
    assert!(!cache.join("tiny-model.gguf.part").exists());
    // The second request asked for the rest only.
    let ranges = server.ranges.lock().unwrap().clone();
    assert_eq!(ranges, ["", "bytes=1200000-"], "{err}");
    assert!(err.contains("resuming from 1.20 MB"), "{err}");
    assert!(err.contains("downloaded 3.00 MB in"), "{err}");
    assert!(err.contains("SHA-256 verified"), "{err}");
    assert!(!err.contains("(0 B/s)"), "a speed: {err}");
    for not in [
        "an earlier download stopped there",
        "cannot resume",
        "resumed at",
    ] {
        assert!(!err.contains(not), "a fresh download: {err}");
    }
    // Listed like any model of the cache.
    let listed = Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(["model", "list"])
        .env("PARLANCE_MODELS", &cache)
        .env("OLLAMA_MODELS", cache.join("none"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&listed.stdout).contains("tiny-model  parlance"));
    // Pulling it again: already there, still checked.
    let again = pull(&cache, &["--url", &server.url, "--sha256", &"0".repeat(64)]).await;
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("already in the cache with SHA-256"),
        "{}",
        stderr(&again)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_that_stops_for_good_resumes_on_the_next_run() {
    let body = content();
    let server = serve(body.clone(), vec![Act::Cut(1_000_000), Act::Status(503)]).await;
    let cache = temp_cache();
    let out = pull(&cache, &["--url", &server.url]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the download stopped at 1.00 MB"), "{err}");
    assert!(
        err.contains("run the same command again to resume it"),
        "{err}"
    );
    assert!(err.contains("HTTP 503"), "{err}");
    // Waits that double between tries.
    for wait in ["in 0.2 s", "in 0.5 s", "in 1.0 s", "in 2.0 s"] {
        assert!(
            err.contains(&format!("resuming from 1.00 MB {wait}")),
            "{wait}: {err}"
        );
    }
    let part = cache.join("tiny-model.gguf.part");
    assert_eq!(std::fs::metadata(&part).unwrap().len(), 1_000_000);
    assert!(!cache.join("tiny-model.gguf").exists());
    // The cut, then four tries in a row without progress, then it gives up.
    assert_eq!(server.ranges.lock().unwrap().len(), 1 + 4);
    assert!(
        err.contains("the connection broke at 1.00 MB: end of file before message length reached"),
        "{err}"
    );

    let server = serve(body.clone(), vec![Act::Full]).await;
    let out = pull(&cache, &["--url", &server.url]).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(*server.ranges.lock().unwrap(), ["bytes=1000000-"]);
    assert!(
        err.contains("resuming tiny-model.gguf from 1.00 MB (an earlier download stopped there)"),
        "{err}"
    );
    assert!(err.contains("resumed at 1.00 MB"), "{err}");
    assert_eq!(std::fs::read(cache.join("tiny-model.gguf")).unwrap(), body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_resume_starts_over() {
    let body = content();
    let server = serve(body.clone(), vec![Act::IgnoreRange]).await;
    let cache = temp_cache();
    std::fs::write(cache.join("tiny-model.gguf.part"), &body[..5000]).unwrap();
    let out = pull(&cache, &["--url", &server.url]).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("the server cannot resume tiny-model.gguf: starting over"),
        "{err}"
    );
    assert_eq!(std::fs::read(cache.join("tiny-model.gguf")).unwrap(), body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_sha256_or_a_refusal_keeps_nothing() {
    let body = content();
    let server = serve(body.clone(), vec![Act::Full]).await;
    let cache = temp_cache();
    let wrong = sha256(b"something else");
    let out = pull(&cache, &["--url", &server.url, "--sha256", &wrong]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "SHA-256 mismatch: expected {wrong}, got {}",
            sha256(&body)
        )),
        "{err}"
    );
    assert!(err.contains("the download was deleted"), "{err}");
    assert_eq!(
        std::fs::read_dir(&cache).unwrap().count(),
        0,
        "nothing kept"
    );

    let out = pull(&cache, &["--url", &server.url, "--sha256", "abc"]).await;
    assert!(stderr(&out).contains("--sha256: expected 64 hexadecimal digits"));

    // A 416 for a request that asked for no range is the server's error.
    let server = serve(body.clone(), vec![Act::Status(416)]).await;
    let out = pull(&cache, &["--url", &server.url]).await;
    assert!(
        stderr(&out).contains("HTTP 416 (not retried)"),
        "{}",
        stderr(&out)
    );

    let server = serve(body, vec![Act::Status(404)]).await;
    let out = pull(&cache, &["--url", &server.url]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("HTTP 404 (not retried)"), "{err}");
    assert_eq!(
        server.ranges.lock().unwrap().len(),
        1,
        "a 404 is not retried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_part_that_is_already_whole_or_too_long_is_settled_by_the_416() {
    let body = content();
    let cache = temp_cache();
    // The whole file in the part (a run stopped before renaming it).
    std::fs::write(cache.join("tiny-model.gguf.part"), &body).unwrap();
    let server = serve(body.clone(), vec![Act::Full]).await;
    let out = pull(&cache, &["--url", &server.url]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        *server.ranges.lock().unwrap(),
        [format!("bytes={}-", body.len())]
    );
    assert_eq!(std::fs::read(cache.join("tiny-model.gguf")).unwrap(), body);
    // Longer than the file: not this file's part; started over.
    let cache = temp_cache();
    let mut long = body.clone();
    long.extend(b"more");
    std::fs::write(cache.join("tiny-model.gguf.part"), &long).unwrap();
    let server = serve(body.clone(), vec![Act::Full]).await;
    let out = pull(&cache, &["--url", &server.url]).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("the partial download (3.00 MB) does not match the file (3.00 MB)"),
        "{err}"
    );
    assert_eq!(
        *server.ranges.lock().unwrap(),
        [format!("bytes={}-", long.len()), String::new()]
    );
    assert_eq!(std::fs::read(cache.join("tiny-model.gguf")).unwrap(), body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_206_for_another_part_starts_over() {
    let body = content();
    let cache = temp_cache();
    std::fs::write(cache.join("tiny-model.gguf.part"), &body[..1000]).unwrap();
    let server = serve(body.clone(), vec![Act::WrongStart, Act::Full]).await;
    let out = pull(&cache, &["--url", &server.url]).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "the server sent another part than bytes 1000- (from 1001); starting over in 0.2 s"
        ),
        "{err}"
    );
    assert_eq!(*server.ranges.lock().unwrap(), ["bytes=1000-", ""]);
    assert_eq!(std::fs::read(cache.join("tiny-model.gguf")).unwrap(), body);
    // A server that always does it is given up on, not looped on.
    std::fs::write(cache.join("again.gguf.part"), &body[..1000]).unwrap();
    let server = serve(body, vec![Act::WrongStart]).await;
    let url = server.url.replace("tiny-model.gguf", "again.gguf");
    let out = pull(&cache, &["--url", &url]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("run the same command again"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_ends_short_of_the_size_is_resumed() {
    let body = content();
    let server = serve(
        body.clone(),
        vec![Act::Cut(1_000_000), Act::ChunkedShort(500_000), Act::Full],
    )
    .await;
    let cache = temp_cache();
    let out = pull(&cache, &["--url", &server.url]).await;
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("the connection closed at 1.50 MB of 3.00 MB"),
        "{err}"
    );
    assert_eq!(
        *server.ranges.lock().unwrap(),
        ["", "bytes=1000000-", "bytes=1500000-"]
    );
    assert_eq!(std::fs::read(cache.join("tiny-model.gguf")).unwrap(), body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pull_from_a_path_checks_the_sha256_and_the_default_is_not_fetched_twice() {
    let body = content();
    let cache = temp_cache();
    let file = cache.join("given.gguf");
    std::fs::write(&file, &body).unwrap();
    let to = temp_cache();
    let path = file.to_str().unwrap();
    let ok = pull(&to, &["--path", path, "--sha256", &sha256(&body)]).await;
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(std::fs::read(to.join("given.gguf")).unwrap(), body);
    let wrong = pull(
        &temp_cache(),
        &["--path", path, "--sha256", &"1".repeat(64)],
    )
    .await;
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        stderr(&wrong).contains(&format!("{path}: SHA-256 mismatch")),
        "{}",
        stderr(&wrong)
    );
    let alone = pull(&to, &["--sha256", &"1".repeat(64)]).await;
    assert_eq!(alone.status.code(), Some(2));
    assert!(stderr(&alone).contains("--sha256 checks a file given with --path or --url"));
    // The default model already in the cache: its path, no download.
    std::fs::write(to.join("SmolLM2-135M-Instruct.Q4_1.gguf"), b"GGUF").unwrap();
    let default = pull(&to, &[]).await;
    assert!(default.status.success(), "{}", stderr(&default));
    assert!(String::from_utf8_lossy(&default.stdout).contains("SmolLM2-135M-Instruct.Q4_1.gguf"));
}
