//! The way in, as a user writes it: `agent.run(…)` from a string, a
//! message or messages, with turns, a thread, a checkpoint, awaited or
//! streamed; resume the same way; `into_result` and `text`; tools without
//! a context and with their error type inferred.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use futures::future::BoxFuture;
use parlance_agent::{
    Agent, Checkpoint, CheckpointError, Limits, Resume, RunEvent, Step, Tool, ToolError,
};
use parlance_format::{
    Block, Decision, DecisionKind, FinishReason, Message, Role, RunStatus, ToolResult, ToolStatus,
};
use parlance_model::ModelError;
use parlance_model::scripted::ScriptedModel;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

fn says(text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.finish_reason = Some(FinishReason::Stop);
    m
}

fn calls(list: &[(&str, &str, Value)]) -> Message {
    let mut m = Message::new(
        Role::Assistant,
        list.iter()
            .map(|(id, name, args)| Block::tool_call(*id, *name, args.clone()))
            .collect(),
    );
    m.finish_reason = Some(FinishReason::ToolCalls);
    m
}

/// The texts of the user and assistant messages the model got on call `n`.
fn context(model: &ScriptedModel, n: usize) -> Vec<String> {
    model.received()[n]
        .messages
        .iter()
        .map(|m| format!("{}: {}", m.role.as_str(), m.text()))
        .collect()
}

#[tokio::test]
async fn run_takes_a_str_a_string_a_message_or_messages() {
    let model = ScriptedModel::new(["a", "b", "c", "d"].map(says));
    let agent = Agent::builder(model.clone()).build().unwrap();
    assert_eq!(agent.run("one").await.text(), "a");
    assert_eq!(agent.run(String::from("two")).await.text(), "b");
    assert_eq!(agent.run(Message::user("three")).await.text(), "c");
    let r = agent
        .run(vec![Message::user("four"), Message::user("and five")])
        .await;
    assert_eq!(r.text(), "d");
    assert_eq!(context(&model, 0), ["user: one"]);
    assert_eq!(context(&model, 1), ["user: two"]);
    assert_eq!(context(&model, 2), ["user: three"]);
    assert_eq!(context(&model, 3), ["user: four", "user: and five"]);
}

#[tokio::test]
async fn turns_thread_and_id_are_set_on_the_builder() {
    let model = ScriptedModel::new([says("Hello."), says("Again.")]);
    let agent = Agent::builder(model.clone()).build().unwrap();
    let first = agent.run("Hi").thread("th_1").id("run_1").await;
    assert_eq!(first.id.as_deref(), Some("run_1"));
    assert_eq!(first.thread_id.as_deref(), Some("th_1"));
    let second = agent.run("Once more").turns([first]).await;
    assert_eq!(second.text(), "Again.");
    assert_eq!(
        context(&model, 1),
        ["user: Hi", "assistant: Hello.", "user: Once more"]
    );
}

#[tokio::test]
async fn a_stream_is_unpin_and_its_response_is_one_call_away() {
    let model = ScriptedModel::new([says("Streamed."), says("Skipped to the end.")]);
    let agent = Agent::builder(model).build().unwrap();
    // No pin!: the stream is Unpin.
    let mut events = agent.run("Hi").id("r1").stream();
    let mut seen = Vec::new();
    while let Some(e) = events.next().await {
        seen.push(e);
    }
    let Some(RunEvent::RunCompleted(last)) = seen.last() else {
        panic!("the last event is RunCompleted: {seen:?}");
    };
    assert_eq!(last.text(), "Streamed.");
    assert!(
        seen.iter()
            .any(|e| matches!(e, RunEvent::TextDelta(t) if t == "Streamed."))
    );
    let response = agent.run("Again").stream().response().await;
    assert_eq!(response.text(), "Skipped to the end.");
}

#[tokio::test]
async fn a_failed_run_is_an_error_with_its_code_and_cause() {
    let model = ScriptedModel::new([]);
    model.push_error(ModelError::Authentication {
        message: "bad key".into(),
    });
    let agent = Agent::builder(model).build().unwrap();
    let r = agent.run("Hi").await;
    assert_eq!(r.text(), "", "no answer");
    let e = r.into_result().unwrap_err();
    assert_eq!(e.code, "model_error");
    assert_eq!(e.cause.as_ref().unwrap()["kind"], "authentication");
    assert_eq!(
        e.to_string(),
        "run failed (model_error): authentication failed: bad key"
    );
    // `?` into anyhow works: the error is a std error.
    let through: anyhow::Result<()> = Err(e.into());
    assert!(through.is_err());
}

#[derive(Deserialize, JsonSchema)]
struct Number {
    /// A whole number, as text.
    text: String,
}

fn boxed(text: &str) -> Result<i64, Box<dyn std::error::Error + Send + Sync>> {
    Ok(text.parse::<i64>()?)
}

fn with_anyhow(text: &str) -> anyhow::Result<i64> {
    Ok(text.parse::<i64>()?)
}

/// Tools whose closures take only their arguments and name no error type.
fn tools() -> Vec<Tool> {
    vec![
        Tool::new("parse", "Parse a number.", |a: Number| async move {
            let n: i64 = a.text.parse()?;
            Ok(n * 2)
        }),
        Tool::new("boxed", "Parse, boxed errors.", |a: Number| async move {
            Ok(boxed(&a.text)?.to_string())
        }),
        Tool::new("anyhow", "Parse, anyhow errors.", |a: Number| async move {
            Ok(with_anyhow(&a.text)?.to_string())
        }),
        Tool::new("picky", "Refuses on purpose.", |a: Number| async move {
            match a.text.as_str() {
                "" => Err(ToolError::new("give me a number")),
                "1" => Ok("one"),
                other => Err(format!("{other} is not one I like").into()),
            }
        }),
        Tool::with_context("whoami", "Names the call.", |_: Value, ctx| async move {
            Ok(format!("call {} of run {}", ctx.call_id, ctx.run_id))
        }),
    ]
}

#[tokio::test]
async fn tool_errors_are_inferred_and_question_marks_give_tool_failed() {
    let args = |t: &str| json!({"text": t});
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "parse", args("21")),
            ("c2", "parse", args("x")),
            ("c3", "boxed", args("y")),
            ("c4", "anyhow", args("z")),
            ("c5", "picky", args("")),
            ("c6", "picky", args("7")),
            ("c7", "whoami", json!({})),
        ]),
        says("Done."),
    ]);
    let mut b = Agent::builder(model).limits(Limits::default());
    for t in tools() {
        b = b.tool(t);
    }
    let r = b.build().unwrap().run("go").id("run_9").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let results: Vec<&ToolResult> = r.messages[2]
        .content
        .iter()
        .filter_map(Block::as_tool_result)
        .collect();
    let got: Vec<(ToolStatus, String)> = results
        .iter()
        .map(|r| {
            let text: String = r.content.iter().filter_map(Block::as_text).collect();
            let json = r.content.iter().find_map(|b| match b {
                Block::Json { json } => Some(json.to_string()),
                _ => None,
            });
            (r.status, json.unwrap_or(text))
        })
        .collect();
    assert_eq!(got[0], (ToolStatus::Ok, "42".into()));
    assert_eq!(got[1].0, ToolStatus::ToolFailed);
    assert!(got[1].1.contains("invalid digit"), "{:?}", got[1]);
    assert_eq!(got[2].0, ToolStatus::ToolFailed, "Box<dyn Error>");
    assert_eq!(got[3].0, ToolStatus::ToolFailed, "anyhow::Error");
    assert_eq!(got[4], (ToolStatus::Error, "give me a number".into()));
    assert_eq!(
        got[5],
        (ToolStatus::Error, "7 is not one I like".into()),
        "a plain string is a message for the model"
    );
    assert_eq!(got[6], (ToolStatus::Ok, "call c7 of run run_9".into()));
}

/// A tool's own error type, with a cause of its own.
#[derive(Debug)]
struct LedgerDown(std::io::Error);

impl std::fmt::Display for LedgerDown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the ledger is down")
    }
}

impl std::error::Error for LedgerDown {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

#[tokio::test]
async fn under_fail_the_run_errors_source_is_the_tools_own_error() {
    use std::error::Error;
    let run = |tool: &'static str, args: Value| async move {
        let model = ScriptedModel::new([calls(&[("c1", tool, args)]), says("unreached")]);
        let ledger = Tool::with_context("ledger", "Books.", |_: Value, _ctx| async move {
            let e = LedgerDown(std::io::Error::other("connection refused"));
            Err::<String, _>(ToolError::from(e))
        });
        let mut b = Agent::builder(model)
            .limits(Limits {
                on_tool_exception: parlance_agent::OnToolException::Fail,
                ..Limits::default()
            })
            .tool(ledger);
        for t in tools() {
            b = b.tool(t);
        }
        b.build()
            .unwrap()
            .run("go")
            .await
            .into_result()
            .unwrap_err()
    };

    let e = run("parse", json!({"text": "x"})).await;
    assert_eq!(e.code, "tool_failed");
    assert_eq!(
        e.cause.as_ref().unwrap()["tool"],
        "parse",
        "the JSON cause stays"
    );
    let source = e.source().expect("the tool's error");
    assert!(
        source.downcast_ref::<std::num::ParseIntError>().is_some(),
        "{source:?}"
    );

    // A chain of the tool's own goes on below it.
    let e = run("ledger", json!({})).await;
    let source = e.source().unwrap();
    assert!(source.downcast_ref::<LedgerDown>().is_some(), "{source:?}");
    assert_eq!(source.source().unwrap().to_string(), "connection refused");

    // anyhow and boxed errors: the same message, as a std error.
    let e = run("anyhow", json!({"text": "z"})).await;
    assert_eq!(
        e.source().unwrap().to_string(),
        "invalid digit found in string"
    );
    let e = run("boxed", json!({"text": "y"})).await;
    let source = e.source().unwrap();
    assert!(source.downcast_ref::<std::num::ParseIntError>().is_some());

    // What went through JSON has the cause only.
    let failed = parlance_format::Response {
        error: Some(e),
        ..parlance_format::Response::from_value(&json!({"status": "failed", "messages": []}))
            .unwrap()
    };
    let back = parlance_format::Response::from_value(&serde_json::to_value(&failed).unwrap());
    let back = back.unwrap().error.unwrap();
    assert_eq!(
        back,
        *failed.error.as_ref().unwrap(),
        "equal but for the source"
    );
    assert!(back.source().is_none());
}

#[tokio::test]
async fn a_model_error_and_a_store_error_are_sources_too() {
    use std::error::Error;
    let model = ScriptedModel::new([]);
    model.push_error(ModelError::Authentication {
        message: "bad key".into(),
    });
    let e = Agent::builder(model).build().unwrap().run("Hi").await;
    let e = e.into_result().unwrap_err();
    assert!(e.source().unwrap().downcast_ref::<ModelError>().is_some());

    struct Broken;
    impl Checkpoint for Broken {
        fn commit<'a>(&'a self, _: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
            Box::pin(async { Err(CheckpointError::new(std::io::Error::other("disk full"))) })
        }
    }
    let model = ScriptedModel::new([says("Hello.")]);
    let agent = Agent::builder(model).build().unwrap();
    let e = agent.run("Hi").checkpoint(Arc::new(Broken)).await;
    let e = e.into_result().unwrap_err();
    assert_eq!(e.code, "store");
    assert_eq!(e.message, "the step could not be stored: disk full");
    assert!(
        e.source()
            .unwrap()
            .downcast_ref::<std::io::Error>()
            .is_some()
    );
}

#[tokio::test]
async fn retry_is_a_builder_too() {
    let flaky = || {
        Tool::new("parse", "Parse a number.", |a: Number| async move {
            let n: i64 = a.text.parse()?;
            Ok(n)
        })
    };
    let fail = Limits {
        on_tool_exception: parlance_agent::OnToolException::Fail,
        ..Limits::default()
    };
    let model = ScriptedModel::new([
        calls(&[("c1", "parse", json!({"text": "x"}))]),
        says("Two."),
    ]);
    let agent = Agent::builder(model)
        .limits(fail)
        .tool(flaky())
        .build()
        .unwrap();
    let failed = agent.run("Parse x").id("run_1").await;
    assert_eq!(failed.status, RunStatus::Failed);
    // The history as a store would hand it over: the input and the failed turn.
    let history = failed.clone();
    let steps = Arc::new(Steps::default());
    let events: Vec<RunEvent> = agent
        .retry([history])
        .id("run_2")
        .checkpoint(steps.clone())
        .stream()
        .collect()
        .await;
    let Some(RunEvent::RunCompleted(r)) = events.last() else {
        panic!("the last event is RunCompleted")
    };
    assert_eq!(r.id.as_deref(), Some("run_2"));
    assert_eq!(r.status, RunStatus::Failed, "x still does not parse");
    assert_eq!(
        steps.0.lock().unwrap().as_slice(),
        ["replace tool"],
        "the failed result is replaced in place"
    );
}

#[test]
fn unexpected_errors_keep_their_type() {
    let e: ToolError = "x".parse::<i64>().unwrap_err().into();
    assert_eq!(e.unexpected_type(), Some("core::num::error::ParseIntError"));
    let e: ToolError = with_anyhow("x").unwrap_err().into();
    assert_eq!(e.unexpected_type(), Some("anyhow::Error"));
    let e: ToolError = boxed("x").unwrap_err().into();
    assert_eq!(e.unexpected_type(), Some("Box<dyn Error>"));
    let e: ToolError = "said on purpose".into();
    assert_eq!(e.unexpected_type(), None);
    assert_eq!(e, ToolError::new("said on purpose"));
}

/// An order lookup.
#[derive(Deserialize, JsonSchema)]
struct Lookup {
    /// The order's id.
    id: String,
}

#[test]
fn the_tools_description_wins_over_the_argument_types_doc() {
    let t = Tool::new("lookup", "Find an order by id.", |a: Lookup| async move {
        Ok(a.id)
    });
    assert_eq!(
        t.spec().description.as_deref(),
        Some("Find an order by id.")
    );
    assert_eq!(
        t.spec().input_schema.get("description"),
        None,
        "not sent twice"
    );
    assert_eq!(
        t.spec().input_schema["properties"]["id"]["description"],
        "The order's id.",
        "field docs are the properties' descriptions"
    );
    let t = Tool::new("lookup", "", |a: Lookup| async move { Ok(a.id) });
    assert_eq!(
        t.spec().description.as_deref(),
        Some("An order lookup."),
        "the type's fills in"
    );
}

/// Keeps every step, as a store would.
#[derive(Default)]
struct Steps(Mutex<Vec<String>>);

impl Checkpoint for Steps {
    fn commit<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
        let line = match step {
            Step::Append(m) => format!("append {}", m.role.as_str()),
            Step::ReplaceLast(m) => format!("replace {}", m.role.as_str()),
        };
        self.0.lock().unwrap().push(line);
        Box::pin(async { Ok(()) })
    }
}

#[tokio::test]
async fn resume_streams_with_a_checkpoint() {
    let model = ScriptedModel::new([
        calls(&[("c1", "refund", json!({"amount": 80}))]),
        says("Refunded."),
    ]);
    #[derive(Deserialize, JsonSchema)]
    struct Refund {
        amount: u32,
    }
    let refund = Tool::new("refund", "Refund.", |a: Refund| async move {
        Ok(format!("refunded {}", a.amount))
    })
    .needs_approval();
    let agent = Agent::builder(model).tool(refund).build().unwrap();
    let steps = Arc::new(Steps::default());
    let paused = agent.run("Refund 80").checkpoint(steps.clone()).await;
    assert_eq!(paused.status, RunStatus::RequiresApproval);
    let request = &paused.pending[0];
    let decision = Decision {
        tool_call_id: request.tool_call_id.clone(),
        digest: request.digest.clone(),
        decision: DecisionKind::Approved,
        arguments: None,
        reason: None,
        content: None,
    };
    let resume = Resume {
        turns: vec![],
        paused,
        decisions: vec![decision],
    };
    let mut stream = agent
        .resume(resume.clone())
        .checkpoint(steps.clone())
        .stream()
        .unwrap();
    let mut finished = Vec::new();
    let mut last = None;
    while let Some(e) = stream.next().await {
        match e {
            RunEvent::ToolCallFinished { name, status, .. } => finished.push((name, status)),
            RunEvent::RunCompleted(r) => last = Some(r),
            _ => {}
        }
    }
    assert_eq!(finished, [("refund".to_string(), ToolStatus::Ok)]);
    assert_eq!(last.unwrap().text(), "Refunded.");
    assert_eq!(
        *steps.0.lock().unwrap(),
        [
            "append assistant",
            "append tool",
            "replace tool",
            "append assistant"
        ]
    );
    // A refused decision is an error before anything runs, awaited or streamed.
    let mut forged = resume;
    forged.decisions[0].digest = "sha256:0".into();
    assert!(agent.resume(forged.clone()).await.is_err());
    assert!(agent.resume(forged).stream().is_err());
}

/// Issue 39: a panic elsewhere in a run (here in the application's
/// checkpoint) fails that run under its own id with the panic's message,
/// awaited or streamed, instead of ending it without an outcome.
#[tokio::test]
async fn a_panic_outside_the_model_step_fails_the_run() {
    struct Panics;
    impl Checkpoint for Panics {
        fn commit<'a>(&'a self, _: Step<'a>) -> BoxFuture<'a, Result<(), CheckpointError>> {
            Box::pin(async { panic!("checkpoint bug") })
        }
    }
    let model = ScriptedModel::new([says("Hello."), says("Hello.")]);
    let agent = Agent::builder(model).build().unwrap();
    let r = agent.run("Hi").checkpoint(Arc::new(Panics)).await;
    assert_eq!(r.status, RunStatus::Failed);
    assert!(
        r.id.as_deref().is_some_and(|id| id.starts_with("run")),
        "{:?}",
        r.id
    );
    let e = r.error.unwrap();
    assert_eq!(e.code, "run_panicked");
    assert_eq!(e.message, "the run panicked: checkpoint bug");
    assert_eq!(e.cause.unwrap()["kind"], "panic");

    let events: Vec<RunEvent> = agent
        .run("Hi")
        .checkpoint(Arc::new(Panics))
        .stream()
        .collect()
        .await;
    let Some(RunEvent::RunCompleted(streamed)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(
        streamed.error.as_ref().unwrap().message,
        "the run panicked: checkpoint bug"
    );
}
