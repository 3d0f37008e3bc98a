//! A conversation made by one provider, sent to the other: the request is
//! valid against the second's official schema, tool calls pair with their
//! results under ids the second accepts, and foreign opaque data follows
//! the one rule (dropped, with a warning; never sent).

mod common;

use common::{ANTHROPIC, Api, OPENAI_CHAT, yaml_file};
use parlance_format::{Block, Media, Message, Role, Thinking, ToolCall, ToolResult, ToolStatus};
use parlance_model::{ModelRequest, Reasoning};
use serde_json::{Value, json};

fn cassette(dir: &str, name: &str) -> Value {
    yaml_file(&common::fixture(dir, name))
}

/// A whole conversation as the producing provider left it: its first
/// request, its answer, and the follow-up request that carries the results.
fn conversation(api: &Api, dir: &str, name: &str) -> ModelRequest {
    let doc = cassette(dir, name);
    let followup = &doc["interactions"][1]["request"]["parsed_body"];
    let mut req = (api.decode_request)(followup).unwrap().request;
    // Use Parlance's own decode of the answer (with its provider tags).
    let answer = (api.decode_response)(&doc["interactions"][0]["response"]["parsed_body"]).unwrap();
    let i = req
        .messages
        .iter()
        .position(|m| m.role == Role::Assistant)
        .unwrap();
    req.messages[i] = answer;
    req
}

#[test]
fn anthropic_thinking_and_tool_calls_sent_to_openai_chat() {
    let req = conversation(
        &ANTHROPIC,
        "anthropic",
        "pydantic__test_anthropic_tool_with_thinking.yaml",
    );
    assert!(req.messages.iter().any(|m| {
        m.content
            .iter()
            .any(|b| matches!(b, Block::Thinking(t) if t.signature.is_some()))
    }));
    let enc = (OPENAI_CHAT.encode_request)(&req, "gpt-4o", false).unwrap();
    OPENAI_CHAT.assert_valid(&enc.body);
    let body = enc.body.to_string();
    assert!(
        !body.contains("signature") && !body.contains("EqEECkYICxgC"),
        "no Anthropic signature reaches OpenAI"
    );
    assert!(
        enc.warnings.iter().any(|w| w.contains("thinking dropped")),
        "{:?}",
        enc.warnings
    );
    // Every call is followed by its result, under the same id.
    let msgs = enc.body["messages"].as_array().unwrap();
    let a = msgs
        .iter()
        .position(|m| m["tool_calls"].is_array())
        .unwrap();
    for (k, call) in msgs[a]["tool_calls"].as_array().unwrap().iter().enumerate() {
        assert_eq!(msgs[a + 1 + k]["tool_call_id"], call["id"]);
    }
}

#[test]
fn openai_tool_calls_sent_to_anthropic() {
    let doc = cassette(
        "openai-chat",
        "pydantic__test_multiple_agent_tool_calls.yaml",
    );
    let later = doc["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|it| {
            it["request"]["uri"]
                .as_str()
                .unwrap()
                .contains("/chat/completions")
        })
        .unwrap();
    let req = (OPENAI_CHAT.decode_request)(&later["request"]["parsed_body"])
        .unwrap()
        .request;
    let enc = (ANTHROPIC.encode_request)(&req, "claude-sonnet-4-5", false).unwrap();
    ANTHROPIC.assert_valid(&enc.body);
    let msgs = enc.body["messages"].as_array().unwrap();
    // Roles alternate, and each tool_use is answered first thing in the next user turn.
    for pair in msgs.windows(2) {
        assert_ne!(pair[0]["role"], pair[1]["role"]);
        if let Some(uses) = pair[0]["content"].as_array() {
            let ids: Vec<&Value> = uses
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| &b["id"])
                .collect();
            let results: Vec<&Value> = pair[1]["content"]
                .as_array()
                .map(|c| {
                    c.iter()
                        .take(ids.len())
                        .map(|b| &b["tool_use_id"])
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(ids, results);
        }
    }
}

/// Thinking from a third provider, ids Anthropic would refuse, a failed
/// result, an image: sent both ways.
fn mixed() -> ModelRequest {
    let mut assistant = Message::new(
        Role::Assistant,
        vec![
            Block::Thinking(Thinking {
                thinking: "Compare both cities.".into(),
                signature: Some("CiQB0e2Kb2gemini".into()),
                provider: Some("google".into()),
                ..Thinking::default()
            }),
            Block::ToolCall {
                tool_call: ToolCall {
                    signature: Some("Cp8CAdHt".into()),
                    provider: Some("google".into()),
                    ..ToolCall::new(
                        "functions.get_weather:0",
                        "get_weather",
                        json!({"city": "Paris"}),
                    )
                },
            },
            Block::tool_call("call 2/ä", "get_weather", json!({"city": "Oslo"})),
        ],
    );
    assistant.provider = Some("google".into());
    let mut failed = ToolResult::text(
        "call 2/ä",
        ToolStatus::ToolFailed,
        "get_weather failed: timeout talking to upstream",
    );
    failed.artifact = Some(json!({"secret": "internal-host-17"}));
    ModelRequest {
        messages: vec![
            Message::system("You are a weather bot."),
            Message::new(
                Role::User,
                vec![
                    Block::text("Weather in Paris and Oslo? Here is a map."),
                    Block::Image {
                        image: Media {
                            data: Some("iVBORw0KGgo=".into()),
                            media_type: Some("image/png".into()),
                            ..Media::default()
                        },
                    },
                ],
            ),
            assistant,
            Message::new(
                Role::Tool,
                vec![
                    Block::tool_result(ToolResult::text(
                        "functions.get_weather:0",
                        ToolStatus::Ok,
                        "18°C",
                    )),
                    Block::tool_result(failed),
                ],
            ),
        ],
        tools: vec![parlance_format::ToolSpec::new(
            "get_weather",
            "Weather",
            json!({"type": "object", "properties": {"city": {"type": "string"}}}),
        )]
        .into(),
        options: parlance_model::ModelOptions {
            reasoning: Some(Reasoning {
                budget_tokens: Some(2048),
                ..Reasoning::default()
            }),
            max_tokens: Some(4096),
            ..Default::default()
        },
    }
}

#[test]
fn foreign_data_and_awkward_ids_to_anthropic() {
    let enc = (ANTHROPIC.encode_request)(&mixed(), "claude", false).unwrap();
    ANTHROPIC.assert_valid(&enc.body);
    let text = enc.body.to_string();
    assert!(
        !text.contains("CiQB0e2Kb2gemini") && !text.contains("Cp8CAdHt"),
        "no Gemini signature reaches Anthropic"
    );
    assert!(
        !text.contains("internal-host-17"),
        "artifacts are never sent"
    );
    assert!(
        enc.warnings
            .iter()
            .any(|w| w.contains("thinking from google dropped")),
        "{:?}",
        enc.warnings
    );
    // Thinking was asked for, but the tool turn has no Anthropic thinking to start with.
    assert!(enc.body.get("thinking").is_none());
    assert!(
        enc.warnings
            .iter()
            .any(|w| w.contains("thinking turned off"))
    );
    let msgs = enc.body["messages"].as_array().unwrap();
    let uses: Vec<&str> = msgs[1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    let results: Vec<&str> = msgs[2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(uses, results, "calls and results map to the same ids");
    for id in &uses {
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{id}"
        );
    }
    assert_ne!(uses[0], uses[1]);
    assert_eq!(msgs[2]["content"][1]["is_error"], json!(true));
    assert!(msgs[2]["content"][0].get("is_error").is_none());
}

#[test]
fn foreign_data_and_awkward_ids_to_openai_chat() {
    let enc = (OPENAI_CHAT.encode_request)(&mixed(), "gpt-4o", false).unwrap();
    OPENAI_CHAT.assert_valid(&enc.body);
    let text = enc.body.to_string();
    assert!(
        !text.contains("CiQB0e2Kb2gemini")
            && !text.contains("Cp8CAdHt")
            && !text.contains("internal-host-17")
    );
    let msgs = enc.body["messages"].as_array().unwrap();
    let ids: Vec<&Value> = msgs[2]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["id"])
        .collect();
    assert_eq!(
        ids,
        vec![&msgs[3]["tool_call_id"], &msgs[4]["tool_call_id"]]
    );
    assert_eq!(msgs[1]["content"][1]["type"], "image_url");
    assert_eq!(
        msgs[4]["content"],
        "get_weather failed: timeout talking to upstream"
    );
}

#[test]
fn blocks_an_api_cannot_take_are_refused_before_sending() {
    let mut req = mixed();
    req.messages[1].content.push(Block::Audio {
        audio: Media {
            url: Some("https://x/a.wav".into()),
            ..Media::default()
        },
    });
    let e = (ANTHROPIC.encode_request)(&req, "claude", false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unsupported by this provider: messages[1].content[2]: Anthropic does not take audio"
    );
    let e = (OPENAI_CHAT.encode_request)(&req, "gpt", false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unsupported by this provider: messages[1].content[2]: OpenAI Chat takes wav or mp3 audio, not audio without a media type"
    );
}
