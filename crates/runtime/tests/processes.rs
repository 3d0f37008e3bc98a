//! Real processes against a real store: a worker killed with SIGKILL at
//! random points, 200 times, must leave a thread that loads, is consistent
//! after repair, and takes a next run; two processes racing for one thread
//! (one wins, the other is told it is busy); an approval written by one
//! process decided and resumed by another; a writer killed mid-write
//! leaves whole steps only; a run's final answer is never stored without
//! its outcome.
//!
//! The workers are this test binary run again with `PARLANCE_WORKER` set.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parlance_agent::{Agent, Tool, ToolContext, ToolError};
use parlance_format::{Block, Decision, DecisionKind, FinishReason, Message, Role, RunStatus};
use parlance_model::ModelRequest;
use parlance_model::scripted::ScriptedModel;
use parlance_runtime::ThreadRunner;
use parlance_store::{Store, repair};
use parlance_testkit::store::postgres_url;
use serde_json::{Value, json};

const LEASE: Duration = Duration::from_millis(60);

/// An endless model: a tool call after a user or assistant turn, an answer
/// after tool results.
fn endless_model() -> ScriptedModel {
    let model = ScriptedModel::new([]);
    for i in 0..100_000u64 {
        model.push_step(Box::new(move |req: &ModelRequest| {
            let after_tools = req.messages.last().is_some_and(|m| m.role == Role::Tool);
            let mut m = if after_tools {
                Message::assistant(format!("done {i}"))
            } else {
                let pid = std::process::id();
                Message::new(
                    Role::Assistant,
                    vec![
                        Block::tool_call(format!("c{pid}_{i}_a"), "work", json!({"n": i})),
                        Block::tool_call(format!("c{pid}_{i}_b"), "work", json!({"n": i + 1})),
                    ],
                )
            };
            m.finish_reason = Some(if after_tools {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            });
            Ok(m)
        }));
    }
    model
}

fn agent(model: ScriptedModel) -> Agent {
    Agent::builder(Arc::new(model))
        .tool(Tool::new(
            "work",
            "Work a little.",
            |a: Value, _c: ToolContext| async move {
                tokio::time::sleep(Duration::from_millis(
                    1 + (a["n"].as_u64().unwrap_or(0) % 3),
                ))
                .await;
                Ok::<_, ToolError>(json!({"ok": a["n"]}))
            },
        ))
        .tool(
            Tool::new(
                "refund",
                "Refund.",
                |a: Value, _c: ToolContext| async move {
                    Ok::<_, ToolError>(format!("refunded {}", a["amount"]))
                },
            )
            .needs_approval(),
        )
        .build()
        .unwrap()
}

/// The worker side: what a process does, by `PARLANCE_WORKER`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run as a child process by the tests below"]
async fn worker() {
    let Ok(mode) = std::env::var("PARLANCE_WORKER") else {
        return;
    };
    let url = std::env::var("PARLANCE_WORKER_DB").unwrap();
    let thread = std::env::var("PARLANCE_WORKER_THREAD").unwrap();
    // Only the looping worker (killed at random) needs a short lease; the
    // others hold theirs well past the race and through their writes (a
    // run whose lease ran out stops before writing, and 60 ms can run out
    // between two writes on a busy machine).
    let lease = if mode == "loop" {
        LEASE
    } else {
        Duration::from_secs(30)
    };
    let store = Store::open(&url).await.unwrap().with_lease(lease);
    match mode.as_str() {
        "loop" => {
            let runner = ThreadRunner::new(store, agent(endless_model()));
            println!("\n@@ready");
            loop {
                let r = runner
                    .run(&thread, vec![Message::user("go on")])
                    .await
                    .unwrap();
                assert_eq!(r.status, RunStatus::Completed);
            }
        }
        "claim" => {
            let start: u128 = std::env::var("PARLANCE_WORKER_START")
                .unwrap()
                .parse()
                .unwrap();
            while std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis()
                < start
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            match store.begin_run(&thread, &json!({})).await {
                Ok(run) => println!("\n@@won {}", run.id),
                Err(e) => println!("\n@@busy {e}"),
            }
        }
        "pause" => {
            let mut call = Message::new(
                Role::Assistant,
                vec![Block::tool_call("r1", "refund", json!({"amount": 70}))],
            );
            call.finish_reason = Some(FinishReason::ToolCalls);
            let model = ScriptedModel::new([call]);
            let r = ThreadRunner::new(store, agent(model))
                .run(&thread, vec![Message::user("refund 70")])
                .await
                .unwrap();
            println!("\n@@{} {}", r.status.as_str(), r.id.unwrap());
        }
        "resume" => {
            let run_id = std::env::var("PARLANCE_WORKER_RUN").unwrap();
            let last = store.history(&thread).await.unwrap().pop().unwrap();
            let Block::ApprovalRequest {
                approval_request: req,
            } = &last.content[0]
            else {
                panic!("no pending request")
            };
            let d = Decision {
                tool_call_id: req.tool_call_id.clone(),
                digest: req.digest.clone(),
                decision: DecisionKind::Approved,
                arguments: None,
                reason: None,
                content: None,
            };
            let model = ScriptedModel::new([Message::assistant("Refunded 70.")]);
            let r = ThreadRunner::new(store, agent(model))
                .resume(&run_id, vec![d])
                .await
                .unwrap();
            println!("\n@@{}", r.status.as_str());
        }
        "steps" => {
            // Steps of STEP messages, back to back, until killed: each one
            // is one append (several scripts of statements on SQLite).
            let run = store.begin_run(&thread, &json!({})).await.unwrap();
            for i in 0u64.. {
                let step: Vec<Message> = (0..STEP)
                    .map(|k| Message::user(format!("step {i} message {k}")))
                    .collect();
                store.append(&run, &step).await.unwrap();
                if i == 0 {
                    println!("\n@@ready");
                }
            }
        }
        other => panic!("unknown worker mode {other}"),
    }
}

fn spawn(mode: &str, db: &str, thread: &str, extra: &[(&str, String)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        "worker",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("PARLANCE_WORKER", mode)
    .env("PARLANCE_WORKER_DB", db)
    .env("PARLANCE_WORKER_THREAD", thread)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// The worker's printed lines (the test harness adds its own; ours are plain).
fn lines(child: Child) -> Vec<String> {
    let out = child.wait_with_output().unwrap();
    // The worker marks its own lines with `@@` (the test harness prints too).
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("@@"))
        .map(str::to_string)
        .collect();
    v.extend(
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("panicked"))
            .map(str::to_string),
    );
    v
}

/// Starts a `mode` worker on `thread`, waits for its "ready" line, lets it
/// work for a random 0 to `max_ms` milliseconds, then kills it with SIGKILL.
fn kill_once_ready(mode: &str, db: &str, thread: &str, max_ms: u64, round: usize) {
    let mut child = spawn(mode, db, thread, &[]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("ready") {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            panic!("round {round}: the {mode} worker ended before it was ready");
        }
    }
    std::thread::sleep(Duration::from_millis(rand::random::<u64>() % max_ms));
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
}

fn temp_db() -> String {
    let dir = std::env::temp_dir().join(format!(
        "parlance-proc-{}-{}",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("threads.db").to_string_lossy().to_string()
}

/// Kill a worker mid-run 200 times; after each kill the thread must load,
/// be consistent once repaired, and take a next run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_points_leaves_a_consistent_thread() {
    let db = temp_db();
    let store = Store::open(&db).await.unwrap().with_lease(LEASE);
    let mut thread = store.create_thread(None, json!({})).await.unwrap().id;
    let started = Instant::now();
    let mut repairs = 0;
    for round in 0..200 {
        if round % 25 == 0 {
            thread = store
                .create_thread(None, json!({"round": round}))
                .await
                .unwrap()
                .id;
        }
        kill_once_ready("loop", &db, &thread, 40, round);

        // Everything stored reads back as canonical messages.
        let history = store
            .history(&thread)
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        let value = serde_json::to_value(&history).unwrap();
        parlance_format::messages_from_value(&value, "")
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        // A next run takes the thread over (after the dead run's lease),
        // repairs it if needed, and succeeds.
        tokio::time::sleep(LEASE + Duration::from_millis(20)).await;
        let model = ScriptedModel::new([Message::assistant("checked")]);
        // The checking run itself holds a long lease: a 60 ms one could run
        // out on a busy machine between two writes, and a run whose lease
        // ran out stops before writing.
        let checker = store.clone().with_lease(Duration::from_secs(30));
        let r = ThreadRunner::new(checker, agent(model))
            .run(&thread, vec![Message::user("still there?")])
            .await
            .unwrap();
        assert_eq!(r.status, RunStatus::Completed, "round {round}");
        let history = store.history(&thread).await.unwrap();
        assert_eq!(
            repair(&history),
            None,
            "round {round}: every tool call has a result"
        );
        parlance_format::check_links(&history, "").unwrap_or_else(|e| panic!("round {round}: {e}"));
        answers_only_with_outcomes(&store, &thread, round).await;
        // Count the repairs this round made (the last run's repair, if any,
        // sits just before its input).
        let n = history.len();
        if n >= 3
            && history[n - 3]
                .metadata
                .as_ref()
                .is_some_and(|md| md.contains_key("parlance_repair"))
        {
            repairs += 1;
        }
    }
    eprintln!(
        "200 kills in {:?}; {repairs} of them left a step half done that was repaired",
        started.elapsed()
    );
    assert!(
        repairs > 0,
        "no kill landed mid-step: the test did not exercise repair"
    );
}

/// A final answer (an assistant message with no tool call) is stored
/// with its run's outcome, in one transaction: a run killed at any point
/// has none stored, and a completed run has its own.
async fn answers_only_with_outcomes(store: &Store, thread: &str, round: usize) {
    let messages = store.all_messages(thread).await.unwrap();
    for run in store.runs(thread).await.unwrap() {
        let answered = messages.iter().any(|m| {
            m.run_id.as_deref() == Some(run.id.as_str())
                && m.message.role == Role::Assistant
                && m.message.tool_calls().next().is_none()
        });
        assert_eq!(
            answered,
            run.status == "completed",
            "round {round}: run {} is {} {} a final answer stored",
            run.id,
            run.status,
            if answered { "with" } else { "without" }
        );
    }
}

/// Messages per step of the "steps" worker: more than one script's worth.
const STEP: usize = 40;

/// A writer killed with SIGKILL in the middle of its writes, 30 times:
/// every step it wrote is whole (all its messages, in order), none is
/// half there, and the thread reads back.
async fn sigkill_mid_write_leaves_whole_steps(url: &str) {
    let store = Store::open(url).await.unwrap();
    for round in 0..30 {
        let thread = store.create_thread(None, json!({})).await.unwrap().id;
        kill_once_ready("steps", url, &thread, 30, round);
        let history = store
            .history(&thread)
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(!history.is_empty(), "round {round}: the first step is gone");
        assert_eq!(
            history.len() % STEP,
            0,
            "round {round}: a step was half written ({} messages)",
            history.len()
        );
        for (n, m) in history.iter().enumerate() {
            assert_eq!(
                m.text(),
                format!("step {} message {}", n / STEP, n % STEP),
                "round {round}: message {n}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_write_on_sqlite() {
    sigkill_mid_write_leaves_whole_steps(&temp_db()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_write_on_postgres() {
    let Some(url) = postgres_url() else { return };
    sigkill_mid_write_leaves_whole_steps(&url).await;
}

async fn race_and_hand_over(url: &str) {
    let store = Store::open(url)
        .await
        .unwrap()
        .with_lease(Duration::from_secs(30));
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let start = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 700;
    let a = spawn(
        "claim",
        url,
        &thread,
        &[("PARLANCE_WORKER_START", start.to_string())],
    );
    let b = spawn(
        "claim",
        url,
        &thread,
        &[("PARLANCE_WORKER_START", start.to_string())],
    );
    let all = [lines(a), lines(b)].concat();
    let results: Vec<String> = all
        .iter()
        .filter(|l| l.starts_with("won") || l.starts_with("busy"))
        .cloned()
        .collect();
    assert_eq!(results.len(), 2, "{all:?}");
    let won: Vec<&String> = results.iter().filter(|l| l.starts_with("won")).collect();
    let busy: Vec<&String> = results.iter().filter(|l| l.starts_with("busy")).collect();
    assert_eq!((won.len(), busy.len()), (1, 1), "{results:?}");
    assert!(
        busy[0].contains(&format!("thread {thread} is busy")),
        "{}",
        busy[0]
    );

    // An approval written by one process, decided and resumed by another.
    let thread = store.create_thread(None, json!({})).await.unwrap().id;
    let paused = lines(spawn("pause", url, &thread, &[]));
    let line = paused
        .iter()
        .find(|l| l.starts_with("requires_approval"))
        .unwrap_or_else(|| panic!("{paused:?}"));
    let run_id = line.split(' ').nth(1).unwrap().to_string();
    assert_eq!(
        store.run(&run_id).await.unwrap().status,
        "requires_approval"
    );
    let resumed = lines(spawn(
        "resume",
        url,
        &thread,
        &[("PARLANCE_WORKER_RUN", run_id.clone())],
    ));
    assert!(resumed.iter().any(|l| l == "completed"), "{resumed:?}");
    let history = store.history(&thread).await.unwrap();
    assert_eq!(history.last().unwrap().text(), "Refunded 70.");
    assert_eq!(
        history[2].content[0].as_tool_result().unwrap().content[0].as_text(),
        Some("refunded 70")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_postgres() {
    let Some(url) = postgres_url() else { return };
    race_and_hand_over(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_sqlite() {
    race_and_hand_over(&temp_db()).await;
}
