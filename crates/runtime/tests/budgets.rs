//! Thread and owner budgets on a real store: what earlier runs committed
//! counts for the next; and two processes spending one owner's budget at
//! once on one PostgreSQL pass its limit by at most one step per run in
//! flight (the step each run had begun when the other's spending reached
//! the limit), with `stop`.
//!
//! The workers are this test binary run again with `PARLANCE_BUDGET_WORKER`.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use parlance_agent::{Agent, Budget, Caps, Tool, ToolContext, ToolError};
use parlance_format::{Block, Message, Role, RunStatus, Usage};
use parlance_model::ModelRequest;
use parlance_model::scripted::ScriptedModel;
use parlance_runtime::ThreadRunner;
use parlance_store::Store;
use parlance_testkit::both;
use parlance_testkit::store::postgres_url;
use serde_json::{Value, json};

/// Tokens each model step reports.
const STEP_TOKENS: u64 = 100;

/// A model that calls `work` after anything but tool results, and
/// answers after them; `steps` answers at most.
fn model(steps: usize) -> ScriptedModel {
    let model = ScriptedModel::new([]);
    for i in 0..steps {
        model.push_step(Box::new(move |req: &ModelRequest| {
            // The closing request offers no tool.
            let mut m = if req.tools.is_empty() {
                Message::assistant("Out of budget: I stopped.")
            } else {
                Message::new(
                    Role::Assistant,
                    vec![Block::tool_call(
                        format!("c{}_{i}", std::process::id()),
                        "work",
                        json!({}),
                    )],
                )
            };
            m.usage = Some(Usage {
                input_tokens: STEP_TOKENS - 10,
                output_tokens: 10,
                ..Default::default()
            });
            Ok(m)
        }));
    }
    model
}

fn agent(model: ScriptedModel, budget: Budget) -> Agent {
    Agent::builder(Arc::new(model))
        .tool(Tool::new(
            "work",
            "Work a little.",
            |_a: Value, _c: ToolContext| async move {
                tokio::time::sleep(Duration::from_millis(2)).await;
                Ok::<_, ToolError>("ok")
            },
        ))
        .limits(parlance_agent::Limits {
            max_model_calls: 10_000,
            ..Default::default()
        })
        .budget(budget)
        .build()
        .unwrap()
}

both!(
    a_thread_budget_counts_every_run_of_the_thread,
    an_owner_budget_counts_every_thread_of_the_owner
);

async fn a_thread_budget_counts_every_run_of_the_thread(store: Store) {
    let t = store.create_thread(None, json!({})).await.unwrap();
    let runner = ThreadRunner::new(
        store.clone(),
        agent(model(100), Budget::new().thread(Caps::new().tokens(450))),
    );
    // Five steps of 100 tokens (the fifth reaches 450), then the
    // closing answer: 600 counted.
    let first = runner.run(&t.id, vec![Message::user("go")]).await.unwrap();
    assert_eq!(first.status, RunStatus::Failed);
    let e = first.error.unwrap();
    assert_eq!(
        e.message,
        "the thread's budget is exhausted: 500 of 450 tokens"
    );
    assert_eq!(
        first.messages.last().unwrap().text(),
        "Out of budget: I stopped."
    );
    assert_eq!(store.spent(&t.id).await.unwrap().thread.tokens, 600);
    // The next run finds the budget spent and asks no model.
    let second = runner
        .run(&t.id, vec![Message::user("more")])
        .await
        .unwrap();
    assert_eq!(second.error.unwrap().code, "budget_exhausted");
    assert_eq!(second.messages.len(), 1, "only its input");
    assert_eq!(store.spent(&t.id).await.unwrap().thread.tokens, 600);
    // Stored: the outcome, and the closing answer as the first run's last message.
    let runs = store.runs(&t.id).await.unwrap();
    assert!(runs.iter().all(|r| r.status == "failed"));
    let texts: Vec<String> = store
        .all_messages(&t.id)
        .await
        .unwrap()
        .iter()
        .map(|m| m.message.text())
        .collect();
    assert!(texts.contains(&"Out of budget: I stopped.".to_string()));
}

async fn an_owner_budget_counts_every_thread_of_the_owner(store: Store) {
    let owner = format!("owner-{}", rand::random::<u32>());
    let a = store.create_thread(Some(&owner), json!({})).await.unwrap();
    let b = store.create_thread(Some(&owner), json!({})).await.unwrap();
    let someone_else = format!("owner-{}", rand::random::<u32>());
    let other = store
        .create_thread(Some(&someone_else), json!({}))
        .await
        .unwrap();
    let runner = ThreadRunner::new(
        store.clone(),
        agent(
            model(100),
            Budget::new().owner_day(Caps::new().tool_calls(3)).stop(),
        ),
    );
    let r = runner.run(&a.id, vec![Message::user("go")]).await.unwrap();
    assert_eq!(
        r.error.unwrap().message,
        "the owner's budget for today (UTC) is exhausted: 3 of 3 tool calls"
    );
    let r = runner.run(&b.id, vec![Message::user("go")]).await.unwrap();
    assert_eq!(r.error.unwrap().code, "budget_exhausted");
    assert_eq!(store.spent(&b.id).await.unwrap().thread.tool_calls, 0);
    // Another owner's thread is not touched by it.
    let r = runner
        .run(&other.id, vec![Message::user("go")])
        .await
        .unwrap();
    assert_eq!(
        store.spent(&other.id).await.unwrap().owner_day.tool_calls,
        3
    );
    assert_eq!(r.error.unwrap().code, "budget_exhausted");
}

/// Runs per process, each on a thread of its own of the one owner.
const RUNS: usize = 4;
/// The owner's daily limit.
const LIMIT: u64 = 3_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "run as a child process by the test below"]
async fn budget_worker() {
    let Ok(url) = std::env::var("PARLANCE_BUDGET_WORKER") else {
        return;
    };
    let owner = std::env::var("PARLANCE_BUDGET_OWNER").unwrap();
    let store = Store::open(&url).await.unwrap();
    let runner = ThreadRunner::new(
        store.clone(),
        agent(
            model(10_000),
            Budget::new().owner_day(Caps::new().tokens(LIMIT)).stop(),
        ),
    );
    let mut runs = Vec::new();
    for _ in 0..RUNS {
        let t = store.create_thread(Some(&owner), json!({})).await.unwrap();
        let runner = runner.clone();
        runs.push(tokio::spawn(async move {
            runner.run(&t.id, vec![Message::user("go")]).await.unwrap()
        }));
    }
    for r in runs {
        let r = r.await.unwrap();
        println!("@@{}", r.error.map(|e| e.code).unwrap_or_default());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_spending_one_owners_budget_pass_it_by_at_most_a_step_per_run() {
    let Some(url) = postgres_url() else { return };
    let owner = format!("owner-{}", rand::random::<u32>());
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "budget_worker",
                    "--ignored",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env("PARLANCE_BUDGET_WORKER", &url)
                .env("PARLANCE_BUDGET_OWNER", &owner)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut ends = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // (The harness's "test budget_worker ..." begins the first line.)
        ends.extend(
            text.lines()
                .filter_map(|l| l.split_once("@@"))
                .map(|(_, code)| code.to_string()),
        );
    }
    assert_eq!(ends, vec!["budget_exhausted"; 2 * RUNS]);
    let store = Store::open(&url).await.unwrap();
    let t = store.create_thread(Some(&owner), json!({})).await.unwrap();
    let spent = store.spent(&t.id).await.unwrap().owner_day.tokens;
    let runs_in_flight = (2 * RUNS) as u64;
    assert!(spent >= LIMIT, "{spent}");
    assert!(
        spent < LIMIT + runs_in_flight * STEP_TOKENS,
        "spent {spent}: more than a step per run past {LIMIT}"
    );
    eprintln!(
        "owner spent {spent} tokens of {LIMIT} ({} past)",
        spent - LIMIT
    );
}
