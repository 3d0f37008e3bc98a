//! A TOML agent's context policy through `parlance serve`: a thread that
//! outgrows the window is compacted by the provider, stored, and the next
//! run sends the summary and not the range; bad settings stop the server.

mod common;

use std::process::{Command, Stdio};

use common::replay::{ReplayServer, Reply, sse_frames};
use common::*;
use serde_json::{Value, json};

/// An OpenAI Chat answer that reports `prompt_tokens` of input.
fn answer(t: &str, prompt_tokens: u64) -> Reply {
    Reply::json(
        200,
        &json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 5, "total_tokens": prompt_tokens + 5}}),
    )
}

/// The same answer streamed, its usage in the last chunk.
fn streamed(t: &str, prompt_tokens: u64) -> Reply {
    let chunk = |d: Value, f: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "model": "gpt-test",
            "choices": [{"index": 0, "delta": d, "finish_reason": f}]})
        .to_string()
    };
    let usage = json!({"id": "c", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 5, "total_tokens": prompt_tokens + 5}});
    let chunks = sse_frames(&[
        (
            "",
            chunk(json!({"role": "assistant", "content": t}), Value::Null),
        ),
        ("", chunk(json!({}), json!("stop"))),
        ("", usage.to_string()),
        ("", "[DONE]".into()),
    ]);
    Reply::Sse { chunks, cut: false }
}

const COMPACT: &str = r#"
[agents.support.context]
strategy = "compact"
window = 400
keep = 0.3
instructions = "Summarize for the support agent."
"#;

fn sent_messages(r: &common::replay::Received) -> Vec<Value> {
    r.body["messages"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_past_its_window_is_compacted_stored_and_the_next_run_sends_the_summary() {
    let provider = ReplayServer::start(vec![
        // Run 1: an answer whose request filled 350 of the 400 tokens.
        answer("A-17 shipped on Monday.", 350),
        // Run 2: past 80 %: first the summary, then the answer.
        answer("The user asked about A-17; it shipped on Monday.", 60),
        streamed("B-2 is on its way.", 40),
        // Run 3: under the trigger again: one request.
        answer("You're welcome.", 60),
    ])
    .await;
    let dir = temp_dir();
    let cfg = config_with(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        "",
        &Extra {
            agent: COMPACT,
            ..Extra::default()
        },
    );
    let server = start(&cfg);
    let (_, t) = post(&server.url, "/v1/threads", &json!({}), None).await;
    let id = t["id"].as_str().unwrap();
    let run = |input: &str| json!({"agent": "support", "input": input, "thread_id": id});

    let (status, r1) = post(&server.url, "/v1/runs", &run("Where is A-17?"), None).await;
    assert_eq!(
        (status, r1["status"].as_str()),
        (200, Some("completed")),
        "{r1}"
    );

    // Run 2, streamed: the compaction is an event, the record a message.
    let mut body = run("And B-2?");
    body["stream"] = json!(true);
    let events = post_stream(&server.url, "/v1/runs", &body, None).await;
    let at = events
        .iter()
        .position(|(e, _)| e == "context_compacted")
        .unwrap_or_else(|| panic!("no context_compacted in {events:?}"));
    let compacted = &events[at].1;
    assert_eq!(compacted["strategy"], "compact");
    assert_eq!(compacted["replaces"], 2, "{compacted}");
    assert!(
        compacted["tokens_before"].as_u64().unwrap() > 320,
        "{compacted}"
    );
    let (name, record) = &events[at + 1];
    assert_eq!(name, "message");
    assert_eq!(record["metadata"]["compaction"]["replaces"], 2);
    assert_eq!(record["metadata"]["compaction"]["model"], "openai:gpt-test");
    let (last, done) = events.last().unwrap();
    assert_eq!(last, "run_completed");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["usage"]["input_tokens"], 100,
        "summary and answer: {done}"
    );

    let sent = provider.received();
    assert_eq!(sent.len(), 3);
    // The summarizer read the first exchange as a transcript.
    let ask = sent_messages(&sent[1]);
    assert_eq!(ask[0]["content"], "Summarize for the support agent.");
    let transcript = ask[1]["content"].as_str().unwrap();
    assert!(transcript.contains("Where is A-17?"), "{transcript}");
    assert!(
        transcript.contains("A-17 shipped on Monday."),
        "{transcript}"
    );
    assert!(sent[1].body.get("tools").is_none(), "no tools to summarize");
    // The answer's request: instructions, the summary, the new question.
    let main = sent_messages(&sent[2]);
    assert_eq!(main.len(), 3, "{main:?}");
    assert_eq!(main[0]["content"], "You help with orders.");
    let summary = main[1]["content"].as_str().unwrap();
    assert_eq!(main[1]["role"], "user");
    assert!(
        summary.ends_with("The user asked about A-17; it shipped on Monday."),
        "{summary}"
    );
    assert_eq!(main[2]["content"], "And B-2?");

    // The thread keeps every message, the record among them.
    let (_, thread) = get(&server.url, &format!("/v1/threads/{id}"), None).await;
    let kept: Vec<Value> = thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"].clone())
        .collect();
    assert_eq!(kept.len(), 5, "{kept:?}");
    assert_eq!(kept[0]["content"][0]["text"], "Where is A-17?");
    assert_eq!(kept[3]["metadata"]["compaction"]["strategy"], "compact");

    // The thread page shows the record for what it is.
    // (No token is configured: an anonymous session, by its cookie.)
    let page = anonymous_page(&server.url, &format!("/ui/threads/{id}")).await;
    assert!(page.contains("Context compacted"), "{page}");
    assert!(page.contains("first 2 messages"), "{page}");
    assert!(page.contains("The summary the model reads"), "{page}");

    // Run 3 sends the summary and not the range, and summarizes nothing.
    let (_, r3) = post(&server.url, "/v1/runs", &run("Thanks!"), None).await;
    assert_eq!(r3["status"], "completed", "{r3}");
    let sent = provider.received();
    assert_eq!(sent.len(), 4);
    let third: Vec<String> = sent_messages(&sent[3])
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(third[0], "You help with orders.");
    assert!(third[1].ends_with("it shipped on Monday."));
    assert_eq!(&third[2..], ["And B-2?", "B-2 is on its way.", "Thanks!"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_given_in_a_request_takes_a_context_policy() {
    let provider = ReplayServer::start(vec![answer("Too long to go on.", 10)]).await;
    let dir = temp_dir();
    let cfg = config_with(
        &dir,
        &provider.url,
        "http://127.0.0.1:9",
        "",
        &Extra::default(),
    );
    let server = start(&cfg);
    let turns = json!([{"messages": [
        {"role": "user", "content": [{"type": "text", "text": "x".repeat(800)}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    ]}]);
    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({
            "agent": {"model": "mock:gpt-test", "context": {"strategy": "fail", "window": 100}},
            "input": "more",
            "turns": turns,
        }),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["error"]["code"], "context_too_long", "{r}");
    assert!(provider.received().is_empty(), "failed before any request");
}

fn refused(config: &std::path::Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn bad_context_settings_stop_the_server_naming_the_setting() {
    for (agent, expected) in [
        (
            "[agents.support.context]\nstrategy = \"shrink\"\n",
            "agents.support.context.strategy: expected one of fail, drop_oldest, compact, got \"shrink\"",
        ),
        (
            "[agents.support.context]\nstrategy = \"compact\"\nkeep = 0.9\n",
            "agents.support.context.keep: expected a share of the window above 0 and below the trigger (0.8), got 0.9",
        ),
        (
            "[agents.support.context]\nstrategy = \"compact\"\ntrigger = 2.0\n",
            "agents.support.context.trigger: expected a share of the window in (0, 1], got 2",
        ),
        (
            "[agents.support.context]\nstrategy = \"drop_oldest\"\nmodel = \"mock:gpt-test\"\n",
            "agents.support.context.model: only a compact strategy writes summaries, not drop_oldest",
        ),
        (
            "[agents.support.context]\nstrategy = \"compact\"\nmodel = \"nowhere:m\"\n",
            "agents.support.context.model: ",
        ),
        (
            "[agents.support.context]\nstrategy = \"compact\"\nwindows = 5\n",
            "unknown field `windows`",
        ),
    ] {
        let dir = temp_dir();
        let cfg = config_with(
            &dir,
            "http://127.0.0.1:9",
            "http://127.0.0.1:9",
            "",
            &Extra {
                agent,
                ..Extra::default()
            },
        );
        let (code, err) = refused(&cfg);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(expected), "expected {expected:?} in: {err}");
    }
}
