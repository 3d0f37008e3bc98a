//! AG-UI's translation, without a network (the official client's view is
//! bindings/node/test/ag_ui.test.mjs).

use super::*;
use parlance_format::{Response, RunStatus, ToolResult, Usage};

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
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

fn no_schema(_: &str) -> Option<Value> {
    None
}

#[test]
fn a_run_is_steps_of_messages_tool_calls_and_results() {
    let mut ag = AgUiStream::new("thr_1", "client-run");
    let mut out = ag.start("run_1", &json!({"plan": "gold"}));
    let mut calling = Message::new(
        Role::Assistant,
        vec![
            Block::text("Checking."),
            Block::tool_call("c1", "get_order", json!({"order_id": "A-17"})),
        ],
    );
    calling.finish_reason = None;
    let events = [
        RunEvent::ThinkingDelta("Look it up.".into()),
        RunEvent::TextDelta("Checking.".into()),
        RunEvent::MessageCompleted(calling),
        RunEvent::MessageCompleted(Message::new(
            Role::Tool,
            vec![Block::tool_result(ToolResult::text(
                "c1",
                ToolStatus::Ok,
                "shipped",
            ))],
        )),
        RunEvent::TextDelta("It has shipped.".into()),
        RunEvent::MessageCompleted(Message::assistant("It has shipped.")),
        RunEvent::RunCompleted(Response {
            id: Some("run_1".into()),
            thread_id: Some("thr_1".into()),
            status: RunStatus::Completed,
            messages: Vec::new(),
            output: json!("It has shipped."),
            usage: Usage {
                input_tokens: 20,
                output_tokens: 5,
                ..Usage::default()
            },
            cost: None,
            finish_reason: None,
            pending: Vec::new(),
            error: None,
        }),
    ];
    for e in &events {
        out.extend(ag.event(e, &no_schema));
    }
    assert_eq!(
        types(&out),
        [
            "RUN_STARTED",
            "STATE_SNAPSHOT",
            "STEP_STARTED",
            "REASONING_START",
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_END",
            "REASONING_END",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "STEP_FINISHED",
            "STEP_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "STEP_FINISHED",
            "RUN_FINISHED",
        ]
    );
    assert_eq!(out[0]["runId"], "client-run");
    assert_eq!(out[0]["metadata"]["parlance"]["run_id"], "run_1");
    assert_eq!(out[1]["snapshot"], json!({"plan": "gold"}));
    // The calls belong to the message their text opened.
    assert_eq!(out[11]["parentMessageId"], out[8]["messageId"]);
    assert_eq!(out[12]["delta"], r#"{"order_id":"A-17"}"#);
    assert_eq!(out[14]["content"], "shipped");
    assert_eq!(out[16]["stepName"], "model_call_2");
    let finished = out.last().unwrap();
    assert_eq!(finished["outcome"], json!({"type": "success"}));
    assert_eq!(finished["result"], "It has shipped.");
    assert_eq!(finished["usage"][0]["totalTokens"], 25);
}

#[test]
fn a_waiting_run_finishes_with_interrupts_that_carry_the_edit_form() {
    let mut ag = AgUiStream::new("thr_1", "r2");
    let schema = |tool: &str| {
        (tool == "refund")
            .then(|| json!({"type": "object", "properties": {"amount": {"type": "number"}}}))
    };
    let out = ag.stopped(
        "requires_approval",
        None,
        &Value::Null,
        &Usage::default(),
        &[waiting("c1", "hmac-sha256:ab")],
        &schema,
    );
    assert_eq!(types(&out), ["RUN_FINISHED"]);
    let outcome = &out[0]["outcome"];
    assert_eq!(outcome["type"], "interrupt");
    let i = &outcome["interrupts"][0];
    assert_eq!(i["id"], "hmac-sha256:ab");
    assert_eq!(i["toolCallId"], "c1");
    assert_eq!(i["reason"], "tool_approval");
    assert_eq!(
        i["responseSchema"]["properties"]["arguments"]["properties"]["amount"]["type"],
        "number"
    );
    assert_eq!(i["responseSchema"]["required"], json!(["decision"]));
    assert!(out[0].get("result").is_none());

    let failed = ag.stopped(
        "failed",
        Some(&json!({"code": "model_error", "message": "down"})),
        &Value::Null,
        &Usage::default(),
        &[],
        &no_schema,
    );
    assert_eq!(
        failed,
        [json!({"type": "RUN_ERROR", "code": "model_error", "message": "down"})]
    );
}

#[test]
fn resume_entries_are_the_four_decisions() {
    let pending = [
        waiting("c1", "d1"),
        waiting("c2", "d2"),
        waiting("c3", "d3"),
        waiting("c4", "d4"),
        waiting("c5", "d5"),
    ];
    let resume = [
        json!({"interruptId": "d1", "status": "resolved"}),
        json!({"interruptId": "d2", "status": "resolved", "payload": {"decision": "edited", "arguments": {"amount": 30}}}),
        json!({"interruptId": "d3", "status": "resolved", "payload": {"decision": "rejected", "reason": "too much"}}),
        json!({"interruptId": "d4", "status": "resolved", "payload": {"decision": "answered", "content": "refund #9"}}),
        json!({"interruptId": "d5", "status": "cancelled"}),
    ];
    let d = decisions(&resume, &pending).unwrap();
    let kinds: Vec<&str> = d.iter().map(|d| d.decision.as_str()).collect();
    assert_eq!(
        kinds,
        ["approved", "edited", "rejected", "answered", "rejected"]
    );
    assert_eq!(d[1].arguments, Some(json!({"amount": 30})));
    assert_eq!(d[2].reason.as_deref(), Some("too much"));
    assert_eq!(d[3].content, Some(vec![Block::text("refund #9")]));
    assert_eq!(d[4].tool_call_id, "c5");

    let cases = [
        (
            json!({"status": "resolved"}),
            "resume[0].interruptId: required",
        ),
        (
            json!({"interruptId": "forged", "status": "resolved"}),
            "resume[0].interruptId: \"forged\" is not an interrupt",
        ),
        (
            json!({"interruptId": "d1", "status": "maybe"}),
            "resume[0].status: resolved or cancelled",
        ),
        (
            json!({"interruptId": "d1", "status": "resolved", "payload": {"decision": "edited"}}),
            "resume[0].payload.arguments: required",
        ),
        (
            json!({"interruptId": "d1", "status": "resolved", "payload": {"decision": "answered"}}),
            "resume[0].payload.content: required",
        ),
        (
            json!({"interruptId": "d1", "status": "resolved", "payload": {"decision": "yes"}}),
            "resume[0].payload.decision",
        ),
    ];
    for (entry, expected) in cases {
        let e = decisions(&[entry], &pending).unwrap_err();
        assert!(e.starts_with(expected), "{e}");
    }
}

#[test]
fn the_input_is_the_users_last_message() {
    let input =
        user_input(&[json!({"id": "1", "role": "user", "content": "Where is A-17?"})]).unwrap();
    assert_eq!(input[0].text(), "Where is A-17?");
    let parts = [
        json!({"id": "1", "role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]}),
    ];
    assert_eq!(user_input(&parts).unwrap()[0].text(), "Hi there");
    let e = user_input(&[json!({"id": "1", "role": "assistant", "content": "x"})]).unwrap_err();
    assert!(
        e.starts_with("messages[0].role: the last message must be the user's"),
        "{e}"
    );
    let e = user_input(&[json!({"id": "1", "role": "user", "content": [{"type": "image"}]})])
        .unwrap_err();
    assert_eq!(
        e,
        "messages[0].content[0].type: \"image\" is not supported (text parts only)"
    );
    assert!(
        user_input(&[])
            .unwrap_err()
            .starts_with("messages: the user's new message is required")
    );
}

#[test]
fn a_thread_snapshot_is_ag_ui_messages_with_ids_from_their_places() {
    use parlance_store::StoredMessage;
    let at = |seq, message| StoredMessage {
        seq,
        run_id: Some("run_1".into()),
        message,
    };
    let mut retry = Message::user("Answer again.");
    retry.metadata = Some(serde_json::Map::from_iter([(
        "output_retry".into(),
        json!(1),
    )]));
    let thread = [
        at(0, Message::user("Where is A-17?")),
        at(
            1,
            Message::new(
                Role::Assistant,
                vec![
                    Block::text("Checking."),
                    Block::tool_call("c1", "get_order", json!({"order_id": "A-17"})),
                ],
            ),
        ),
        at(
            2,
            Message::new(
                Role::Tool,
                vec![
                    Block::tool_result(ToolResult::text("c1", ToolStatus::Ok, "shipped")),
                    Block::ApprovalRequest {
                        approval_request: waiting("c2", "d2"),
                    },
                ],
            ),
        ),
        at(3, retry),
        at(4, Message::assistant("It has shipped.")),
    ];
    let snap = snapshot(&thread);
    assert_eq!(
        snap,
        [
            json!({"id": "msg-0", "role": "user", "content": "Where is A-17?"}),
            json!({"id": "msg-1", "role": "assistant", "content": "Checking.", "toolCalls": [
                {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": "{\"order_id\":\"A-17\"}"}}]}),
            json!({"id": "tool-2-0", "role": "tool", "toolCallId": "c1", "content": "shipped"}),
            json!({"id": "msg-4", "role": "assistant", "content": "It has shipped."}),
        ]
    );
}
