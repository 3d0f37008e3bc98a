//! `Message::check` (the reader's rules on typed values) says exactly what
//! the strict reader says of the same message written to JSON: the same
//! verdict and the same error, over generated messages that break each
//! rule (empty ids, media with no or two sources, blocks in the wrong
//! role, misplaced cache points, values at and past the depth limit,
//! negative and non-finite costs...).

use parlance_format::{
    Approval, ApprovalRequest, Block, CachePoint, DecisionKind, FinishReason, MAX_VALUE_DEPTH,
    Media, Message, Role, Text, Thinking, ToolCall, ToolResult, ToolStatus, Usage,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// What the reader says of `m` once written.
fn read_back(m: &Message) -> Result<(), String> {
    let v = serde_json::to_value(m).expect("a message is always written");
    Message::from_value(&v).map(drop).map_err(|e| e.to_string())
}

/// An array nested `depth` levels (a scalar at depth 0).
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |v, _| json!([v]))
}

fn free() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!({"q": "x"})),
        Just(Value::Null),
        prop::sample::select(vec![
            0,
            1,
            MAX_VALUE_DEPTH - 1,
            MAX_VALUE_DEPTH,
            MAX_VALUE_DEPTH + 1
        ])
        .prop_map(nested),
    ]
}

fn word() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["", "call_1", "lookup", "x"]).prop_map(str::to_string)
}

fn some_word() -> impl Strategy<Value = Option<String>> {
    prop::option::of(word())
}

fn media() -> impl Strategy<Value = Media> {
    (
        some_word(),
        some_word(),
        some_word(),
        prop::option::of(prop::sample::select(vec!["image/png", ""])),
        prop::option::of(prop::sample::select(vec!["auto", "low", "high", "huge"])),
        some_word(),
    )
        .prop_map(|(url, data, file_id, media_type, detail, provider)| Media {
            url,
            data,
            file_id,
            media_type: media_type.map(str::to_string),
            filename: None,
            detail: detail.map(str::to_string),
            provider,
        })
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        word(),
        word(),
        free(),
        some_word(),
        some_word(),
        some_word(),
    )
        .prop_map(
            |(id, name, arguments, signature, item_id, provider)| ToolCall {
                id,
                name,
                arguments,
                raw_arguments: None,
                signature,
                item_id,
                provider,
            },
        )
}

fn leaf_block() -> impl Strategy<Value = Block> {
    prop_oneof![
        (word(), some_word(), some_word(), some_word()).prop_map(
            |(text, signature, item_id, provider)| Block::Text(Text {
                text,
                signature,
                item_id,
                provider
            })
        ),
        (some_word(), some_word(), some_word(), some_word()).prop_map(
            |(signature, redacted, item_id, provider)| Block::Thinking(Thinking {
                thinking: "hm".into(),
                signature,
                redacted,
                encrypted_content: None,
                item_id,
                provider,
            })
        ),
        media().prop_map(|image| Block::Image { image }),
        media().prop_map(|audio| Block::Audio { audio }),
        media().prop_map(|file| Block::File { file }),
        free().prop_map(|json| Block::Json { json }),
        tool_call().prop_map(|tool_call| Block::ToolCall { tool_call }),
        (word(), word(), free(), word()).prop_map(|(tool_call_id, name, arguments, digest)| {
            Block::ApprovalRequest {
                approval_request: ApprovalRequest {
                    tool_call_id,
                    name,
                    arguments,
                    digest,
                    run_id: None,
                },
            }
        }),
        prop::option::of(prop::sample::select(vec!["5m", "1h", "1d"])).prop_map(|ttl| {
            Block::CachePoint {
                cache_point: CachePoint {
                    ttl: ttl.map(str::to_string),
                },
            }
        }),
    ]
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        3 => leaf_block(),
        1 => (
            word(),
            prop::collection::vec(leaf_block(), 0..4),
            prop::sample::select(ToolStatus::ALL.to_vec()),
            prop::option::of(free()),
            prop::option::of((
                prop::sample::select(vec![DecisionKind::Approved, DecisionKind::Edited]),
                prop::option::of(free()),
            )),
        )
            .prop_map(|(tool_call_id, content, status, artifact, approval)| {
                Block::ToolResult {
                    tool_result: ToolResult {
                        tool_call_id,
                        name: None,
                        content,
                        status,
                        artifact,
                        approval: approval.map(|(decision, arguments)| Approval {
                            decision,
                            arguments,
                            reason: None,
                        }),
                    },
                }
            }),
    ]
}

fn free_map() -> impl Strategy<Value = Option<Map<String, Value>>> {
    prop::option::of(free().prop_map(|v| {
        let mut m = Map::new();
        m.insert("k".into(), v);
        m
    }))
}

fn message() -> impl Strategy<Value = Message> {
    (
        prop::sample::select(vec![Role::System, Role::User, Role::Assistant, Role::Tool]),
        prop::collection::vec(block(), 0..5),
        prop::option::of(prop::sample::select(vec![
            -1.5,
            -0.0,
            0.0,
            0.25,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ])),
        prop::option::of(prop::sample::select(FinishReason::ALL.to_vec())),
        free_map(),
        free_map(),
    )
        .prop_map(
            |(role, content, cost, finish_reason, finish_details, metadata)| Message {
                usage: Some(Usage {
                    input_tokens: 3,
                    output_tokens: 4,
                    ..Usage::default()
                }),
                cost,
                finish_reason,
                finish_details,
                metadata,
                ..Message::new(role, content)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn check_says_what_the_reader_says(m in message()) {
        prop_assert_eq!(m.check().map_err(|e| e.to_string()), read_back(&m));
    }
}

/// Each rule, once by hand, so a rule both sides lost is still caught.
#[test]
fn each_rule_is_refused_with_its_path() {
    let assistant = |b: Block| Message::new(Role::Assistant, vec![b]);
    let cases = [
        (
            assistant(Block::tool_call("call_1", "", json!({}))),
            "content[0].tool_call.name: must not be empty",
        ),
        (
            Message::new(Role::User, vec![Block::tool_call("c", "t", json!({}))]),
            "content[0]: a tool_call block cannot be in a user message (user messages hold only text, json, image, audio, file and cache_point blocks)",
        ),
        (
            assistant(Block::Image {
                image: Media::default(),
            }),
            "content[0].image: expected exactly one of url, data or file_id, got 0",
        ),
        (
            assistant(Block::json(nested(MAX_VALUE_DEPTH + 1))),
            "content[0].json: nested deeper than 100 levels of arrays and objects (the format's limit)",
        ),
        (
            Message {
                cost: Some(-1.0),
                ..Message::assistant("hi")
            },
            "cost: expected a non-negative number of US dollars, got number -1.0",
        ),
    ];
    for (m, want) in cases {
        assert_eq!(m.check().unwrap_err().to_string(), want);
        assert_eq!(read_back(&m).unwrap_err(), want);
    }
    assert!(Message::assistant("hi").check().is_ok());
}
