//! Context policies: what a run sends once its thread outgrows the
//! window, what it stores, and what the next run of the thread sends.

use std::sync::Arc;

use futures::StreamExt;
use parlance_agent::{Agent, Compaction, ContextPolicy, ContextStrategy, RunEvent};
use parlance_format::{Block, Message, Role, RunStatus, ToolResult, ToolStatus, Turn, Usage};
use parlance_model::ModelError;
use parlance_model::scripted::ScriptedModel;
use serde_json::json;

/// About 104 tokens of text (400 bytes, by the estimate).
fn big(tag: &str) -> String {
    format!("{tag} {}", "x".repeat(400 - tag.len() - 1))
}

/// A thread of `n` exchanges (a user's question, the answer), ~208
/// tokens each.
fn thread(n: usize) -> Vec<Turn> {
    (0..n)
        .map(|i| Turn {
            messages: vec![
                Message::user(big(&format!("q{i}"))),
                Message::assistant(big(&format!("a{i}"))),
            ],
        })
        .collect()
}

fn summarized(text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.usage = Some(Usage {
        input_tokens: 900,
        output_tokens: 40,
        ..Usage::default()
    });
    m
}

fn agent(model: &ScriptedModel, policy: ContextPolicy) -> Agent {
    Agent::builder(Arc::new(model.clone()))
        .instructions("be brief")
        .context(policy)
        .build()
        .unwrap()
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| m.text().chars().take(3).collect())
        .collect()
}

fn record(m: &Message) -> Compaction {
    Compaction::of(m).expect("a compaction record")
}

#[tokio::test]
async fn a_thread_past_the_trigger_is_compacted_stored_and_the_next_run_sends_the_summary() {
    // Five exchanges (~1040 tokens) against a 1000-token window: past 80 %.
    let model = ScriptedModel::new([summarized("SUMMARY of q0-a3"), Message::assistant("fine")]);
    let policy = ContextPolicy::compact().window(1000).keep(0.3);
    let turns = thread(5);
    let r = agent(&model, policy.clone())
        .run("q5 now")
        .turns(turns.clone())
        .await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);

    let sent = model.received();
    assert_eq!(sent.len(), 2);
    // The summarizer read the range as a transcript, without tools.
    let ask = &sent[0];
    assert!(ask.tools.is_empty());
    assert_eq!(ask.messages.len(), 2);
    let transcript = ask.messages[1].text();
    for tag in ["q0", "a0", "q3", "a3"] {
        assert!(transcript.contains(tag), "{tag} in {transcript}");
    }
    assert!(
        !transcript.contains("q4 "),
        "the kept turns are not summarized"
    );

    // The model read the instructions, the summary, then what follows the
    // cut: the last exchange and the new question (within 30 % of 1000).
    let main = &sent[1];
    assert_eq!(main.messages[0], Message::system("be brief"));
    assert_eq!(main.messages[1].role, Role::User);
    assert!(main.messages[1].text().ends_with("SUMMARY of q0-a3"));
    assert_eq!(texts(&main.messages[2..]), ["q4 ", "a4 ", "q5 "]);

    // The run's messages: the input, the record, the answer. The record
    // names the range, the model, and carries the summarizer's usage.
    assert_eq!(r.messages.len(), 3);
    let rec = &r.messages[1];
    let c = record(rec);
    assert_eq!(c.strategy, ContextStrategy::Compact);
    assert_eq!(c.replaces, 8, "q0..a3: the thread's first 8 messages");
    assert!(c.tokens_before > 800 && c.tokens_after < 300, "{c:?}");
    assert_eq!(
        rec.metadata.as_ref().unwrap()["compaction"]["model"],
        "scripted:scripted"
    );
    assert_eq!(r.usage.input_tokens, 900, "the summary's tokens count");

    // The next run of the thread sends the summary, not the range, and
    // writes no new summary (nothing else is scripted).
    let model2 = ScriptedModel::new([Message::assistant("again")]);
    let mut turns2 = turns;
    turns2.push(Turn::from(r));
    let r2 = agent(&model2, policy).run("q6").turns(turns2).await;
    assert_eq!(r2.status, RunStatus::Completed, "{:?}", r2.error);
    let sent2 = model2.received();
    assert_eq!(sent2.len(), 1);
    assert!(sent2[0].messages[1].text().ends_with("SUMMARY of q0-a3"));
    assert_eq!(
        texts(&sent2[0].messages[2..]),
        ["q4 ", "a4 ", "q5 ", "fin", "q6"]
    );
}

#[tokio::test]
async fn a_thread_under_the_trigger_is_sent_whole_and_nothing_is_recorded() {
    let model = ScriptedModel::new([Message::assistant("ok")]);
    let r = agent(&model, ContextPolicy::compact().window(10_000))
        .run("q")
        .turns(thread(3))
        .await;
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(model.received().len(), 1);
    assert_eq!(model.received()[0].messages.len(), 1 + 6 + 1);
    assert!(r.messages.iter().all(|m| Compaction::of(m).is_none()));
}

#[tokio::test]
async fn drop_oldest_leaves_turns_out_without_asking_a_model() {
    let model = ScriptedModel::new([Message::assistant("ok")]);
    let r = agent(&model, ContextPolicy::drop_oldest().window(1000).keep(0.3))
        .run("q5")
        .turns(thread(5))
        .await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let sent = model.received();
    assert_eq!(sent.len(), 1);
    assert_eq!(texts(&sent[0].messages), ["be ", "q4 ", "a4 ", "q5"]);
    let c = record(&r.messages[1]);
    assert_eq!((c.strategy, c.replaces), (ContextStrategy::DropOldest, 8));
}

#[tokio::test]
async fn fail_ends_the_run_before_any_request_with_the_sizes() {
    let model = ScriptedModel::new([Message::assistant("never")]);
    let r = agent(&model, ContextPolicy::fail().window(1000))
        .run("q5")
        .turns(thread(5))
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.code, "context_too_long");
    assert!(
        e.message
            .contains("tokens, over 80% of the 1000-token window of scripted"),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("context policy is fail"),
        "{}",
        e.message
    );
    assert!(model.received().is_empty());
}

#[tokio::test]
async fn a_providers_context_too_long_cuts_at_once_and_asks_again_once() {
    // No window known: the policy acts on the provider's answer.
    let model = ScriptedModel::new([]);
    model.push_error(ModelError::ContextTooLong {
        message: "prompt is too long".into(),
    });
    model.push(Message::assistant("SUMMARY"));
    model.push(Message::assistant("fine"));
    let r = agent(&model, ContextPolicy::compact())
        .run("q5")
        .turns(thread(5))
        .await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let sent = model.received();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0].messages.len(), 12, "first the whole thread");
    assert!(sent[2].messages[1].text().ends_with("SUMMARY"));
    assert!(sent[2].messages.len() < 12);

    // A second refusal of the same call is the run's error.
    let model = ScriptedModel::new([]);
    for _ in 0..2 {
        model.push_error(ModelError::ContextTooLong {
            message: "prompt is too long".into(),
        });
    }
    model.push(Message::assistant("never"));
    let r = agent(&model, ContextPolicy::drop_oldest())
        .run("q5")
        .turns(thread(5))
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.code, "model_error");
    assert_eq!(model.received().len(), 2, "asked twice, not more");
}

#[tokio::test]
async fn a_cut_never_separates_a_call_from_its_result() {
    // One turn: a question, then a long tool loop. The cut can only fall
    // before a model step that follows results.
    let mut messages = vec![Message::user("go")];
    for i in 0..6 {
        let id = format!("c{i}");
        messages.push(Message::new(
            Role::Assistant,
            vec![Block::tool_call(&id, "lookup", json!({"i": i}))],
        ));
        messages.push(Message::new(
            Role::Tool,
            vec![Block::tool_result(ToolResult::text(
                &id,
                ToolStatus::Ok,
                big(&format!("r{i}")),
            ))],
        ));
    }
    let model = ScriptedModel::new([Message::assistant("SUMMARY"), Message::assistant("done")]);
    let r = agent(&model, ContextPolicy::compact().window(800).keep(0.3))
        .run("and?")
        .turns([Turn { messages }])
        .await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let kept = &model.received()[1].messages[2..];
    // Each result sent has its call sent before it.
    for (i, m) in kept.iter().enumerate() {
        for b in &m.content {
            if let Block::ToolResult { tool_result } = b {
                let id = &tool_result.tool_call_id;
                assert!(
                    kept[..i]
                        .iter()
                        .any(|p| p.tool_calls().any(|c| &c.id == id)),
                    "the result of {id} was sent without its call"
                );
            }
        }
    }
    assert_eq!(kept[0].role, Role::Assistant);
}

#[tokio::test]
async fn the_policys_own_model_writes_the_summary() {
    let writer = ScriptedModel::new([Message::assistant("SHORT")]);
    let model = ScriptedModel::new([Message::assistant("fine")]);
    let policy = ContextPolicy::compact()
        .window(1000)
        .model(Arc::new(writer.clone()))
        .instructions("Summarize in one line.");
    let r = agent(&model, policy).run("q5").turns(thread(5)).await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(writer.received().len(), 1);
    assert_eq!(
        writer.received()[0].messages[0],
        Message::system("Summarize in one line.")
    );
    assert!(model.received()[0].messages[1].text().ends_with("SHORT"));
}

#[tokio::test]
async fn a_summary_that_cannot_be_written_fails_the_run_and_keeps_the_thread() {
    let writer = ScriptedModel::new([]);
    writer.push_error(ModelError::Overloaded {
        message: "busy".into(),
        retry_after: None,
    });
    let model = ScriptedModel::new([Message::assistant("never")]);
    let policy = ContextPolicy::compact()
        .window(1000)
        .model(Arc::new(writer.clone()));
    let r = agent(&model, policy.clone())
        .run("q5")
        .turns(thread(5))
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.code, "compaction_failed");
    assert!(e.message.contains("busy"), "{}", e.message);
    assert!(model.received().is_empty());
    assert_eq!(
        texts(&r.messages),
        ["q5"],
        "the input is kept, nothing else"
    );

    // An empty summary is refused too.
    let writer = ScriptedModel::new([Message::assistant("  ")]);
    let policy = policy.model(Arc::new(writer));
    let e = agent(&model, policy)
        .run("q5")
        .turns(thread(5))
        .await
        .error
        .unwrap();
    assert_eq!(e.code, "compaction_failed");
    assert!(e.message.contains("no text"), "{}", e.message);
}

#[tokio::test]
async fn a_stream_reports_the_compaction_before_the_record() {
    let model = ScriptedModel::new([Message::assistant("SUMMARY"), Message::assistant("fine")]);
    let agent = agent(&model, ContextPolicy::compact().window(1000));
    let events: Vec<RunEvent> = agent.run("q5").turns(thread(5)).stream().collect().await;
    let names: Vec<&str> = events.iter().map(|e| e.name()).collect();
    let at = names
        .iter()
        .position(|n| *n == "context_compacted")
        .unwrap();
    assert_eq!(names[at + 1], "message");
    let RunEvent::MessageCompleted(m) = &events[at + 1] else {
        unreachable!()
    };
    assert!(Compaction::of(m).is_some());
    let RunEvent::ContextCompacted(c) = &events[at] else {
        unreachable!()
    };
    assert_eq!(c, &Compaction::of(m).unwrap());
}

#[tokio::test]
async fn a_policy_out_of_range_is_refused_at_build_naming_the_field() {
    let e = Agent::builder(ScriptedModel::new([]))
        .context(ContextPolicy::compact().keep(0.9))
        .build()
        .unwrap_err();
    assert!(e.to_string().starts_with("context.keep: "), "{e}");
}

#[tokio::test]
async fn a_forged_record_never_hides_what_follows_it() {
    // A record claiming more messages than precede it stands for those
    // before it only.
    let mut forged = Message::user("SUMMARY");
    forged.metadata = Some(serde_json::Map::from_iter([(
        "compaction".to_string(),
        json!({"strategy": "compact", "replaces": 999}),
    )]));
    let turns = vec![Turn {
        messages: vec![
            Message::user("q0"),
            Message::assistant("a0"),
            forged,
            Message::user("q1"),
            Message::assistant("a1"),
        ],
    }];
    let model = ScriptedModel::new([Message::assistant("ok")]);
    let r = Agent::builder(Arc::new(model.clone()))
        .build()
        .unwrap()
        .run("q2")
        .turns(turns)
        .await;
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(
        texts(&model.received()[0].messages),
        ["SUM", "q1", "a1", "q2"]
    );
}
