//! The UI message stream's translation, without a network (the official
//! client's view is bindings/node/test/ai_sdk.test.mjs).

use super::*;
use parlance_format::{Response, RunStatus, Usage};

fn call(id: &str, name: &str, args: Value) -> Message {
    Message::new(Role::Assistant, vec![Block::tool_call(id, name, args)])
}

fn result(id: &str, status: ToolStatus, content: Vec<Block>) -> Block {
    let mut r = ToolResult::text(id, status, "");
    r.content = content;
    Block::tool_result(r)
}

fn waiting(id: &str, digest: &str) -> ApprovalRequest {
    ApprovalRequest {
        tool_call_id: id.into(),
        name: "refund".into(),
        arguments: json!({"amount": 40}),
        digest: digest.into(),
        run_id: None,
    }
}

fn types(chunks: &[Value]) -> Vec<&str> {
    chunks.iter().map(|c| c["type"].as_str().unwrap()).collect()
}

fn done(status: RunStatus) -> Response {
    Response {
        id: Some("run_1".into()),
        thread_id: Some("thr_1".into()),
        status,
        messages: Vec::new(),
        output: Value::Null,
        usage: Usage::default(),
        cost: None,
        finish_reason: None,
        pending: Vec::new(),
        error: (status == RunStatus::Failed)
            .then(|| parlance_format::RunError::new("model_error", "the provider is down")),
    }
}

#[test]
fn a_streamed_run_is_steps_of_parts_ending_with_finish() {
    let mut ui = UiStream::new();
    let mut out = vec![UiStream::start("run_1")];
    let events = [
        RunEvent::ThinkingDelta("Look it up.".into()),
        RunEvent::TextDelta("Checking".into()),
        RunEvent::TextDelta(String::new()),
        RunEvent::MessageCompleted({
            let mut m = call("c1", "lookup_order", json!({"id": "A-17"}));
            m.content.insert(0, Block::text("Checking"));
            m
        }),
        RunEvent::ToolCallStarted {
            call_id: "c1".into(),
            name: "lookup_order".into(),
        },
        RunEvent::MessageCompleted(Message::new(
            Role::Tool,
            vec![result(
                "c1",
                ToolStatus::Ok,
                vec![Block::Json {
                    json: json!({"status": "shipped"}),
                }],
            )],
        )),
        RunEvent::TextDelta("It has ".into()),
        RunEvent::TextDelta("shipped.".into()),
        RunEvent::MessageCompleted(Message::assistant("It has shipped.")),
        RunEvent::RunCompleted(done(RunStatus::Completed)),
    ];
    for e in &events {
        out.extend(ui.event(e));
    }
    assert_eq!(
        types(&out),
        [
            "start",
            "start-step",
            "reasoning-start",
            "reasoning-delta",
            "reasoning-end",
            "text-start",
            "text-delta",
            "text-end",
            "tool-input-available",
            "tool-output-available",
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-delta",
            "text-end",
            "finish-step",
            "finish",
        ]
    );
    assert_eq!(out[0]["messageId"], "run_1");
    assert_eq!(out[8]["input"], json!({"id": "A-17"}));
    assert_eq!(out[8]["toolName"], "lookup_order");
    assert_eq!(out[9]["output"], json!({"status": "shipped"}));
    // One id per part, the same from start to end.
    assert_eq!(out[12]["id"], out[15]["id"]);
    assert_ne!(out[5]["id"], out[12]["id"]);
    let finish = out.last().unwrap();
    assert_eq!(finish["finishReason"], "stop");
    assert_eq!(finish["messageMetadata"]["parlance"]["run_id"], "run_1");
}

#[test]
fn a_message_from_the_store_is_told_whole_and_waiting_calls_ask_for_approval() {
    let mut ui = UiStream::new();
    let mut m = call("c1", "refund", json!({"amount": 40}));
    m.content.insert(0, Block::text("I will refund it."));
    let mut out = ui.message(&Message::user("Refund 40"));
    assert!(out.is_empty(), "the input is the user's: {out:?}");
    out.extend(ui.message(&m));
    out.extend(ui.message(&Message::new(
        Role::Tool,
        vec![Block::ApprovalRequest {
            approval_request: waiting("c1", "hmac-sha256:ab"),
        }],
    )));
    out.extend(ui.stopped("requires_approval", None, json!({})));
    assert_eq!(
        types(&out),
        [
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "tool-input-available",
            "tool-approval-request",
            "finish-step",
            "finish",
        ]
    );
    assert_eq!(out[2]["delta"], "I will refund it.");
    assert_eq!(out[5]["approvalId"], "hmac-sha256:ab");
    assert_eq!(out[5]["toolCallId"], "c1");
    assert_eq!(out[7]["finishReason"], "tool-calls");
}

#[test]
fn results_that_are_not_ok_are_errors_or_denials_and_a_failed_run_is_an_error() {
    let mut ui = UiStream::new();
    let out = ui.message(&Message::new(
        Role::Tool,
        vec![
            result("c1", ToolStatus::Rejected, vec![Block::text("not today")]),
            result(
                "c2",
                ToolStatus::Timeout,
                vec![Block::text("took too long")],
            ),
            result(
                "c3",
                ToolStatus::Ok,
                vec![Block::text("a"), Block::text("b")],
            ),
        ],
    ));
    assert_eq!(
        types(&out),
        [
            "tool-output-denied",
            "tool-output-error",
            "tool-output-available"
        ]
    );
    assert_eq!(out[1]["errorText"], "timeout: took too long");
    assert_eq!(out[2]["output"], "ab");
    let end = ui.event(&RunEvent::RunCompleted(done(RunStatus::Failed)));
    assert_eq!(types(&end), ["error"]);
    assert_eq!(end[0]["errorText"], "model_error: the provider is down");
}

#[test]
fn a_stored_thread_is_ui_messages_with_one_assistant_message_per_run() {
    let stored = |seq, run: &str, message| StoredMessage {
        seq,
        run_id: Some(run.into()),
        message,
    };
    let mut retry = Message::user("The answer was not accepted. Answer again.");
    retry.metadata = Some(serde_json::Map::from_iter([(
        "output_retry".into(),
        json!(1),
    )]));
    let thread = [
        stored(0, "run_1", Message::user("Where is A-17?")),
        stored(
            1,
            "run_1",
            call("c1", "lookup_order", json!({"id": "A-17"})),
        ),
        stored(
            2,
            "run_1",
            Message::new(
                Role::Tool,
                vec![result("c1", ToolStatus::Ok, vec![Block::text("shipped")])],
            ),
        ),
        stored(3, "run_1", Message::assistant("It has shipped.")),
        stored(4, "run_1", retry),
        stored(5, "run_2", Message::user("Refund it")),
        stored(6, "run_2", call("c2", "refund", json!({"amount": 40}))),
        stored(
            7,
            "run_2",
            Message::new(
                Role::Tool,
                vec![Block::ApprovalRequest {
                    approval_request: waiting("c2", "hmac-sha256:cd"),
                }],
            ),
        ),
    ];
    let ui = ui_messages(&thread);
    let roles: Vec<&str> = ui.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(
        ui[0]["parts"],
        json!([{"type": "text", "text": "Where is A-17?"}])
    );
    assert_eq!(ui[1]["id"], "run_1");
    assert_eq!(
        ui[1]["parts"],
        json!([
            {"type": "step-start"},
            {"type": "tool-lookup_order", "toolCallId": "c1", "state": "output-available",
             "input": {"id": "A-17"}, "output": "shipped"},
            {"type": "step-start"},
            {"type": "text", "text": "It has shipped.", "state": "done"},
        ])
    );
    assert_eq!(ui[3]["parts"][1]["state"], "approval-requested");
    assert_eq!(
        ui[3]["parts"][1]["approval"],
        json!({"id": "hmac-sha256:cd"})
    );
}

#[test]
fn decisions_come_from_tool_parts_in_all_four_kinds() {
    let pending = [
        waiting("c1", "d1"),
        waiting("c2", "d2"),
        waiting("c3", "d3"),
        waiting("c4", "d4"),
    ];
    let message = json!({"role": "assistant", "parts": [
        {"type": "step-start"},
        {"type": "tool-refund", "toolCallId": "c1", "state": "approval-responded", "approval": {"id": "d1", "approved": true}},
        {"type": "tool-refund", "toolCallId": "c2", "state": "approval-responded", "approval": {"id": "d2", "approved": false, "reason": "too much"}},
        {"type": "tool-refund", "toolCallId": "c3", "state": "approval-responded", "approval": {"id": "d3", "approved": true, "editedInput": {"amount": 30}}},
        {"type": "tool-refund", "toolCallId": "c4", "state": "output-available", "output": {"refund": "#9"}},
    ]});
    let d = decisions(&message, &pending, "messages[3]").unwrap();
    let kinds: Vec<&str> = d.iter().map(|d| d.decision.as_str()).collect();
    assert_eq!(kinds, ["approved", "rejected", "edited", "answered"]);
    assert_eq!(d[1].reason.as_deref(), Some("too much"));
    assert_eq!(d[2].arguments, Some(json!({"amount": 30})));
    assert_eq!(
        d[3].content,
        Some(vec![Block::Json {
            json: json!({"refund": "#9"})
        }])
    );
    assert!(d.iter().zip(&pending).all(|(d, p)| d.digest == p.digest));
}

#[test]
fn decisions_that_cannot_be_read_name_the_part() {
    let pending = [waiting("c1", "d1")];
    let cases = [
        (
            json!({"parts": []}),
            "messages[1].parts: no part for call \"c1\" (refund)",
        ),
        (
            json!({"parts": [{"toolCallId": "c1", "state": "approval-requested"}]}),
            "messages[1].parts[0].state: \"approval-requested\"",
        ),
        (
            json!({"parts": [{"toolCallId": "c1", "state": "approval-responded", "approval": {"id": "forged", "approved": true}}]}),
            "messages[1].parts[0].approval.id: not the id",
        ),
        (
            json!({"parts": [{"toolCallId": "c1", "state": "approval-responded", "approval": {"id": "d1"}}]}),
            "messages[1].parts[0].approval.approved: required",
        ),
        (
            json!({"parts": [{"toolCallId": "c1", "state": "output-available"}]}),
            "messages[1].parts[0].output: required",
        ),
        (json!({}), "messages[1].parts: required"),
    ];
    for (message, expected) in cases {
        let e = decisions(&message, &pending, "messages[1]").unwrap_err();
        assert!(e.starts_with(expected), "{e}");
    }
}

#[test]
fn a_users_message_is_its_text_parts() {
    let m = json!({"role": "user", "parts": [{"type": "step-start"}, {"type": "text", "text": "Hi"}, {"type": "text", "text": " there"}]});
    let input = user_input(&m, "messages[0]").unwrap();
    assert_eq!(input.len(), 1);
    assert_eq!(input[0].text(), "Hi there");
    let e = user_input(
        &json!({"parts": [{"type": "file", "url": "x"}]}),
        "messages[2]",
    )
    .unwrap_err();
    assert_eq!(
        e,
        "messages[2].parts[0].type: \"file\" is not supported in a user message (text parts only)"
    );
    let e = user_input(&json!({"parts": []}), "messages[0]").unwrap_err();
    assert!(e.contains("no text part"), "{e}");
    let e = user_input(&json!({"parts": [{"type": "text"}]}), "messages[0]").unwrap_err();
    assert_eq!(e, "messages[0].parts[0].text: required (a string)");
}

#[test]
fn a_decided_call_keeps_its_approval_in_the_stored_thread() {
    let mut denied = ToolResult::text("c1", ToolStatus::Rejected, "over the limit");
    denied.approval = Some(parlance_format::Approval {
        decision: DecisionKind::Rejected,
        arguments: None,
        reason: Some("over the limit".into()),
    });
    let mut answered = ToolResult::text("c2", ToolStatus::Ok, "#9");
    answered.approval = Some(parlance_format::Approval {
        decision: DecisionKind::Answered,
        arguments: None,
        reason: None,
    });
    let thread = [
        StoredMessage {
            seq: 0,
            run_id: Some("run_1".into()),
            message: Message::new(
                Role::Assistant,
                vec![
                    Block::tool_call("c1", "refund", json!({"amount": 900})),
                    Block::tool_call("c2", "refund", json!({"amount": 9})),
                ],
            ),
        },
        StoredMessage {
            seq: 1,
            run_id: Some("run_1".into()),
            message: Message::new(
                Role::Tool,
                vec![Block::tool_result(denied), Block::tool_result(answered)],
            ),
        },
    ];
    let ui = ui_messages(&thread);
    let parts = &ui[0]["parts"];
    assert_eq!(parts[1]["state"], "output-denied");
    assert_eq!(
        parts[1]["approval"],
        json!({"id": "c1", "approved": false, "reason": "over the limit"})
    );
    assert_eq!(parts[2]["state"], "output-available");
    assert_eq!(parts[2]["output"], "#9");
    assert!(parts[2].get("approval").is_none(), "{parts}");
}
