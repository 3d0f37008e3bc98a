//! A2A's translation, without a network (the official client's view is
//! bindings/python/tests/test_a2a_server.py).

use super::*;

fn waiting(id: &str, digest: &str) -> ApprovalRequest {
    ApprovalRequest {
        tool_call_id: id.into(),
        name: "refund".into(),
        arguments: json!({"amount": 40}),
        digest: digest.into(),
        run_id: None,
    }
}

#[test]
fn runs_are_tasks_in_the_states_a2a_names() {
    assert_eq!(state_of("running"), "TASK_STATE_WORKING");
    assert_eq!(state_of("completed"), "TASK_STATE_COMPLETED");
    assert_eq!(state_of("requires_approval"), "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(state_of("failed"), "TASK_STATE_FAILED");
    let t = task(
        "run_1",
        "thr_1",
        "completed",
        &json!("Done."),
        None,
        &[],
        Vec::new(),
    );
    assert_eq!(t["id"], "run_1");
    assert_eq!(t["contextId"], "thr_1");
    assert_eq!(t["artifacts"][0]["parts"][0]["text"], "Done.");
    assert!(t.get("history").is_none());
    let pending = [serde_json::to_value(waiting("c1", "d1")).unwrap()];
    let t = task(
        "run_1",
        "thr_1",
        "requires_approval",
        &Value::Null,
        None,
        &pending,
        Vec::new(),
    );
    let parts = &t["status"]["message"]["parts"];
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Waiting for a decision on refund(")
    );
    assert_eq!(parts[1]["data"]["pending"][0]["digest"], "d1");
    assert!(t.get("artifacts").is_none());
    let error = json!({"code": "model_error", "message": "down"});
    let t = task(
        "run_1",
        "thr_1",
        "failed",
        &Value::Null,
        Some(&error),
        &[],
        Vec::new(),
    );
    assert_eq!(
        t["status"]["message"]["parts"][0]["text"],
        "model_error: down"
    );
}

#[test]
fn an_answer_to_input_required_is_decisions() {
    let pending = [waiting("c1", "d1"), waiting("c2", "d2")];
    let text = |t: &str| json!({"parts": [{"text": t}]});
    let d = decisions_of(&text("Approve"), &pending).unwrap();
    assert!(d.iter().all(|d| d.decision == DecisionKind::Approved));
    assert_eq!(d.len(), 2);
    let d = decisions_of(&text("reject: over the limit"), &pending).unwrap();
    assert!(
        d.iter().all(|d| d.decision == DecisionKind::Rejected
            && d.reason.as_deref() == Some("over the limit"))
    );
    let data = json!({"parts": [{"data": {"decisions": [
        {"tool_call_id": "c1", "digest": "d1", "decision": "edited", "arguments": {"amount": 30}},
        {"tool_call_id": "c2", "digest": "d2", "decision": "answered", "content": [{"type": "text", "text": "#9"}]}]}}]});
    let d = decisions_of(&data, &pending).unwrap();
    assert_eq!(d[0].decision, DecisionKind::Edited);
    assert_eq!(d[1].decision, DecisionKind::Answered);
    let bad = json!({"parts": [{"data": {"decisions": [{"tool_call_id": "c1", "decision": "approved"}]}}]});
    let e = decisions_of(&bad, &pending).unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(
        e.message.starts_with("message.parts[0].data.decisions[0]"),
        "{}",
        e.message
    );
    let e = decisions_of(&text("maybe later"), &pending).unwrap_err();
    assert!(e.message.contains("waits for decisions"), "{}", e.message);
}

#[test]
fn a_message_is_its_text_and_data_parts() {
    let input = input_of(&json!({"parts": [{"text": "Where is "}, {"text": "A-17?"}]})).unwrap();
    assert_eq!(input[0].text(), "Where is A-17?");
    let e = input_of(&json!({"parts": [{"url": "https://x"}]})).unwrap_err();
    assert_eq!(e.code, -32005);
    assert_eq!(input_of(&json!({"parts": []})).unwrap_err().code, -32602);
    assert_eq!(
        input_of(&json!({})).unwrap_err().message,
        "message.parts: required (an array of parts)"
    );
}

#[test]
fn a_streamed_run_is_chunks_of_its_answer_then_its_last_status() {
    let mut a = A2aStream::new("run_1", "thr_1");
    assert_eq!(a.start()["task"]["status"]["state"], "TASK_STATE_WORKING");
    let mut out = a.event(&RunEvent::TextDelta("It has ".into()));
    out.extend(a.event(&RunEvent::TextDelta("shipped.".into())));
    out.extend(a.message(&Message::assistant("It has shipped.")));
    let chunks: Vec<(&str, bool, bool)> = out
        .iter()
        .map(|r| {
            let u = &r["artifactUpdate"];
            (
                u["artifact"]["parts"][0]["text"].as_str().unwrap(),
                u["append"].as_bool().unwrap(),
                u["lastChunk"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        chunks,
        [
            ("It has ", false, false),
            ("shipped.", true, false),
            ("", true, true)
        ]
    );
    // A message that did not stream is one whole chunk, a new artifact.
    let whole = a.message(&Message::assistant("Anything else?"));
    assert_eq!(
        whole[0]["artifactUpdate"]["artifact"]["artifactId"],
        "answer-2"
    );
    assert_eq!(whole[0]["artifactUpdate"]["append"], false);
    // What a stopped run waits for is the last tool message's requests.
    a.message(&Message::new(
        Role::Tool,
        vec![Block::ApprovalRequest {
            approval_request: waiting("c1", "d1"),
        }],
    ));
    let pending = std::mem::take(&mut a.waiting);
    let end = a.stopped("requires_approval", &Value::Null, None, &pending);
    assert_eq!(
        end[0]["statusUpdate"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    assert_eq!(
        end[0]["statusUpdate"]["status"]["message"]["parts"][1]["data"]["pending"][0]["digest"],
        "d1"
    );
}
