//! A resumable download for `parlance model pull --url`: model files are
//! large and connections drop. The bytes go to `NAME.part` next to the
//! target; a cut connection is resumed with an HTTP `Range` request (a few
//! times, then the next run of the same command resumes it), a server that
//! cannot resume is started over, and the file is checked (GGUF magic,
//! SHA-256 when given) before it takes its name.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::StreamExt;
use indicatif::{ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};

/// Retries in a row without a byte of progress before giving up.
const MAX_RETRIES: u32 = 4;

/// What a finished download did.
#[derive(Debug)]
pub struct Summary {
    /// The file's size.
    pub bytes: u64,
    /// Bytes fetched by this run (the rest came from an earlier one).
    pub fetched: u64,
    /// Where this run started (non-zero when it resumed).
    pub resumed_at: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// Whether a SHA-256 was checked.
    pub verified: bool,
}

/// Human size: 98.4 MB.
pub fn size(bytes: u64) -> String {
    indicatif::DecimalBytes(bytes).to_string()
}

/// Checks a `--sha256` value; lower-case hex.
pub fn parse_sha256(s: &str) -> Result<String, String> {
    let s = s.trim().to_ascii_lowercase();
    if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(s)
    } else {
        Err(format!(
            "--sha256: expected 64 hexadecimal digits, got {s:?}"
        ))
    }
}

/// The SHA-256 of a file, hex.
pub fn sha256_file(path: &Path) -> Result<String, String> {
    let mut f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// `bytes START-END/TOTAL` → (START, TOTAL); TOTAL is `None` for `*`.
fn content_range(v: &str) -> Option<(u64, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes ")?;
    let (range, total) = rest.split_once('/')?;
    let total = if total == "*" {
        None
    } else {
        Some(total.parse().ok()?)
    };
    let start = if range == "*" {
        total?
    } else {
        range.split_once('-')?.0.parse().ok()?
    };
    Some((start, total))
}

fn new_bar(total: Option<u64>, name: &str) -> ProgressBar {
    let (bar, template) = match total {
        Some(t) => (
            ProgressBar::new(t),
            "{msg} {wide_bar} {decimal_bytes}/{decimal_total_bytes} {decimal_bytes_per_sec} eta {eta}",
        ),
        None => (
            ProgressBar::no_length(),
            "{msg} {spinner} {decimal_bytes} {decimal_bytes_per_sec}",
        ),
    };
    bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
    bar.set_message(name.to_string());
    bar
}

/// Says something above the bar, or on stderr when there is no terminal.
fn note(bar: &ProgressBar, text: String) {
    if bar.is_hidden() {
        eprintln!("{text}");
    } else {
        bar.println(text);
    }
}

/// Downloads `url` to `target`, resuming `target.part` when an earlier
/// run left one.
pub async fn download(url: &str, target: &Path, sha256: Option<&str>) -> Result<Summary, String> {
    let name = target
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().to_string());
    let part = PathBuf::from(format!("{}.part", target.display()));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(&part)
        .map_err(|e| format!("{}: {e}", part.display()))?;
    file.try_lock().map_err(|_| {
        format!(
            "another download of {name} is in progress ({} is locked)",
            part.display()
        )
    })?;
    let client = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .read_timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let resumed_at = file.metadata().map_err(|e| e.to_string())?.len();
    if resumed_at > 0 {
        eprintln!(
            "resuming {name} from {} (an earlier download stopped there)",
            size(resumed_at)
        );
    }
    let mut failures = 0;
    let mut fetched = 0u64;
    let mut bar: Option<ProgressBar> = None;
    loop {
        let have = file.metadata().map_err(|e| e.to_string())?.len();
        let mut req = client.get(url);
        if have > 0 {
            req = req.header("range", format!("bytes={have}-"));
        }
        // Ok: the file is whole. Err: what went wrong; tried again.
        let outcome: Result<(), String> = async {
            let resp = req.send().await.map_err(|e| e.to_string())?;
            let status = resp.status().as_u16();
            let header = |n: &str| {
                resp.headers()
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            // `total`: the whole file's size, when the server says it.
            let (start, total) = match status {
                206 => match header("content-range").as_deref().and_then(content_range) {
                    Some((s, t)) if s == have => (s, t),
                    other => {
                        // Not the part asked for: nothing of it is kept.
                        file.set_len(0).map_err(|e| e.to_string())?;
                        return Err(format!(
                            "the server sent another part than bytes {have}- ({})",
                            other.map_or_else(
                                || "no Content-Range".into(),
                                |(s, _)| format!("from {s}")
                            )
                        ));
                    }
                },
                200 => {
                    if have > 0 {
                        eprintln!("the server cannot resume {name}: starting over");
                        file.set_len(0).map_err(|e| e.to_string())?;
                    }
                    (0, resp.content_length())
                }
                416 if have > 0 => {
                    let whole = header("content-range")
                        .as_deref()
                        .and_then(content_range)
                        .and_then(|(_, t)| t);
                    if whole == Some(have) {
                        return Ok(());
                    }
                    // More bytes than the file has: not this file's part.
                    file.set_len(0).map_err(|e| e.to_string())?;
                    return Err(format!(
                        "the partial download ({}) does not match the file ({})",
                        size(have),
                        whole.map_or_else(|| "of unknown size".into(), size)
                    ));
                }
                s if (400..500).contains(&s) && s != 408 && s != 429 => {
                    return Err(format!("HTTP {s} (not retried)"));
                }
                s => return Err(format!("HTTP {s}")),
            };
            let b = bar.get_or_insert_with(|| new_bar(total, &name));
            if let Some(t) = total {
                b.set_length(t);
            }
            b.set_position(start);
            let mut body = resp.bytes_stream();
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| {
                    // The innermost cause says what happened.
                    let mut cause: &dyn std::error::Error = &e;
                    while let Some(c) = cause.source() {
                        cause = c;
                    }
                    let at = file.metadata().map_or(0, |m| m.len());
                    format!("the connection broke at {}: {cause}", size(at))
                })?;
                file.write_all(&chunk)
                    .map_err(|e| format!("writing {}: {e}", part.display()))?;
                fetched += chunk.len() as u64;
                failures = 0;
                b.inc(chunk.len() as u64);
            }
            let now = file.metadata().map_err(|e| e.to_string())?.len();
            match total {
                Some(t) if now < t => Err(format!(
                    "the connection closed at {} of {}",
                    size(now),
                    size(t)
                )),
                _ => Ok(()),
            }
        }
        .await;
        match outcome {
            Ok(()) => break,
            Err(e) if e.ends_with("(not retried)") => {
                if let Some(b) = &bar {
                    b.abandon();
                }
                return Err(format!("{url}: {e}"));
            }
            Err(e) => {
                failures += 1;
                let now = file.metadata().map_err(|e| e.to_string())?.len();
                let hidden = ProgressBar::hidden();
                let b = bar.as_ref().unwrap_or(&hidden);
                if failures > MAX_RETRIES {
                    b.abandon();
                    return Err(format!(
                        "{url}: the download stopped at {} ({e}); run the same command again to resume it",
                        size(now)
                    ));
                }
                let wait = Duration::from_millis(250 << (failures - 1));
                note(
                    b,
                    if now == 0 {
                        format!("{e}; starting over in {:.1} s", wait.as_secs_f64())
                    } else {
                        format!(
                            "{e}; resuming from {} in {:.1} s",
                            size(now),
                            wait.as_secs_f64()
                        )
                    },
                );
                tokio::time::sleep(wait).await;
            }
        }
    }
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    file.flush().map_err(|e| e.to_string())?;
    let bytes = file.metadata().map_err(|e| e.to_string())?.len();
    let mut magic = [0u8; 4];
    file.seek(std::io::SeekFrom::Start(0))
        .and_then(|_| file.read_exact(&mut magic))
        .ok();
    if &magic != b"GGUF" {
        drop(file);
        let _ = std::fs::remove_file(&part);
        return Err(format!(
            "{url} is not a GGUF model file (it does not start with the GGUF magic bytes); nothing was kept"
        ));
    }
    let verified = match sha256 {
        Some(want) => {
            let got = sha256_file(&part)?;
            if got != want {
                drop(file);
                let _ = std::fs::remove_file(&part);
                return Err(format!(
                    "{url}: SHA-256 mismatch: expected {want}, got {got}; the download was deleted"
                ));
            }
            true
        }
        None => false,
    };
    drop(file);
    std::fs::rename(&part, target).map_err(|e| format!("{}: {e}", target.display()))?;
    Ok(Summary {
        bytes,
        fetched,
        resumed_at,
        elapsed: started.elapsed(),
        verified,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges_are_read() {
        assert_eq!(content_range("bytes 100-199/200"), Some((100, Some(200))));
        assert_eq!(content_range("bytes 0-0/*"), Some((0, None)));
        assert_eq!(content_range("bytes */500"), Some((500, Some(500))));
        assert_eq!(content_range("items 1-2/3"), None);
        assert_eq!(content_range("bytes x-1/2"), None);
    }

    #[test]
    fn the_bar_shows_size_and_speed() {
        let term = indicatif::InMemoryTerm::new(4, 120);
        let b = new_bar(Some(3_000_000), "tiny.gguf");
        b.set_draw_target(indicatif::ProgressDrawTarget::term_like(Box::new(
            term.clone(),
        )));
        b.set_position(1_500_000);
        std::thread::sleep(Duration::from_millis(120));
        b.inc(1);
        b.tick();
        let shown = term.contents();
        assert!(shown.starts_with("tiny.gguf "), "{shown}");
        assert!(shown.contains("1.50 MB/3.00 MB"), "{shown}");
        assert!(shown.contains("B/s"), "a speed: {shown}");
        assert!(shown.contains("eta"), "{shown}");
        let unknown = new_bar(None, "x");
        let term = indicatif::InMemoryTerm::new(4, 120);
        unknown.set_draw_target(indicatif::ProgressDrawTarget::term_like(Box::new(
            term.clone(),
        )));
        unknown.set_position(2_000_000);
        unknown.tick();
        assert!(term.contents().contains("2.00 MB"), "{}", term.contents());
    }

    #[test]
    fn sha256_values_are_checked() {
        let h = "AB".repeat(32);
        assert_eq!(parse_sha256(&h).unwrap(), "ab".repeat(32));
        assert!(
            parse_sha256("abc")
                .unwrap_err()
                .contains("64 hexadecimal digits")
        );
        assert!(parse_sha256(&"g".repeat(64)).is_err());
        assert_eq!(size(98_362_432), "98.36 MB");
    }
}
