//! Streams that survive reconnects, on the real `parlance serve`: a client
//! that hangs up mid-answer and comes back with `Last-Event-ID` (to the
//! same server, or another of the store) gets every event it missed and
//! none twice; a decided run's rewritten message is not skipped; bad ids,
//! strangers and missing tokens are refused.

mod common;

use std::collections::HashSet;

use common::replay::{ReplayServer, Reply, sse_frames};
use common::*;
use serde_json::{Value, json};

const TOKEN: &str = "tok-ann-0123456789";

fn tokens() -> &'static str {
    "[[auth.tokens]]\ntoken = \"tok-ann-0123456789\"\nsubject = \"ann\"\n[[auth.tokens]]\ntoken = \"tok-bob-0123456789\"\nsubject = \"bob\"\n"
}

/// A Chat Completions stream of `pieces`, one chunk each, `pace`
/// milliseconds apart.
fn slow_text(pieces: &[&str], pace: u64) -> Reply {
    let chunk = |d: Value, f: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [{"index": 0, "delta": d, "finish_reason": f}]}).to_string()
    };
    let mut frames: Vec<(&str, String)> =
        vec![("", chunk(json!({"role": "assistant"}), Value::Null))];
    for p in pieces {
        frames.push(("", chunk(json!({"content": p}), Value::Null)));
    }
    frames.push(("", chunk(json!({}), json!("stop"))));
    frames.push(("", "[DONE]".into()));
    Reply::Paced(
        pace,
        Box::new(Reply::Sse {
            chunks: sse_frames(&frames),
            cut: false,
        }),
    )
}

/// An SSE event as a client reads it.
#[derive(Debug, Clone)]
struct Ev {
    id: Option<String>,
    name: String,
    data: Value,
}

/// Reads an SSE response event by event.
struct Reader {
    resp: reqwest::Response,
    buf: String,
}

impl Reader {
    async fn open(url: &str, path: &str, last_id: Option<&str>, token: &str) -> (u16, Reader) {
        let mut req = reqwest::Client::new()
            .get(format!("{url}{path}"))
            .header("authorization", format!("Bearer {token}"));
        if let Some(id) = last_id {
            req = req.header("last-event-id", id);
        }
        let resp = req.send().await.unwrap();
        (
            resp.status().as_u16(),
            Reader {
                resp,
                buf: String::new(),
            },
        )
    }

    async fn post(url: &str, path: &str, body: &Value) -> Reader {
        let resp = reqwest::Client::new()
            .post(format!("{url}{path}"))
            .header("authorization", format!("Bearer {TOKEN}"))
            .json(body)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        Reader {
            resp,
            buf: String::new(),
        }
    }

    /// The next event (keep-alive comments skipped); `None` at the end.
    async fn next(&mut self) -> Option<Ev> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut name, mut data) = (None, String::from("message"), String::new());
                let mut any = false;
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().to_string());
                        any = true;
                    } else if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_string();
                        any = true;
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                        any = true;
                    }
                }
                if !any {
                    continue;
                }
                let data = serde_json::from_str(&data).unwrap_or(Value::String(data));
                return Some(Ev { id, name, data });
            }
            match self.resp.chunk().await.unwrap() {
                Some(bytes) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                None => return None,
            }
        }
    }

    async fn rest(mut self) -> Vec<Ev> {
        let mut out = Vec::new();
        while let Some(e) = self.next().await {
            out.push(e);
        }
        out
    }
}

fn text_of(events: &[Ev]) -> String {
    events
        .iter()
        .filter(|e| e.name == "text_delta")
        .map(|e| e.data["text"].as_str().unwrap().to_string())
        .collect()
}

/// Ids as (position, after), which must only grow along one stream.
fn id_key(id: &str) -> (u64, u64) {
    let (p, k) = id.split_once('.').unwrap_or((id, "0"));
    (p.parse().unwrap(), k.parse().unwrap())
}

fn assert_ids_grow(events: &[Ev]) {
    let ids: Vec<(u64, u64)> = events
        .iter()
        .filter_map(|e| e.id.as_deref().map(id_key))
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "ids do not grow: {ids:?}"
    );
}

async fn new_thread(url: &str) -> String {
    let (status, t) = post(url, "/v1/threads", &json!({}), Some(TOKEN)).await;
    assert_eq!(status, 201);
    t["id"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_hangs_up_mid_answer_gets_every_event_it_missed_once() {
    let answer = ["Order A-17 ", "has shipped. ", "It arrives ", "on Friday."];
    let provider = ReplayServer::start(vec![
        chat_stream(call("call_1", "lookup_order", json!({"id": "A-17"}))),
        slow_text(&answer, 250),
        slow_text(&["Still ", "on its way, ", "as said."], 250),
    ])
    .await;
    let tool = ReplayServer::start(vec![Reply::json(200, &json!({"status": "shipped"}))]).await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, &tool.url, tokens()));
    let thread = new_thread(&server.url).await;

    // The first client reads up to the answer's second piece, then leaves.
    let ask =
        json!({"agent": "support", "thread_id": thread, "input": "Where is A-17?", "stream": true});
    let mut first = Reader::post(&server.url, "/v1/runs", &ask).await;
    let mut seen = Vec::new();
    while text_of(&seen) != answer[..2].concat() {
        seen.push(first.next().await.expect("the stream goes on"));
    }
    drop(first);
    assert_eq!(seen[0].name, "run_started");
    let run = seen[0].data["id"].as_str().unwrap().to_string();
    assert!(
        seen.iter().all(|e| e.id.is_some()),
        "every event has an id: {seen:?}"
    );
    let last = seen.last().unwrap().id.clone().unwrap();

    // It comes back to the same server: the rest, exactly.
    let (status, again) = Reader::open(
        &server.url,
        &format!("/v1/runs/{run}/events"),
        Some(&last),
        TOKEN,
    )
    .await;
    assert_eq!(status, 200);
    let rest = again.rest().await;
    let both: Vec<Ev> = seen.iter().chain(&rest).cloned().collect();
    assert_ids_grow(&both);
    assert_eq!(text_of(&both), answer.concat(), "no text lost or repeated");
    let messages: Vec<&Ev> = both.iter().filter(|e| e.name == "message").collect();
    let roles: Vec<&str> = messages
        .iter()
        .map(|e| e.data["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["assistant", "tool", "assistant"]);
    let end = both.last().unwrap();
    assert_eq!(end.name, "run_completed");
    assert_eq!(end.data["status"], "completed");
    assert_eq!(end.data["output"], answer.concat());

    // From the start of the run (no id): the input too, each message once.
    let (_, all) = Reader::open(&server.url, &format!("/v1/runs/{run}/events"), None, TOKEN).await;
    let all = all.rest().await;
    assert_ids_grow(&all);
    let roles: Vec<&str> = all
        .iter()
        .filter(|e| e.name == "message")
        .map(|e| e.data["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(all.last().unwrap().name, "run_completed");

    // Another server of the same store, while a second run streams on the
    // first: it follows from the store and misses nothing committed.
    let ask = json!({"agent": "support", "thread_id": thread, "input": "And now?", "stream": true});
    let mut first = Reader::post(&server.url, "/v1/runs", &ask).await;
    let started = first.next().await.unwrap();
    assert_eq!(started.name, "run_started");
    let run2 = started.data["id"].as_str().unwrap().to_string();
    let other = start(&config(&dir, &provider.url, &tool.url, tokens()));
    let (status, follow) = Reader::open(
        &other.url,
        &format!("/v1/runs/{run2}/events"),
        started.id.as_deref(),
        TOKEN,
    )
    .await;
    assert_eq!(status, 200);
    let followed = follow.rest().await;
    assert_ids_grow(&followed);
    let names: Vec<&str> = followed.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["message", "run_completed"], "{followed:?}");
    assert_eq!(
        followed[0].data["content"][0]["text"],
        "Still on its way, as said."
    );
    assert_eq!(followed[1].data["status"], "completed");
    assert_eq!(followed[1].data["output"], "Still on its way, as said.");
    // The first client saw the same message under the same id.
    let mine = first.rest().await;
    let message = mine.iter().find(|e| e.name == "message").unwrap();
    assert_eq!(message.id, followed[0].id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decided_runs_rewritten_message_is_not_skipped_and_bad_asks_are_refused() {
    let provider = ReplayServer::start(vec![
        chat_stream(call("call_1", "refund", json!({"amount": 40}))),
        chat(text("Refunded 40.")),
    ])
    .await;
    let dir = temp_dir();
    let server = start(&config(&dir, &provider.url, "http://127.0.0.1:9", tokens()));
    let thread = new_thread(&server.url).await;

    let ask =
        json!({"agent": "support", "thread_id": thread, "input": "Refund 40", "stream": true});
    let paused = Reader::post(&server.url, "/v1/runs", &ask)
        .await
        .rest()
        .await;
    let run = paused[0].data["id"].as_str().unwrap().to_string();
    let names: Vec<&str> = paused.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "run_started",
            "message",
            "message",
            "approval_required",
            "run_completed"
        ],
        "{paused:?}"
    );
    let waiting = &paused[2];
    assert!(
        waiting.data["content"][0]["approval_request"].is_object(),
        "{waiting:?}"
    );
    let waiting_id = waiting.id.clone().unwrap();

    // Reconnecting to a paused run: what it waits for, and that it waits.
    let (_, r) = Reader::open(
        &server.url,
        &format!("/v1/runs/{run}/events"),
        Some(&waiting_id),
        TOKEN,
    )
    .await;
    let again = r.rest().await;
    let names: Vec<&str> = again.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["approval_required", "run_completed"], "{again:?}");
    assert_eq!(again[0].data["pending"][0]["name"], "refund");
    assert_eq!(again[1].data["status"], "requires_approval");

    // Decided: the waiting message is rewritten in place with the result.
    let pending = &paused[3].data["pending"][0];
    let decision = json!({"decisions": [{"tool_call_id": pending["tool_call_id"], "digest": pending["digest"],
        "decision": "answered", "content": [{"type": "text", "text": "refund #7 issued"}]}]});
    let (status, done) = post(
        &server.url,
        &format!("/v1/runs/{run}/decisions"),
        &decision,
        Some(TOKEN),
    )
    .await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["output"], "Refunded 40.");

    // A client that saw the waiting message gets its new version, from
    // this server and from another of the store.
    let other = start(&config(&dir, &provider.url, "http://127.0.0.1:9", tokens()));
    for url in [&server.url, &other.url] {
        let (_, r) = Reader::open(
            url,
            &format!("/v1/runs/{run}/events"),
            Some(&waiting_id),
            TOKEN,
        )
        .await;
        let after = r.rest().await;
        let messages: Vec<&Ev> = after.iter().filter(|e| e.name == "message").collect();
        assert_eq!(messages.len(), 2, "{after:?}");
        assert_eq!(
            messages[0].data["content"][0]["tool_result"]["content"][0]["text"],
            "refund #7 issued"
        );
        assert_eq!(messages[1].data["content"][0]["text"], "Refunded 40.");
        let ids: HashSet<_> = messages.iter().map(|e| e.id.clone().unwrap()).collect();
        assert!(!ids.contains(&waiting_id), "a new id for the new version");
        assert_eq!(after.last().unwrap().data["status"], "completed");
    }

    // Refused: an id that is not one, a stranger, no token, no such run.
    let path = format!("/v1/runs/{run}/events");
    let (status, r) = Reader::open(&server.url, &path, Some("seven"), TOKEN).await;
    assert_eq!(status, 400);
    let body: Value = r.resp.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("Last-Event-ID") && message.contains("seven"),
        "{message}"
    );
    let (status, _) = get(&server.url, &format!("{path}?after=1.x"), Some(TOKEN)).await;
    assert_eq!(status, 400);
    let (status, _) = Reader::open(&server.url, &path, None, "tok-bob-0123456789").await;
    assert_eq!(status, 404);
    let (status, _) = get(&server.url, &path, None).await;
    assert_eq!(status, 401);
    let (status, _) = get(&server.url, "/v1/runs/run_nope/events", Some(TOKEN)).await;
    assert_eq!(status, 404);
}

/// The server dies (SIGKILL) mid-answer; started again, it carries the
/// run on by itself, and the client that lost its stream picks it up on
/// the new process with the id it last saw: the answer, then the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_is_picked_up_after_its_server_died_and_carried_the_run_on() {
    let provider = ReplayServer::start(vec![
        slow_text(&["Counting: ", "one, ", "two, ", "three, ", "four."], 400),
        chat(text("Counted to four.")),
    ])
    .await;
    let dir = temp_dir();
    let config = config(&dir, &provider.url, "http://127.0.0.1:9", tokens());
    let mut server = start(&config);
    let thread = new_thread(&server.url).await;
    let ask = json!({"agent": "support", "thread_id": thread, "input": "Count", "stream": true});
    let mut first = Reader::post(&server.url, "/v1/runs", &ask).await;
    let mut seen = Vec::new();
    while text_of(&seen).is_empty() {
        seen.push(first.next().await.expect("the stream goes on"));
    }
    let run = seen[0].data["id"].as_str().unwrap().to_string();
    let last = seen.last().unwrap().id.clone().unwrap();
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    drop(first);

    let again = start(&config);
    let (status, r) = Reader::open(
        &again.url,
        &format!("/v1/runs/{run}/events"),
        Some(&last),
        TOKEN,
    )
    .await;
    assert_eq!(status, 200);
    let rest = tokio::time::timeout(std::time::Duration::from_secs(20), r.rest())
        .await
        .expect("the carried-on run ends");
    let names: Vec<&str> = rest.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["message", "run_completed"], "{rest:?}");
    assert_eq!(rest[0].data["content"][0]["text"], "Counted to four.");
    assert_eq!(rest[1].data["status"], "completed");
    assert_eq!(rest[1].data["output"], "Counted to four.");
    let both: Vec<Ev> = seen.iter().chain(&rest).cloned().collect();
    assert_ids_grow(&both);
    drop(server);
}
