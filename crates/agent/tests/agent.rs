//! The run loop against the scripted model: what the model was sent is
//! asserted in every test (its context is exactly the turns' messages plus
//! the new ones).

use std::sync::Arc;

use futures::StreamExt;
use parlance_agent::{
    Agent, Limits, OnToolException, Resume, RunEvent, RunInput, Tool, ToolContext, ToolError,
};
use parlance_format::{
    Block, Decision, DecisionKind, FinishReason, Message, Response, Role, RunStatus, ToolStatus,
    Turn, Usage,
};
use parlance_model::scripted::ScriptedModel;
use parlance_model::{ModelError, ModelRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

fn usage(i: u64, o: u64) -> Option<Usage> {
    Some(Usage {
        input_tokens: i,
        output_tokens: o,
        ..Usage::default()
    })
}

fn says(text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.finish_reason = Some(FinishReason::Stop);
    m.usage = usage(10, 5);
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
    m.usage = usage(20, 8);
    m
}

#[derive(Deserialize, JsonSchema)]
struct OrderArgs {
    /// Order id like A-1001.
    #[schemars(regex(pattern = r"^[A-Z]-[0-9]{4}$"))]
    order_id: String,
}

#[derive(Deserialize, JsonSchema)]
struct RefundArgs {
    order_id: String,
    #[schemars(range(min = 1, max = 500))]
    amount: u32,
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "get_order",
            "Look up an order.",
            |a: OrderArgs, _c: ToolContext| async move {
                if a.order_id == "A-0000" {
                    return Err(ToolError::new("no such order"));
                }
                Ok(json!({"order_id": a.order_id, "status": "shipped"}))
            },
        ),
        Tool::new(
            "refund",
            "Refund an order.",
            |a: RefundArgs, _c: ToolContext| async move {
                Ok::<_, ToolError>(format!("refunded {} on {}", a.amount, a.order_id))
            },
        )
        .needs_approval_if(|args| args["amount"].as_u64().unwrap_or(0) > 50),
        Tool::blocking(
            "charge",
            "Charge a card.",
            |_: Value, _c: ToolContext| -> Result<String, ToolError> {
                panic!("card 4111-1111 declined by gateway")
            },
        ),
    ]
}

fn agent(model: &ScriptedModel, limits: Limits) -> Agent {
    let mut b = Agent::builder(Arc::new(model.clone()))
        .instructions("You help with orders.")
        .limits(limits);
    for t in tools() {
        b = b.tool(t);
    }
    b.build().unwrap()
}

fn input(text: &str) -> RunInput {
    RunInput {
        run_id: Some("run_test".into()),
        ..RunInput::text(text)
    }
}

/// The messages the model received on its `n`th call, without the system prompt.
fn sent(model: &ScriptedModel, n: usize) -> Vec<Message> {
    let req: ModelRequest = model.received()[n].clone();
    assert_eq!(req.messages[0], Message::system("You help with orders."));
    req.messages[1..].to_vec()
}

fn result_of(m: &Message, i: usize) -> &parlance_format::ToolResult {
    m.content[i].as_tool_result().unwrap()
}

fn text_of(r: &parlance_format::ToolResult) -> String {
    r.content.iter().filter_map(Block::as_text).collect()
}

#[tokio::test]
async fn plain_answer() {
    let model = ScriptedModel::new([says("Hello!")]);
    let r = agent(&model, Limits::default()).run(input("Hi")).await;
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(r.output, json!("Hello!"));
    assert_eq!(
        r.messages,
        vec![Message::user("Hi"), {
            let mut m = says("Hello!");
            m.provider = Some("scripted".into());
            m
        }]
    );
    assert_eq!(r.usage, usage(10, 5).unwrap());
    assert_eq!(r.finish_reason, Some(FinishReason::Stop));
    assert_eq!(sent(&model, 0), vec![Message::user("Hi")]);
    assert_eq!(model.received()[0].tools.len(), 3);
}

#[tokio::test]
async fn several_rounds_of_parallel_tool_calls() {
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "get_order", json!({"order_id": "A-1001"})),
            ("c2", "get_order", json!({"order_id": "A-0000"})),
        ]),
        calls(&[
            ("c3", "get_order", json!({"order_id": "A-1002"})),
            ("c4", "refund", json!({"order_id": "A-1002", "amount": 20})),
        ]),
        says("A-1001 shipped; A-0000 does not exist; refunded 20 on A-1002."),
    ]);
    let r = agent(&model, Limits::default())
        .run(input("Check my orders"))
        .await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.messages.len(), 6);
    let first_results = &r.messages[2];
    assert_eq!(first_results.role, Role::Tool);
    assert_eq!(result_of(first_results, 0).status, ToolStatus::Ok);
    assert_eq!(result_of(first_results, 1).status, ToolStatus::Error);
    assert_eq!(text_of(result_of(first_results, 1)), "no such order");
    assert_eq!(
        text_of(result_of(&r.messages[4], 1)),
        "refunded 20 on A-1002"
    );
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 50,
            output_tokens: 21,
            ..Usage::default()
        }
    );
    // The model's context grows by exactly the turn's messages.
    assert_eq!(sent(&model, 1), r.messages[..3].to_vec());
    assert_eq!(sent(&model, 2), r.messages[..5].to_vec());
}

#[tokio::test]
async fn invalid_arguments_then_a_corrected_call() {
    let model = ScriptedModel::new([
        calls(&[("c1", "refund", json!({"order_id": "A-1", "amount": 900}))]),
        calls(&[("c2", "refund", json!({"order_id": "A-1", "amount": 40}))]),
        says("Done."),
    ]);
    let r = agent(&model, Limits::default()).run(input("Refund")).await;
    assert_eq!(r.status, RunStatus::Completed);
    let bad = result_of(&r.messages[2], 0);
    assert_eq!(bad.status, ToolStatus::InvalidArguments);
    assert_eq!(
        text_of(bad),
        "Invalid arguments for refund:\namount: must be at most 500, got 900"
    );
    assert_eq!(text_of(result_of(&r.messages[4], 0)), "refunded 40 on A-1");
    assert_eq!(
        sent(&model, 1)[2],
        r.messages[2],
        "the model was told what was wrong"
    );
}

#[tokio::test]
async fn invalid_argument_budget_exhausted() {
    let bad = |id: &str| calls(&[(id, "get_order", json!({"order_id": "nope"}))]);
    let model = ScriptedModel::new([bad("c1"), bad("c2"), bad("c3"), says("never")]);
    let limits = Limits {
        max_invalid_arguments: 2,
        ..Limits::default()
    };
    let r = agent(&model, limits).run(input("x")).await;
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "invalid_arguments_budget");
    assert_eq!(
        e.message,
        "the model sent invalid arguments 3 times, more than the 2 allowed"
    );
    assert_eq!(model.remaining(), 1, "the model was not called again");
    // Every call in the stored turn has its result.
    assert_eq!(r.messages.len(), 7);
    assert_eq!(r.messages[6].role, Role::Tool);
}

#[tokio::test]
async fn max_model_calls() {
    let model = ScriptedModel::new(
        (0..5).map(|i| calls(&[(&format!("c{i}"), "get_order", json!({"order_id": "A-1001"}))])),
    );
    let limits = Limits {
        max_model_calls: 3,
        ..Limits::default()
    };
    let r = agent(&model, limits).run(input("loop")).await;
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.error.as_ref().unwrap().code, "max_model_calls");
    assert_eq!(model.received().len(), 3);
}

#[tokio::test]
async fn fail_policy_fails_the_run_with_its_cause() {
    let model = ScriptedModel::new([calls(&[("c1", "charge", json!({}))]), says("never")]);
    let limits = Limits {
        on_tool_exception: OnToolException::Fail,
        ..Limits::default()
    };
    let r = agent(&model, limits).run(input("charge")).await;
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "tool_failed");
    assert_eq!(
        e.message,
        "tool charge failed: panic: card 4111-1111 declined by gateway"
    );
    assert_eq!(
        e.cause,
        Some(
            json!({"tool": "charge", "error_type": "panic", "message": "card 4111-1111 declined by gateway"})
        )
    );
    assert_eq!(model.received().len(), 1);
}

#[tokio::test]
async fn return_generic_never_sends_the_detail_to_the_model() {
    let model = ScriptedModel::new([
        calls(&[("c1", "charge", json!({}))]),
        says("Sorry, the charge failed."),
    ]);
    let limits = Limits {
        on_tool_exception: OnToolException::ReturnGeneric,
        ..Limits::default()
    };
    let r = agent(&model, limits).run(input("charge")).await;
    assert_eq!(r.status, RunStatus::Completed);
    let result = result_of(&r.messages[2], 0);
    assert_eq!(result.status, ToolStatus::ToolFailed);
    assert!(parlance_format::to_json(&result.artifact).contains("4111-1111"));
    // What the model received holds the result, but neither the detail
    // nor the artifact.
    assert!(!format!("{:?}", model.received()[1]).contains("4111-1111"));
    let sent_text: String = sent(&model, 1)[2]
        .content
        .iter()
        .map(|b| match b {
            Block::ToolResult { tool_result } => text_of(tool_result),
            _ => String::new(),
        })
        .collect();
    assert_eq!(sent_text, "charge failed.");
}

#[tokio::test]
async fn return_to_model_shows_the_error() {
    let model = ScriptedModel::new([
        calls(&[("c1", "charge", json!({}))]),
        says("It was declined."),
    ]);
    let r = agent(&model, Limits::default()).run(input("charge")).await;
    assert_eq!(r.status, RunStatus::Completed);
    assert_eq!(
        text_of(result_of(&r.messages[2], 0)),
        "charge failed: panic: card 4111-1111 declined by gateway"
    );
}

#[tokio::test]
async fn turns_with_empty_and_missing_messages_are_not_seen() {
    let model = ScriptedModel::new([says("First."), says("Second.")]);
    let a = agent(&model, Limits::default());
    let first = a.run(input("One")).await;
    // A whole earlier response as a turn, an empty turn, a turn without messages.
    let turns = vec![
        Turn::from_value(&serde_json::to_value(&first).unwrap()).unwrap(),
        Turn::from_value(&json!({"messages": []})).unwrap(),
        Turn::from_value(&json!({"output": "ignored"})).unwrap(),
    ];
    let second = a.run(input("Two").with_turns(turns)).await;
    assert_eq!(second.status, RunStatus::Completed);
    let mut expected = first.messages.clone();
    expected.push(Message::user("Two"));
    assert_eq!(sent(&model, 1), expected);
    assert_eq!(
        second.messages.len(),
        2,
        "a response holds only its own turn"
    );
}

async fn paused_run() -> (ScriptedModel, Response) {
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "refund", json!({"order_id": "A-1", "amount": 100})),
            ("c2", "get_order", json!({"order_id": "A-1001"})),
            ("c3", "refund", json!({"order_id": "A-2", "amount": 200})),
            ("c4", "refund", json!({"order_id": "A-3", "amount": 300})),
            ("c5", "refund", json!({"order_id": "A-4", "amount": 400})),
        ]),
        says("All decided."),
    ]);
    let r = agent(&model, Limits::default())
        .run(input("Refund four orders"))
        .await;
    (model, r)
}

fn decision(r: &Response, id: &str, kind: DecisionKind) -> Decision {
    let req = r.pending.iter().find(|p| p.tool_call_id == id).unwrap();
    Decision {
        tool_call_id: id.into(),
        digest: req.digest.clone(),
        decision: kind,
        arguments: None,
        reason: None,
        content: None,
    }
}

/// Stores the paused response as JSON and reads it back, as another process would.
fn through_json(r: &Response) -> Response {
    let text = parlance_format::to_json(r);
    Response::from_value(&serde_json::from_str::<Value>(&text).unwrap()).unwrap()
}

#[tokio::test]
async fn approval_pauses_and_other_calls_still_run() {
    let (_, r) = paused_run().await;
    assert_eq!(r.status, RunStatus::RequiresApproval);
    assert_eq!(r.output, Value::Null);
    let ids: Vec<&str> = r.pending.iter().map(|p| p.tool_call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c3", "c4", "c5"]);
    let waiting = &r.messages[2];
    assert_eq!(waiting.role, Role::Tool);
    assert!(matches!(waiting.content[0], Block::ApprovalRequest { .. }));
    assert_eq!(
        result_of(waiting, 1).status,
        ToolStatus::Ok,
        "get_order needed no approval and ran"
    );
    assert!(r.pending[0].digest.starts_with("sha256:"));
}

#[tokio::test]
async fn all_four_decisions_in_one_turn_from_a_fresh_agent() {
    let (model, paused) = paused_run().await;
    let stored = through_json(&paused);
    // A fresh agent (another process would build its own) resumes.
    let fresh = agent(&model, Limits::default());
    let mut edited = decision(&stored, "c3", DecisionKind::Edited);
    edited.arguments = Some(json!({"order_id": "A-2", "amount": 150}));
    let mut rejected = decision(&stored, "c4", DecisionKind::Rejected);
    rejected.reason = Some("over the monthly limit".into());
    let mut answered = decision(&stored, "c5", DecisionKind::Answered);
    answered.content = Some(vec![Block::text("Refund already issued by phone.")]);
    let r = fresh
        .resume(Resume {
            turns: vec![],
            paused: stored,
            decisions: vec![
                answered,
                decision(&paused, "c1", DecisionKind::Approved),
                rejected,
                edited,
            ],
        })
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.id.as_deref(), Some("run_test"));
    let results = &r.messages[2];
    let statuses: Vec<ToolStatus> = (0..5).map(|i| result_of(results, i).status).collect();
    assert_eq!(
        statuses,
        [
            ToolStatus::Ok,
            ToolStatus::Ok,
            ToolStatus::Ok,
            ToolStatus::Rejected,
            ToolStatus::Ok
        ]
    );
    let ids: Vec<&str> = (0..5)
        .map(|i| result_of(results, i).tool_call_id.as_str())
        .collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5"], "results in call order");
    assert_eq!(text_of(result_of(results, 0)), "refunded 100 on A-1");
    assert_eq!(
        text_of(result_of(results, 2)),
        "refunded 150 on A-2",
        "ran with the edited arguments"
    );
    assert_eq!(
        text_of(result_of(results, 3)),
        "The reviewer rejected this call: over the monthly limit"
    );
    assert_eq!(
        text_of(result_of(results, 4)),
        "Refund already issued by phone."
    );
    assert_eq!(
        result_of(results, 2).approval.as_ref().unwrap().decision,
        DecisionKind::Edited
    );
    // The model's next context: the turn so far with every result in place.
    assert_eq!(sent(&model, 1), r.messages[..3].to_vec());
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 30,
            output_tokens: 13,
            ..Usage::default()
        }
    );
}

#[tokio::test]
async fn each_decision_alone_keeps_the_others_pending() {
    for kind in [
        DecisionKind::Approved,
        DecisionKind::Edited,
        DecisionKind::Rejected,
        DecisionKind::Answered,
    ] {
        let (model, paused) = paused_run().await;
        let mut d = decision(&paused, "c1", kind);
        match kind {
            DecisionKind::Edited => d.arguments = Some(json!({"order_id": "A-1", "amount": 60})),
            DecisionKind::Answered => d.content = Some(vec![Block::json(json!({"refunded": 0}))]),
            _ => {}
        }
        let a = agent(&model, Limits::default());
        let r = a
            .resume(Resume {
                turns: vec![],
                paused: through_json(&paused),
                decisions: vec![d],
            })
            .await
            .unwrap();
        assert_eq!(r.status, RunStatus::RequiresApproval, "{kind:?}");
        let ids: Vec<&str> = r.pending.iter().map(|p| p.tool_call_id.as_str()).collect();
        assert_eq!(ids, ["c3", "c4", "c5"]);
        let first = result_of(&r.messages[2], 0);
        let want = match kind {
            DecisionKind::Approved => (ToolStatus::Ok, "refunded 100 on A-1"),
            DecisionKind::Edited => (ToolStatus::Ok, "refunded 60 on A-1"),
            DecisionKind::Rejected => (ToolStatus::Rejected, "The reviewer rejected this call."),
            DecisionKind::Answered => (ToolStatus::Ok, ""),
        };
        assert_eq!((first.status, text_of(first).as_str()), want, "{kind:?}");
        assert_eq!(
            model.received().len(),
            1,
            "the model waits until every call is decided"
        );
    }
}

#[tokio::test]
async fn forged_duplicate_and_mismatched_decisions_are_refused() {
    let (model, paused) = paused_run().await;
    let a = agent(&model, Limits::default());
    let try_ = |decisions: Vec<Decision>, paused: Response| {
        let a = a.clone();
        async move {
            a.resume(Resume {
                turns: vec![],
                paused,
                decisions,
            })
            .await
            .unwrap_err()
            .to_string()
        }
    };
    let mut unknown = decision(&paused, "c1", DecisionKind::Approved);
    unknown.tool_call_id = "c9".into();
    assert_eq!(
        try_(vec![unknown], paused.clone()).await,
        "decisions[0].tool_call_id: no pending call has id \"c9\""
    );

    let mut forged = decision(&paused, "c1", DecisionKind::Approved);
    forged.digest = "sha256:0000".into();
    assert_eq!(
        try_(vec![forged], paused.clone()).await,
        "decisions[0].digest: does not match the pending call \"c1\": the call or its arguments changed"
    );

    let twice = vec![
        decision(&paused, "c1", DecisionKind::Approved),
        decision(&paused, "c1", DecisionKind::Approved),
    ];
    assert_eq!(
        try_(twice, paused.clone()).await,
        "decisions[1].tool_call_id: call \"c1\" is decided twice (first in decisions[0])"
    );

    // The stored arguments were changed after the pause (amount 100 → 10).
    let mut tampered = paused.clone();
    if let Block::ApprovalRequest { approval_request } = &mut tampered.messages[2].content[0] {
        approval_request.arguments = json!({"order_id": "A-1", "amount": 10});
    }
    if let Block::ToolCall { tool_call } = &mut tampered.messages[1].content[0] {
        tool_call.arguments = json!({"order_id": "A-1", "amount": 10});
    }
    assert_eq!(
        try_(
            vec![decision(&paused, "c1", DecisionKind::Approved)],
            tampered
        )
        .await,
        "decisions[0].tool_call_id: the pending request for call \"c1\" does not match the model's call (was it altered?)"
    );

    let mut bad_edit = decision(&paused, "c1", DecisionKind::Edited);
    bad_edit.arguments = Some(json!({"order_id": "A-1", "amount": 9000}));
    assert_eq!(
        try_(vec![bad_edit], paused.clone()).await,
        "decisions[0].arguments: invalid for refund: amount: must be at most 500, got 9000"
    );

    // Decided once, then again.
    let once = a
        .resume(Resume {
            turns: vec![],
            paused: paused.clone(),
            decisions: vec![decision(&paused, "c1", DecisionKind::Approved)],
        })
        .await
        .unwrap();
    assert_eq!(
        try_(vec![decision(&paused, "c1", DecisionKind::Approved)], once).await,
        "decisions[0].tool_call_id: call \"c1\" is already decided"
    );

    let done = a.run(input("x")).await; // the script's "All decided." answer
    assert_eq!(
        try_(vec![decision(&paused, "c1", DecisionKind::Approved)], done).await,
        "paused.status: the run is completed, not waiting for decisions"
    );
    assert_eq!(
        model.received().len(),
        2,
        "no refused decision reached the model"
    );
}

async fn collect(stream: impl futures::Stream<Item = RunEvent>) -> (Vec<RunEvent>, Response) {
    let events: Vec<RunEvent> = stream.collect().await;
    let Some(RunEvent::RunCompleted(r)) = events.last().cloned() else {
        panic!("the last event is RunCompleted")
    };
    (events, r)
}

#[tokio::test]
async fn streamed_runs_equal_non_streamed_runs() {
    let script = || {
        ScriptedModel::new([
            {
                let mut m = calls(&[
                    ("c1", "get_order", json!({"order_id": "A-1001"})),
                    ("c2", "refund", json!({"order_id": "A-1", "amount": 90})),
                ]);
                m.content.insert(0, Block::text("Let me check. "));
                m
            },
            says("It shipped and the refund is done."),
        ])
    };
    let m1 = script();
    let plain = agent(&m1, Limits::default()).run(input("Status?")).await;
    let m2 = script();
    let a2 = agent(&m2, Limits::default());
    let (events, streamed) = collect(a2.run(input("Status?")).stream()).await;
    assert_eq!(streamed, plain);
    assert_eq!(m1.received(), m2.received());
    assert_eq!(plain.status, RunStatus::RequiresApproval);
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Let me check. ");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::ToolCallStarted { name, .. } if name == "get_order"))
    );
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::ToolCallFinished {
            status: ToolStatus::Ok,
            ..
        }
    )));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::ApprovalRequired(p) if p.len() == 1))
    );

    // Resume, streamed and not.
    let d = decision(&plain, "c2", DecisionKind::Approved);
    let r1 = agent(&m1, Limits::default())
        .resume(Resume {
            turns: vec![],
            paused: plain.clone(),
            decisions: vec![d.clone()],
        })
        .await
        .unwrap();
    let (events, r2) = collect(
        a2.resume(Resume {
            turns: vec![],
            paused: streamed,
            decisions: vec![d],
        })
        .stream()
        .unwrap(),
    )
    .await;
    assert_eq!(r1, r2);
    assert_eq!(r1.status, RunStatus::Completed);
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "It shipped and the refund is done.");
}

#[tokio::test]
async fn model_errors_fail_the_run_with_their_kind() {
    let model = ScriptedModel::new([]);
    model.push_error(ModelError::RateLimited {
        message: "slow down".into(),
        retry_after: None,
    });
    let r = agent(&model, Limits::default()).run(input("x")).await;
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "model_error");
    assert_eq!(
        e.cause,
        Some(json!({"kind": "rate_limited", "message": "rate limited: slow down"}))
    );
}

#[tokio::test]
async fn output_schema_gives_a_structured_output() {
    let schema =
        json!({"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}});
    let model = ScriptedModel::new([says("{\"city\": \"Paris\"}"), says("{\"town\": \"Paris\"}")]);
    let a = Agent::builder(Arc::new(model.clone()))
        .output_schema("place", schema)
        .limits(Limits {
            output_retries: 0,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let r = a.run(RunInput::text("Where?")).await;
    assert_eq!(r.output, json!({"city": "Paris"}));
    assert_eq!(
        model.received()[0]
            .options
            .output_schema
            .as_ref()
            .unwrap()
            .name,
        "place"
    );
    let r = a.run(RunInput::text("Where?")).await;
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "invalid_output");
    assert_eq!(
        e.message,
        "the final answer does not match the output schema: city: required property missing"
    );
}

/// Issue 32: an answer that does not fit goes back to the model with the
/// problems, as a user message of the thread (marked in its metadata, so
/// a resumed run counts it too), within `output_retries`.
#[tokio::test]
async fn an_output_that_fails_its_schema_twice_then_fits_completes() {
    let schema =
        json!({"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}});
    let model = ScriptedModel::new([
        says("{\"town\": \"Paris\"}"),
        says("Paris, I think"),
        says("{\"city\": \"Paris\"}"),
    ]);
    let a = Agent::builder(Arc::new(model.clone()))
        .output_schema("place", schema.clone())
        .limits(Limits {
            output_retries: 2,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let r = a.run(RunInput::text("Where?")).await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.output, json!({"city": "Paris"}));
    let sent = model.received();
    assert_eq!(sent.len(), 3);
    let retry = sent[1].messages.last().unwrap();
    assert_eq!(retry.role, Role::User);
    assert_eq!(
        retry.text(),
        "the final answer does not match the output schema: city: required property missing. Answer again, with only the JSON of the output schema."
    );
    let second = sent[2].messages.last().unwrap().text();
    assert!(
        second.starts_with("the final answer is not JSON: expected value"),
        "{second}"
    );
    let marks: Vec<_> = r
        .messages
        .iter()
        .filter_map(|m| {
            m.metadata
                .as_ref()
                .and_then(|d| d.get("output_retry"))
                .cloned()
        })
        .collect();
    assert_eq!(marks, [json!(1), json!(2)]);

    // One retry only: the second misfit ends the run, saying so.
    let model = ScriptedModel::new([says("{\"town\": 1}"), says("{\"town\": 2}")]);
    let a = Agent::builder(Arc::new(model.clone()))
        .output_schema("place", schema)
        .build()
        .unwrap();
    let r = a.run(RunInput::text("Where?")).await;
    let e = r.error.unwrap();
    assert_eq!(e.code, "invalid_output");
    assert_eq!(
        e.message,
        "the final answer does not match the output schema (after 1 retry): city: required property missing"
    );
    assert_eq!(e.cause, Some(json!({"town": 2})));
}

/// The application's validator refuses what the schema allows: its
/// problems go back to the model the same way.
#[tokio::test]
async fn the_output_validator_refuses_and_the_model_fixes_it() {
    let schema = json!({"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}});
    let model = ScriptedModel::new([says("{\"amount\": 250}"), says("{\"amount\": 80}")]);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let a = Agent::builder(Arc::new(model.clone()))
        .output_schema("refund", schema)
        .output_validator(move |v| {
            kept.lock().unwrap().push(v.clone());
            Box::pin(async move {
                match v["amount"].as_f64() {
                    Some(a) if a > 100.0 => {
                        Err(vec![format!("/amount: {a} is over the 100 EUR limit")])
                    }
                    _ => Ok(()),
                }
            })
        })
        .build()
        .unwrap();
    let r = a.run(RunInput::text("Refund")).await;
    assert_eq!(r.output, json!({"amount": 80}), "{:?}", r.error);
    assert_eq!(
        *seen.lock().unwrap(),
        [json!({"amount": 250}), json!({"amount": 80})]
    );
    assert_eq!(
        model.received()[1].messages.last().unwrap().text(),
        "the final answer was refused by the output validator: /amount: 250 is over the 100 EUR limit. Answer again, with only the JSON of the output schema."
    );
}

#[derive(Deserialize, JsonSchema)]
struct ShipArgs {
    boxes: u32,
}

#[tokio::test]
async fn a_tools_own_refusal_goes_to_the_model_and_counts_against_the_budget() {
    use parlance_agent::ArgumentProblem;
    // Boxes go in pairs: a rule the schema does not say.
    let ship = Tool::new("ship", "Ship boxes.", |a: ShipArgs| async move {
        if a.boxes % 2 == 1 {
            return Err(ToolError::invalid_arguments([ArgumentProblem::new(
                ["boxes"],
                format!("must be even, got {}", a.boxes),
            )]));
        }
        Ok(format!("shipped {}", a.boxes))
    });
    let model = ScriptedModel::new([
        calls(&[("c1", "ship", json!({"boxes": 3}))]),
        calls(&[("c2", "ship", json!({"boxes": 5}))]),
        says("never"),
    ]);
    let agent = Agent::builder(Arc::new(model.clone()))
        .instructions("You help with orders.")
        .limits(Limits {
            max_invalid_arguments: 1,
            ..Limits::default()
        })
        .tool(ship)
        .build()
        .unwrap();
    let r = agent.run(input("Ship")).await;
    let bad = result_of(&r.messages[2], 0);
    assert_eq!(bad.status, ToolStatus::InvalidArguments);
    assert_eq!(
        text_of(bad),
        "Invalid arguments for ship:\nboxes: must be even, got 3"
    );
    assert_eq!(sent(&model, 1)[2], r.messages[2], "the model read it");
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "invalid_arguments_budget");
    assert_eq!(
        e.message,
        "the model sent invalid arguments 2 times, more than the 1 allowed"
    );
}

/// Issue 39: a model step that panics (a decoder's bug, an application's
/// model) fails its run with the panic's message, awaited or streamed;
/// what the run did before stays in its response; the process and the
/// agent go on.
#[tokio::test]
async fn a_panicking_model_step_fails_the_run_not_the_process() {
    let model = ScriptedModel::new([calls(&[("c1", "get_order", json!({"order_id": "A-1001"}))])]);
    for _ in 0..2 {
        model.push_step(Box::new(|_| {
            panic!("decoder bug at index 18446744073709551615")
        }));
    }
    model.push(says("Fine now."));
    let agent = agent(&model, Limits::default());
    let r = agent.run(input("Where is A-1001?")).await;
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.id.as_deref(), Some("run_test"));
    let e = r.error.clone().unwrap();
    assert_eq!(e.code, "model_error");
    assert_eq!(
        e.message,
        "the model panicked: decoder bug at index 18446744073709551615"
    );
    assert_eq!(
        e.cause,
        Some(json!({"kind": "panic", "message": "decoder bug at index 18446744073709551615"}))
    );
    let roles: Vec<Role> = r.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::Assistant, Role::Tool],
        "the turn before the panic is kept"
    );
    assert_eq!(r.usage.input_tokens, 20);

    let events: Vec<RunEvent> = agent.run(input("Again")).stream().collect().await;
    let Some(RunEvent::RunCompleted(streamed)) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(streamed.status, RunStatus::Failed);
    assert_eq!(streamed.error.as_ref().unwrap().message, e.message);

    let ok = agent.run(input("Once more")).await;
    assert_eq!(ok.status, RunStatus::Completed, "{:?}", ok.error);
    assert_eq!(model.remaining(), 0);
}

/// An agent with `key` signing its approval digests, and `previous`
/// (a rotated secret's) still verifying.
fn keyed(model: &ScriptedModel, key: &[u8], previous: &[&[u8]]) -> Agent {
    let mut b = Agent::builder(Arc::new(model.clone())).approval_key(key.to_vec());
    for p in previous {
        b = b.previous_approval_key(p.to_vec());
    }
    for t in tools() {
        b = b.tool(t);
    }
    b.build().unwrap()
}

/// After the key rotates, a run that paused before is decided with the
/// previous key kept (its digests verify); without it, refused.
#[tokio::test]
async fn a_previous_approval_key_still_verifies_what_it_signed() {
    let model = ScriptedModel::new([
        calls(&[("c1", "refund", json!({"order_id": "A-1", "amount": 100}))]),
        says("Refunded."),
    ]);
    let paused = keyed(&model, b"old", &[]).run(input("Refund A-1")).await;
    assert!(paused.pending[0].digest.starts_with("hmac-sha256:"));
    let resume = |a: Agent| {
        let paused = through_json(&paused);
        async move {
            let decisions = vec![decision(&paused, "c1", DecisionKind::Approved)];
            a.resume(Resume {
                turns: vec![],
                paused,
                decisions,
            })
            .await
        }
    };
    let e = resume(keyed(&model, b"new", &[])).await.unwrap_err();
    assert!(
        e.to_string().contains("does not match the model's call"),
        "{e}"
    );
    let r = resume(keyed(&model, b"new", &[b"other", b"old"]))
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    // A digest made by the new key is still refused by the old one alone.
    let fresh = ScriptedModel::new([calls(&[(
        "c1",
        "refund",
        json!({"order_id": "A-1", "amount": 100}),
    )])]);
    let p = keyed(&fresh, b"new", &[b"old"])
        .run(input("Refund A-1"))
        .await;
    let e = keyed(&fresh, b"old", &[])
        .resume(Resume {
            turns: vec![],
            decisions: vec![decision(&p, "c1", DecisionKind::Approved)],
            paused: p,
        })
        .await
        .unwrap_err();
    assert!(e.to_string().contains("does not match"), "{e}");
}

/// Sets its flag when dropped: an async tool's future was stopped.
struct SetOnDrop(Arc<std::sync::atomic::AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_run_mid_call_stops_its_tools_and_cancels_their_token() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
    let async_dropped = Arc::new(AtomicBool::new(false));
    let (saw_cancel_tx, saw_cancel) = std::sync::mpsc::channel::<bool>();
    let tx = started_tx.clone();
    let flag = Arc::clone(&async_dropped);
    let slow_async = Tool::new("slow_async", "Waits.", move |_: Value, _c: ToolContext| {
        let tx = tx.clone();
        let flag = Arc::clone(&flag);
        async move {
            let _guard = SetOnDrop(flag);
            tx.send("async").unwrap();
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<_, ToolError>(json!("never"))
        }
    });
    let tx = started_tx;
    let slow_blocking = Tool::blocking(
        "slow_blocking",
        "Waits, checking its token.",
        move |_: Value, c: ToolContext| -> Result<String, ToolError> {
            tx.send("blocking").unwrap();
            let until = std::time::Instant::now() + Duration::from_secs(10);
            while !c.cancel.is_cancelled() && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            saw_cancel_tx.send(c.cancel.is_cancelled()).unwrap();
            Ok("stopped".into())
        },
    );
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "slow_async", json!({})),
            ("c2", "slow_blocking", json!({})),
        ]),
        says("never reached"),
    ]);
    let agent = Agent::builder(Arc::new(model.clone()))
        .tool(slow_async)
        .tool(slow_blocking)
        .limits(Limits {
            tool_timeout: Duration::from_secs(60),
            ..Limits::default()
        })
        .build()
        .unwrap();
    let run = tokio::spawn(async move { agent.run(RunInput::text("Go")).await });
    let mut seen = vec![started.recv().await.unwrap(), started.recv().await.unwrap()];
    seen.sort();
    assert_eq!(seen, ["async", "blocking"]);
    // The caller gives up on the run: its future is dropped mid-call.
    run.abort();
    assert!(run.await.unwrap_err().is_cancelled());
    assert!(
        async_dropped.load(Ordering::SeqCst),
        "the async tool's future was dropped with the run"
    );
    let saw = tokio::task::spawn_blocking(move || saw_cancel.recv_timeout(Duration::from_secs(5)))
        .await
        .unwrap();
    assert_eq!(
        saw,
        Ok(true),
        "a blocking tool sees its token cancelled when the run is dropped"
    );
    assert_eq!(model.received().len(), 1, "no model call after the drop");
}

/// A tool's idempotency key: the thread (or, off one, the run) and the
/// call, the same however often the call runs again.
#[tokio::test]
async fn a_calls_idempotency_key_is_its_thread_or_run_and_its_id() {
    let keyed = Tool::new(
        "charge",
        "Charge a card.",
        |_a: Value, c: ToolContext| async move { Ok::<_, ToolError>(c.idempotency_key()) },
    );
    let call = || {
        Message::new(
            Role::Assistant,
            vec![Block::tool_call("call_7", "charge", json!({}))],
        )
    };
    let model = ScriptedModel::new([
        call(),
        Message::assistant("done"),
        call(),
        Message::assistant("done"),
    ]);
    let agent = Agent::builder(Arc::new(model)).tool(keyed).build().unwrap();
    let key = |r: &parlance_format::Response| {
        let m = serde_json::to_value(&r.messages[2]).unwrap();
        m["content"][0]["tool_result"]["content"][0]["text"].clone()
    };
    let off_thread = agent.run("Charge").id("run_fixed").await;
    assert_eq!(key(&off_thread), "run_fixed/call_7");
    let on_thread = agent.run("Charge").id("run_other").thread("thr_9").await;
    assert_eq!(key(&on_thread), "thr_9/call_7");
    assert_eq!(
        parlance_agent::idempotency_key("run_1", Some("thr_1"), "c1"),
        "thr_1/c1"
    );
}

/// A call the process could not run for its own lack of resources (an HTTP
/// tool that found no file descriptor left) is not the tool's failure: the
/// model is not told, whatever the policy; the run ends `server_resources`
/// and the call's result is `interrupted`, so a retry runs it again.
#[tokio::test]
async fn a_call_the_server_had_no_resources_for_ends_the_run_and_the_model_never_reads_it() {
    for policy in [
        parlance_agent::OnToolException::ReturnToModel,
        parlance_agent::OnToolException::ReturnGeneric,
    ] {
        let model = ScriptedModel::new([
            calls(&[("c1", "lookup", json!({}))]),
            says("I should never be asked."),
        ]);
        let agent = Agent::builder(Arc::new(model.clone()))
            .limits(parlance_agent::Limits {
                on_tool_exception: policy,
                ..Default::default()
            })
            .tool(Tool::new(
                "lookup",
                "Look up.",
                |_: Value, _c: parlance_agent::ToolContext| async move {
                    Err::<String, _>(parlance_agent::ToolFailure::server_resources(
                        "could not connect: Too many open files (os error 24)",
                    ))
                },
            ))
            .build()
            .unwrap();
        let r = agent.run("Where is A-1?").await;
        assert_eq!(r.status, RunStatus::Failed, "{policy:?}");
        let e = r.error.as_ref().unwrap();
        assert_eq!(e.code, "server_resources");
        assert!(e.message.contains("tool lookup could not run: the server ran out of resources: could not connect: Too many open files"), "{}", e.message);
        let result = r
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .find_map(Block::as_tool_result)
            .unwrap();
        assert_eq!(result.status, ToolStatus::Interrupted);
        assert_eq!(model.received().len(), 1, "the model was not asked again");
    }
}
