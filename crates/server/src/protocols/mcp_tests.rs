//! The forms' answers as decisions, without a network (the official
//! clients' view: bindings/python/tests/test_mcp_server.py and
//! bindings/node/test/mcp_server.test.mjs).

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

fn answer(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn accepted_forms_are_the_four_decisions_and_a_declined_one_rejects() {
    let pending = [
        waiting("c1", "d1"),
        waiting("c2", "d2"),
        waiting("c3", "d3"),
        waiting("c4", "d4"),
        waiting("c5", "d5"),
    ];
    let answers = answer(&[
        (
            "d1",
            json!({"action": "accept", "content": {"decision": "approved"}}),
        ),
        (
            "d2",
            json!({"action": "accept", "content": {"decision": "rejected", "reason": "no"}}),
        ),
        (
            "d3",
            json!({"action": "accept", "content": {"decision": "edited", "arguments": "{\"amount\": 30}"}}),
        ),
        (
            "d4",
            json!({"action": "accept", "content": {"decision": "answered", "answer": "refund #9"}}),
        ),
        ("d5", json!({"action": "decline"})),
    ]);
    let d = decisions(&pending, &answers).unwrap().unwrap();
    let kinds: Vec<&str> = d.iter().map(|d| d.decision.as_str()).collect();
    assert_eq!(
        kinds,
        ["approved", "rejected", "edited", "answered", "rejected"]
    );
    assert_eq!(d[1].reason.as_deref(), Some("no"));
    assert_eq!(d[2].arguments, Some(json!({"amount": 30})));
    assert_eq!(d[3].content, Some(vec![Block::text("refund #9")]));
    assert_eq!(d[4].reason.as_deref(), Some("the person declined it"));
    assert!(
        d.iter()
            .zip(&pending)
            .all(|(d, p)| d.digest == p.digest && d.tool_call_id == p.tool_call_id)
    );
}

#[test]
fn a_cancelled_form_leaves_the_run_waiting_and_bad_answers_are_named() {
    let pending = [waiting("c1", "d1")];
    assert_eq!(
        decisions(&pending, &answer(&[("d1", json!({"action": "cancel"}))])),
        Ok(None)
    );
    let cases = [
        (answer(&[]), "no answer for the call of refund (c1)"),
        (
            answer(&[("forged", json!({"action": "accept"}))]),
            "no answer for the call of refund",
        ),
        (
            answer(&[(
                "d1",
                json!({"action": "accept", "content": {"decision": "edited", "arguments": "{not json"}}),
            )]),
            "refund: arguments: not JSON",
        ),
        (
            answer(&[(
                "d1",
                json!({"action": "accept", "content": {"decision": "maybe"}}),
            )]),
            "refund: decision: Some(\"maybe\") is not approved",
        ),
        (
            answer(&[("d1", json!({"action": "shrug"}))]),
            "refund: action: Some(\"shrug\")",
        ),
    ];
    for (answers, expected) in cases {
        let e = decisions(&pending, &answers).unwrap_err();
        assert!(e.starts_with(expected), "{e}");
    }
}

#[test]
fn the_form_is_a_flat_elicitation_schema() {
    let InputRequest::Elicitation(request) = form(&waiting("c1", "d1")) else {
        panic!("an elicitation");
    };
    let v = serde_json::to_value(&request).unwrap();
    assert_eq!(v["method"], "elicitation/create");
    assert_eq!(v["params"]["mode"], "form");
    assert_eq!(
        v["params"]["message"],
        "refund({\"amount\":40}) waits for your decision."
    );
    let schema = &v["params"]["requestedSchema"];
    assert_eq!(schema["required"], json!(["decision"]));
    for (_, p) in schema["properties"].as_object().unwrap() {
        assert_eq!(
            p["type"], "string",
            "elicitation forms hold primitives only: {p}"
        );
    }
}
