//! `kind = "http"` tools: the server POSTs the validated arguments to a
//! URL and reads the answer.
//!
//! How an answer ends the call:
//! - 2xx: the result (JSON, or text);
//! - 4xx: a `ToolError` the model reads (`HTTP 404: <first 500 characters>`):
//!   the tool's server refused on purpose;
//! - 5xx, a connection or transport failure, a timeout of the connection:
//!   an unexpected failure, so the agent's `on_tool_exception` policy
//!   applies (`fail` stops the run, `return_generic` tells the model only
//!   that the tool failed). The message names the status or the kind of
//!   failure, never the body of a 5xx nor the URL (its query string may
//!   hold a key); both are logged for operators, secrets scrubbed.
//! - an answer larger than the tool's output limit is not read further.
//!
//! At most `max_connections_per_host` requests run at once per host (all
//! HTTP tools together), so that a burst of calls cannot exhaust the
//! server's file descriptors; the others wait their turn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use parlance_agent::{Tool, ToolContext, ToolError, ToolFailure};
use parlance_providers::transport::SharedClient;
use serde_json::Value;
use tokio::sync::Semaphore;

/// Requests at once per host, by default.
pub const DEFAULT_CONNECTIONS_PER_HOST: usize = 64;

/// The per-host limits, shared by every HTTP tool of the process.
fn host_slots(host: &str, cap: usize) -> Arc<Semaphore> {
    static SLOTS: OnceLock<Mutex<HashMap<String, Arc<Semaphore>>>> = OnceLock::new();
    let mut map = SLOTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    Arc::clone(
        map.entry(host.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(cap.max(1)))),
    )
}

/// The URL without its query string or fragment, for messages and logs.
pub fn shown_url(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

/// What one HTTP tool's calls share.
struct Target {
    name: String,
    url: String,
    client: SharedClient,
    slots: Arc<Semaphore>,
}

/// Builds the tool. `client` is the process's shared HTTP client (built in
/// the background at start-up, so that reading the system's certificates
/// does not delay the server's first answer).
pub fn tool(
    name: &str,
    description: &str,
    url: String,
    client: SharedClient,
    max_output: usize,
    per_host: usize,
) -> Tool {
    let host = reqwest::Url::parse(&url)
        .ok()
        .and_then(|u| Some(format!("{}:{}", u.host_str()?, u.port_or_known_default()?)))
        .unwrap_or_else(|| url.clone());
    let target = Arc::new(Target {
        name: name.to_string(),
        slots: host_slots(&host, per_host),
        url,
        client,
    });
    Tool::new(name, description, move |args: Value, ctx: ToolContext| {
        let target = Arc::clone(&target);
        async move {
            let Target {
                name: tool_name,
                url,
                client,
                slots,
            } = &*target;
            let _slot = slots.acquire().await.expect("never closed");
            let fail = |what: String| {
                tracing::warn!(tool = %tool_name, url = %shown_url(url), error = %what, "http tool failed");
                ToolFailure::unexpected("http", what)
            };
            let client = client.get().map_err(|e| fail(e.to_string()))?;
            let send = || {
                client
                    .post(url)
                    .header("x-parlance-call-id", &*ctx.call_id)
                    // The same on every replay of the call (a retried run):
                    // the service can do what the call asks once.
                    .header("idempotency-key", ctx.idempotency_key())
                    .header("content-type", "application/json")
                    .body(args.to_string())
                    .send()
            };
            // The process's own lack of descriptors is not the tool's
            // failure: waited out a few times, then the run's (never the
            // model's) to know.
            let mut waits = SHORT_OF_RESOURCES_WAITS.iter();
            let mut resp = loop {
                match send().await {
                    Ok(r) => break r,
                    Err(e) if out_of_resources(&e) => match waits.next() {
                        Some(ms) => {
                            tracing::warn!(tool = %tool_name, error = %describe_ref(&e), "no resources for an http tool call; trying again in {ms} ms");
                            tokio::time::sleep(std::time::Duration::from_millis(*ms)).await;
                        }
                        None => {
                            tracing::error!(tool = %tool_name, error = %describe_ref(&e), "no resources for an http tool call; the run stops");
                            return Err(ToolFailure::server_resources(describe(e)));
                        }
                    },
                    Err(e) => return Err(fail(describe(e))),
                }
            };
            let status = resp.status();
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(|e| fail(describe(e)))? {
                body.extend_from_slice(&chunk);
                if body.len() > max_output {
                    return Err(ToolFailure::from(ToolError::new(format!(
                        "{tool_name} answered more than its output limit of {max_output} bytes; the answer was dropped"
                    ))));
                }
            }
            let body = String::from_utf8_lossy(&body).into_owned();
            let said: String = body.chars().take(500).collect();
            if status.is_server_error() {
                tracing::warn!(tool = %tool_name, url = %shown_url(url), status = status.as_u16(), body = %crate::secrets::redact(&said), "http tool answered a server error");
                return Err(ToolFailure::unexpected(
                    "http",
                    format!("HTTP {status} from the tool's server"),
                ));
            }
            if !status.is_success() {
                return Err(ToolFailure::from(ToolError::new(format!(
                    "HTTP {}: {said}",
                    status.as_u16()
                ))));
            }
            Ok::<_, ToolFailure>(
                serde_json::from_str::<Value>(&body).unwrap_or(Value::String(body)),
            )
        }
    })
}

/// How long an HTTP tool call waits, each time, when the process has no
/// descriptor (or memory) left for it, before it gives up.
const SHORT_OF_RESOURCES_WAITS: &[u64] = &[100, 200, 400, 800];

/// Whether a failure is the process's own lack of resources: a cause that
/// is an I/O error of too many open files (the process's or the
/// system's), no buffer space or no memory.
fn out_of_resources(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && (matches!(
                io.raw_os_error(),
                Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
            ) || io.kind() == std::io::ErrorKind::OutOfMemory)
        {
            return true;
        }
        cause = c.source();
    }
    false
}

/// The causes of a transport failure, in words (not the URL).
fn describe_ref(e: &reqwest::Error) -> String {
    causes(e).join(": ")
}

/// Each cause under `e`, in words.
fn causes(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut parts = Vec::new();
    let mut source = e.source();
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    parts
}

/// A transport failure in words, without the URL: the kind, then each
/// cause (`could not connect: tcp connect error: Connection refused`).
fn describe(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut parts = vec![if e.is_timeout() {
        "timed out".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else if e.is_body() || e.is_decode() {
        "the answer could not be read".to_string()
    } else {
        "the request failed".to_string()
    }];
    parts.extend(causes(&e));
    parts.dedup();
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error with a cause, as the HTTP client's are.
    #[derive(Debug)]
    struct Wrapped(std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("tcp connect error")
        }
    }

    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn the_processs_own_lack_of_resources_is_told_apart_from_the_tools_failure() {
        for errno in [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM] {
            let e = Wrapped(std::io::Error::from_raw_os_error(errno));
            assert!(out_of_resources(&e), "{errno}");
        }
        for errno in [libc::ECONNREFUSED, libc::ECONNRESET, libc::ETIMEDOUT] {
            let e = Wrapped(std::io::Error::from_raw_os_error(errno));
            assert!(!out_of_resources(&e), "{errno}");
        }
        let plain = std::io::Error::other("the tool said no");
        assert!(!out_of_resources(&plain));
    }
}
