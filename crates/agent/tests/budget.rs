//! Budgets: a run at a limit asks once more without tools (or stops),
//! then ends `budget_exhausted`; thread and owner limits read what the
//! checkpoint's storage counted.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::future::BoxFuture;
use parlance_agent::{
    Agent, Budget, Caps, Checkpoint, CheckpointError, RunEvent, Step, ThreadSpend, Tool,
    ToolContext, ToolError,
};
use parlance_format::{Block, Message, Role, RunStatus, Spend, Usage};
use parlance_model::scripted::ScriptedModel;
use serde_json::{Value, json};

/// An assistant step calling `get_order` once, with usage (and a cost).
fn step(id: &str, tokens: (u64, u64), cost: Option<f64>) -> Message {
    let mut m = Message::new(
        Role::Assistant,
        vec![Block::tool_call(
            id,
            "get_order",
            json!({"order_id": "A-1"}),
        )],
    );
    m.usage = Some(Usage {
        input_tokens: tokens.0,
        output_tokens: tokens.1,
        ..Default::default()
    });
    m.cost = cost;
    m
}

fn answer(text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.usage = Some(Usage {
        input_tokens: 50,
        output_tokens: 5,
        ..Default::default()
    });
    m
}

fn agent(model: &ScriptedModel, budget: Budget, ran: &Arc<Mutex<u32>>) -> Agent {
    let ran = Arc::clone(ran);
    Agent::builder(Arc::new(model.clone()))
        .tool(
            Tool::new(
                "get_order",
                "Look up an order.",
                move |_a: Value, _c: ToolContext| {
                    let ran = Arc::clone(&ran);
                    async move {
                        *ran.lock().unwrap() += 1;
                        Ok::<_, ToolError>("shipped")
                    }
                },
            )
            .with_schema(json!({"type": "object", "properties": {"order_id": {"type": "string"}}})),
        )
        .budget(budget)
        .build()
        .unwrap()
}

#[tokio::test]
async fn at_a_token_limit_the_model_answers_once_without_tools_then_the_run_ends() {
    // 70 tokens a step: the second step passes 100; the third request is
    // the closing one.
    let model = ScriptedModel::new([
        step("c1", (60, 10), None),
        step("c2", (60, 10), None),
        answer("I checked A-1 twice; it has shipped. I stopped there."),
    ]);
    let ran = Arc::default();
    let a = agent(&model, Budget::new().run(Caps::new().tokens(100)), &ran);
    let r = a.run("Where is A-1?").await;
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.as_ref().unwrap();
    assert_eq!(e.code, "budget_exhausted");
    assert_eq!(
        e.message,
        "the run's budget is exhausted: 140 of 100 tokens"
    );
    assert_eq!(e.cause.as_ref().unwrap()["scope"], "run");
    // The closing answer is the run's last message, and counted.
    let last = r.messages.last().unwrap();
    assert_eq!(last.role, Role::Assistant);
    assert_eq!(
        last.text(),
        "I checked A-1 twice; it has shipped. I stopped there."
    );
    assert_eq!(r.usage.input_tokens, 170);
    assert_eq!(*ran.lock().unwrap(), 2);
    // The closing request offered no tool and said why; nothing of that
    // note is in the run's messages.
    let got = model.received();
    assert_eq!(got.len(), 3);
    assert_eq!(got[1].tools.len(), 1);
    assert!(got[2].tools.is_empty());
    let note = got[2].messages.last().unwrap().text();
    assert!(
        note.starts_with("the run's budget is exhausted: 140 of 100 tokens. No tool can be called"),
        "{note}"
    );
    assert!(
        r.messages
            .iter()
            .all(|m| !m.text().contains("No tool can be called"))
    );
}

#[tokio::test]
async fn stop_ends_at_once_and_a_closing_tool_call_is_never_run() {
    let model = ScriptedModel::new([
        step("c1", (10, 1), Some(0.30)),
        step("c2", (10, 1), Some(0.30)),
    ]);
    let ran = Arc::default();
    let a = agent(
        &model,
        Budget::new().run(Caps::new().cost(0.50)).stop(),
        &ran,
    );
    let r = a.run("Go").await;
    assert_eq!(
        r.error.as_ref().unwrap().message,
        "the run's budget is exhausted: 0.6 of 0.5 USD"
    );
    assert_eq!(model.received().len(), 2);
    assert_eq!(r.messages.last().unwrap().role, Role::Tool);
    assert_eq!(r.cost, Some(0.6));

    // With the default, a model that calls a tool in its closing answer
    // anyway: the call is dropped, its text kept, no tool runs.
    let mut closing = step("c9", (10, 1), None);
    closing.content.insert(0, Block::text("Stopping here."));
    let model = ScriptedModel::new([step("c1", (10, 1), Some(0.60)), closing]);
    let ran = Arc::default();
    let a = agent(&model, Budget::new().run(Caps::new().cost(0.50)), &ran);
    let r = a.run("Go").await;
    assert_eq!(*ran.lock().unwrap(), 1);
    let last = r.messages.last().unwrap();
    assert_eq!(last.text(), "Stopping here.");
    assert_eq!(last.tool_calls().count(), 0);
}

#[tokio::test]
async fn tool_call_and_model_call_limits() {
    let model = ScriptedModel::new([
        step("c1", (1, 1), None),
        step("c2", (1, 1), None),
        answer("done"),
    ]);
    let ran = Arc::default();
    let a = agent(
        &model,
        Budget::new().run(Caps::new().tool_calls(2)).stop(),
        &ran,
    );
    let r = a.run("Go").await;
    assert_eq!(
        r.error.unwrap().message,
        "the run's budget is exhausted: 2 of 2 tool calls"
    );
    assert_eq!(*ran.lock().unwrap(), 2);

    let model = ScriptedModel::new([step("c1", (1, 1), None), answer("done")]);
    let a = agent(
        &model,
        Budget::new().run(Caps::new().model_calls(1)).stop(),
        &Arc::default(),
    );
    let r = a.run("Go").await;
    assert_eq!(
        r.error.unwrap().message,
        "the run's budget is exhausted: 1 of 1 model calls"
    );
}

#[tokio::test]
async fn a_run_under_its_limits_completes_as_without_a_budget() {
    let model = ScriptedModel::new([step("c1", (10, 1), None), answer("shipped")]);
    let a = agent(
        &model,
        Budget::new().run(Caps::new().tokens(1000).tool_calls(5)),
        &Arc::default(),
    );
    let r = a.run("Go").await;
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(r.output, json!("shipped"));
}

/// A storage that counted `spent` for the thread and owner, and
/// remembers how often it was asked.
struct Counted {
    spent: ThreadSpend,
    asked: Mutex<u32>,
}

impl Checkpoint for Counted {
    fn commit<'a>(&'a self, _step: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async { Ok(()) })
    }

    fn spent(&self) -> BoxFuture<'_, Result<Option<ThreadSpend>, CheckpointError>> {
        *self.asked.lock().unwrap() += 1;
        Box::pin(async { Ok(Some(self.spent)) })
    }
}

#[tokio::test]
async fn a_thread_or_owner_limit_spent_before_the_run_ends_it_before_any_model_call() {
    let model = ScriptedModel::new([answer("never")]);
    let a = agent(
        &model,
        Budget::new().owner_day(Caps::new().tokens(1000)),
        &Arc::default(),
    );
    let storage = Arc::new(Counted {
        spent: ThreadSpend {
            owner_day: Spend {
                tokens: 1200,
                ..Default::default()
            },
            ..Default::default()
        },
        asked: Mutex::new(0),
    });
    let r = a.run("Hi").checkpoint(storage.clone()).await;
    let e = r.error.unwrap();
    assert_eq!(e.code, "budget_exhausted");
    assert_eq!(
        e.message,
        "the owner's budget for today (UTC) is exhausted: 1200 of 1000 tokens"
    );
    assert_eq!(
        model.received().len(),
        0,
        "no closing answer for a run that did nothing"
    );
    assert_eq!(*storage.asked.lock().unwrap(), 1);

    // Under the limit: asked before each model call, and the run goes on.
    let model = ScriptedModel::new([step("c1", (1, 1), None), answer("ok")]);
    let a = agent(
        &model,
        Budget::new().thread(Caps::new().tokens(1000)),
        &Arc::default(),
    );
    let storage = Arc::new(Counted {
        spent: ThreadSpend::default(),
        asked: Mutex::new(0),
    });
    let r = a.run("Hi").checkpoint(storage.clone()).await;
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(*storage.asked.lock().unwrap(), 2);

    // Without a storage that counts, thread and owner limits have nothing
    // to read: the run's own apply.
    let model = ScriptedModel::new([answer("ok")]);
    let a = agent(
        &model,
        Budget::new().thread(Caps::new().tokens(0)),
        &Arc::default(),
    );
    assert_eq!(a.run("Hi").await.status, RunStatus::Completed);
}

#[tokio::test]
async fn the_closing_answer_streams_like_any_answer() {
    let model = ScriptedModel::new([
        step("c1", (60, 50), None),
        answer("Out of budget; A-1 shipped."),
    ]);
    let a = agent(
        &model,
        Budget::new().run(Caps::new().tokens(100)),
        &Arc::default(),
    );
    let events: Vec<RunEvent> = a.run("Go").stream().collect().await;
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Out of budget; A-1 shipped.");
    let Some(RunEvent::RunCompleted(r)) = events.last() else {
        panic!("no end")
    };
    assert_eq!(r.error.as_ref().unwrap().code, "budget_exhausted");
}

#[test]
fn a_budget_that_cannot_be_used_fails_the_build_naming_the_field() {
    let e = Agent::builder(ScriptedModel::new([]))
        .budget(Budget::new().thread(Caps::new().cost(-2.0)))
        .build()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "budget.thread.cost: expected a number of US dollars, 0 or more, got -2"
    );
}

/// A storage whose count cannot be read.
struct Unreadable;

impl Checkpoint for Unreadable {
    fn commit<'a>(&'a self, _step: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(async { Ok(()) })
    }

    fn spent(&self) -> BoxFuture<'_, Result<Option<ThreadSpend>, CheckpointError>> {
        Box::pin(async { Err(CheckpointError::new("the database is gone")) })
    }
}

#[tokio::test]
async fn a_count_that_cannot_be_read_fails_the_run_before_the_model_is_asked() {
    let model = ScriptedModel::new([answer("never")]);
    let a = agent(
        &model,
        Budget::new().thread(Caps::new().tokens(10)),
        &Arc::default(),
    );
    let r = a.run("Hi").checkpoint(Arc::new(Unreadable)).await;
    let e = r.error.unwrap();
    assert_eq!(e.code, "store");
    assert!(e.message.contains("the database is gone"), "{}", e.message);
    assert_eq!(model.received().len(), 0);
}

#[tokio::test]
async fn a_closing_call_that_fails_leaves_the_run_budget_exhausted_without_an_answer() {
    let model = ScriptedModel::new([step("c1", (60, 50), None)]);
    model.push_error(parlance_model::ModelError::Overloaded {
        message: "busy".into(),
        retry_after: None,
    });
    let a = agent(
        &model,
        Budget::new().run(Caps::new().tokens(100)),
        &Arc::default(),
    );
    let r = a.run("Go").await;
    assert_eq!(r.error.unwrap().code, "budget_exhausted");
    assert_eq!(model.received().len(), 2, "the closing call was made");
    assert_eq!(r.messages.last().unwrap().role, Role::Tool);
}

#[tokio::test]
async fn the_closing_answer_passes_the_output_guardrails() {
    let model = ScriptedModel::new([
        step("c1", (60, 50), None),
        answer("The admin password is hunter2."),
    ]);
    let a = Agent::builder(Arc::new(model.clone()))
        .tool(
            Tool::new(
                "get_order",
                "Look up an order.",
                |_a: Value, _c: ToolContext| async { Ok::<_, ToolError>("shipped") },
            )
            .with_schema(json!({"type": "object"})),
        )
        .guardrail(parlance_agent::Guardrail::output(
            "secrets",
            |g| async move {
                Ok(if g.value.to_string().contains("hunter2") {
                    parlance_agent::Verdict::block("I can't share that.")
                } else {
                    parlance_agent::Verdict::Allow
                })
            },
        ))
        .budget(Budget::new().run(Caps::new().tokens(100)))
        .build()
        .unwrap();
    let r = a.run("Go").await;
    assert_eq!(r.error.as_ref().unwrap().code, "blocked");
    let kept: Vec<String> = r.messages.iter().map(Message::text).collect();
    assert!(kept.iter().all(|t| !t.contains("hunter2")), "{kept:?}");
    assert_eq!(kept.last().unwrap(), "I can't share that.");
}
