//! The public readers the other crates and bindings call directly, each
//! tested here in the format crate (issue 15: mutation testing showed
//! `Usage::from_value`, `messages_from_value` and
//! `Conversation::from_json_str` could be replaced by a constant, and the
//! `approval_request` link check deleted, without a test of this crate
//! failing).

use parlance_format::{Block, Conversation, Message, Role, Usage, messages_from_value};
use serde_json::{Value, json};

#[test]
fn usage_from_value_reads_every_field() {
    let u = Usage::from_value(&json!({"input_tokens": 25, "output_tokens": 8,
        "cached_tokens": 4, "cache_write_tokens": 3, "reasoning_tokens": 2}))
    .unwrap();
    assert_eq!(
        u,
        Usage {
            input_tokens: 25,
            output_tokens: 8,
            cached_tokens: 4,
            cache_write_tokens: Some(3),
            reasoning_tokens: Some(2),
        }
    );
    // The optional counts are optional; cached_tokens defaults to 0.
    let u = Usage::from_value(&json!({"input_tokens": 1, "output_tokens": 2})).unwrap();
    assert_eq!(
        u,
        Usage {
            input_tokens: 1,
            output_tokens: 2,
            ..Usage::default()
        }
    );
}

#[test]
fn usage_from_value_names_what_is_wrong() {
    for (v, path, words) in [
        (
            json!({"output_tokens": 2}),
            "input_tokens",
            "required field missing",
        ),
        (
            json!({"input_tokens": 2}),
            "output_tokens",
            "required field missing",
        ),
        (
            json!({"input_tokens": -1, "output_tokens": 2}),
            "input_tokens",
            "",
        ),
        (
            json!({"input_tokens": 1, "output_tokens": 2, "cached": 1}),
            "cached",
            "unknown field",
        ),
        (json!([1, 2]), "", "usage"),
    ] {
        let e = Usage::from_value(&v).unwrap_err();
        assert_eq!(e.path, path, "{v}: {e}");
        assert!(e.message.contains(words), "{v}: {e}");
    }
}

fn call(id: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "tool_call",
        "tool_call": {"id": id, "name": "f", "arguments": {}}}]})
}

fn result(id: &str) -> Value {
    json!({"role": "tool", "content": [{"type": "tool_result",
        "tool_result": {"tool_call_id": id, "content": [{"type": "text", "text": "ok"}]}}]})
}

fn approval(id: &str) -> Value {
    json!({"role": "tool", "content": [{"type": "approval_request",
        "approval_request": {"tool_call_id": id, "name": "f", "arguments": {}, "digest": "sha256:00"}}]})
}

#[test]
fn messages_from_value_reads_the_messages_in_order() {
    let v = json!([{"role": "user", "content": "hi"}, call("c1"), result("c1")]);
    let msgs = messages_from_value(&v, "messages").unwrap();
    assert_eq!(msgs.len(), 3);
    assert_eq!(
        msgs.iter().map(|m| m.role).collect::<Vec<_>>(),
        [Role::User, Role::Assistant, Role::Tool]
    );
    assert_eq!(msgs[0], Message::user("hi"));
    assert_eq!(msgs[1].tool_calls().next().unwrap().id, "c1");
    // The same messages as the conversation reader gives.
    assert_eq!(msgs, Conversation::from_value(&v).unwrap().messages);
}

#[test]
fn messages_from_value_puts_the_prefix_on_every_error_path() {
    let bad_role = json!([{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]);
    let e = messages_from_value(&bad_role, "messages").unwrap_err();
    assert_eq!(e.path, "messages[1].role", "{e}");
    let e = messages_from_value(&bad_role, "").unwrap_err();
    assert_eq!(e.path, "[1].role", "{e}");
    // The links are checked too, under the same prefix.
    let orphan = json!([{"role": "user", "content": "hi"}, result("nope")]);
    let e = messages_from_value(&orphan, "req.messages").unwrap_err();
    assert_eq!(
        e.path, "req.messages[1].content[0].tool_result.tool_call_id",
        "{e}"
    );
    assert!(
        e.message.contains("no earlier tool call has id \"nope\""),
        "{e}"
    );
    let e = messages_from_value(&json!({"role": "user"}), "messages").unwrap_err();
    assert_eq!(e.path, "messages", "{e}");
}

#[test]
fn conversation_from_json_str_reads_text_as_from_value_reads_values() {
    let v = json!({"messages": [{"role": "user", "content": "hi"}, call("c1"), result("c1")],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}]});
    let c = Conversation::from_json_str(&v.to_string()).unwrap();
    assert_eq!(c, Conversation::from_value(&v).unwrap());
    assert_eq!(c.messages.len(), 3);
    assert_eq!(c.tools.len(), 1);
    assert_eq!(c.tools[0].name, "f");
    // A bare array is the messages.
    let arr = Conversation::from_json_str(r#"[{"role": "user", "content": "hi"}]"#).unwrap();
    assert_eq!(arr.messages, vec![Message::user("hi")]);
    assert!(arr.tools.is_empty());
}

#[test]
fn conversation_from_json_str_names_what_is_wrong() {
    let e = Conversation::from_json_str("[{\"role\": \"user\",").unwrap_err();
    assert!(e.message.contains("JSON"), "{e}");
    let e = Conversation::from_json_str("7").unwrap_err();
    assert!(e.message.contains("expected a conversation"), "{e}");
    let e =
        Conversation::from_json_str(r#"{"messages": [{"role": "user", "content": []}], "x": 1}"#)
            .unwrap_err();
    assert_eq!(e.path, "x", "{e}");
    // The whole-conversation checks run on text too.
    let twice = json!([call("c1"), call("c1")]).to_string();
    let e = Conversation::from_json_str(&twice).unwrap_err();
    assert!(e.message.contains("duplicate tool call id"), "{e}");
}

#[test]
fn an_approval_request_must_answer_an_earlier_call() {
    // Waiting on a call that was made: fine.
    let ok = json!([call("c1"), approval("c1")]);
    let c = Conversation::from_value(&ok).unwrap();
    assert!(matches!(
        c.messages[1].content[0],
        Block::ApprovalRequest { .. }
    ));
    // Waiting on no call, or on a call not made yet: refused, path named.
    for v in [json!([approval("c1")]), json!([approval("c1"), call("c1")])] {
        let e = Conversation::from_value(&v).unwrap_err();
        assert_eq!(
            e.path, "[0].content[0].approval_request.tool_call_id",
            "{e}"
        );
        assert!(
            e.message.contains("no earlier tool call has id \"c1\""),
            "{e}"
        );
    }
    // A call already answered is not waiting.
    let e =
        Conversation::from_value(&json!([call("c1"), result("c1"), approval("c1")])).unwrap_err();
    assert_eq!(
        e.path, "[2].content[0].approval_request.tool_call_id",
        "{e}"
    );
    assert!(e.message.contains("already answered"), "{e}");
    // messages_from_value runs the same check.
    let e = messages_from_value(&json!([approval("zz")]), "messages").unwrap_err();
    assert_eq!(
        e.path, "messages[0].content[0].approval_request.tool_call_id",
        "{e}"
    );
}

/// A wrong string is quoted whole up to 40 characters, and cut with "…"
/// after them (an error message stays one readable line).
#[test]
fn a_wrong_string_is_quoted_whole_up_to_forty_characters() {
    let message = |s: &str| {
        Usage::from_value(&json!({"input_tokens": s, "output_tokens": 1}))
            .unwrap_err()
            .message
    };
    let forty = "a".repeat(40);
    assert_eq!(
        message(&forty),
        format!("expected a non-negative integer, got string \"{forty}\"")
    );
    let forty_one = "b".repeat(41);
    assert_eq!(
        message(&forty_one),
        format!(
            "expected a non-negative integer, got string \"{}…\"",
            &forty_one[..40]
        )
    );
    assert_eq!(
        message("7"),
        "expected a non-negative integer, got string \"7\""
    );
}

/// A text block with a signature or an item id (but not both) still names
/// the provider they belong to.
#[test]
fn a_text_block_with_either_opaque_field_needs_its_provider() {
    for extra in [json!({"signature": "sig"}), json!({"item_id": "msg_1"})] {
        let mut block = json!({"type": "text", "text": "hi"});
        block
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let v = json!([{"role": "assistant", "content": [block.clone()]}]);
        let e = messages_from_value(&v, "messages").unwrap_err();
        assert_eq!(e.path, "messages[0].content[0].provider", "{block}: {e}");
        assert!(
            e.message.contains("required when a text block carries"),
            "{e}"
        );
        block["provider"] = json!("openai");
        let v = json!([{"role": "assistant", "content": [block]}]);
        assert!(messages_from_value(&v, "messages").is_ok());
    }
}
