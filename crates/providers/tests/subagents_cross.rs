//! An agent on Anthropic, thinking, calls an agent on OpenAI as a tool
//! (`Agent::as_tool`), over real HTTP on 127.0.0.1: the run completes;
//! every request each provider receives is valid against its official
//! schema; Anthropic's signed thinking goes back to Anthropic with its
//! signature and never reaches OpenAI, which is sent the task alone.

mod common;

use common::{ANTHROPIC, OPENAI_CHAT};
use parlance_agent::Agent;
use parlance_format::RunStatus;
use parlance_providers::{HttpModel, Provider};
use parlance_testkit::replay::{ReplayServer, Reply};
use serde_json::json;

const SIGNATURE: &str = "EqEECkYICxgCKkBsignedthinking0123456789";

fn build(provider: Provider, model: &str, base_url: String) -> HttpModel {
    provider
        .model(model)
        .base_url(base_url)
        .api_key("sk-test-0123456789")
        .http_config(common::http::quick_retries())
        .build()
        .unwrap()
}

/// A Chat Completions server that answers `text` once, with that usage.
async fn openai_answering(text: &str, prompt: u64, completion: u64) -> ReplayServer {
    ReplayServer::start(vec![Reply::json(
        200,
        &json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": text, "refusal": null}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}
        }),
    )])
    .await
}

#[tokio::test]
async fn a_thinking_anthropic_parent_and_an_openai_child_each_get_valid_requests() {
    let anthropic = ReplayServer::start(vec![
        Reply::json(
            200,
            &json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [
                    {"type": "thinking", "thinking": "The researcher knows orders.", "signature": SIGNATURE},
                    {"type": "tool_use", "id": "toolu_1", "name": "research", "input": {"input": "When did order 7 ship?"}}
                ],
                "stop_reason": "tool_use", "stop_sequence": null,
                "usage": {"input_tokens": 50, "output_tokens": 20}
            }),
        ),
        Reply::json(
            200,
            &json!({
                "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "text", "text": "Order 7 shipped on May 2."}],
                "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {"input_tokens": 90, "output_tokens": 9}
            }),
        ),
    ])
    .await;
    let openai = openai_answering("It shipped on May 2.", 12, 6).await;
    let child = Agent::builder(build(
        Provider::OPENAI,
        "gpt-test",
        format!("{}/v1", openai.url),
    ))
    .instructions("You look orders up.")
    .build()
    .unwrap();
    let parent = Agent::builder(build(
        Provider::ANTHROPIC,
        "claude-test",
        anthropic.url.clone(),
    ))
    .instructions("You help customers.")
    .options(parlance_model::ModelOptions {
        max_tokens: Some(2048),
        reasoning: Some(parlance_model::Reasoning {
            budget_tokens: Some(1024),
            ..Default::default()
        }),
        ..Default::default()
    })
    .tool(child.as_tool("research", "Looks orders up."))
    .build()
    .unwrap();

    let r = parent.run("Where is order 7?").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.text(), "Order 7 shipped on May 2.");
    // Usage rolls up: both Anthropic answers and the OpenAI one.
    assert_eq!(r.usage.input_tokens, 50 + 90 + 12);

    let to_anthropic = anthropic.received();
    assert_eq!(to_anthropic.len(), 2);
    for req in &to_anthropic {
        ANTHROPIC.assert_valid(&req.body);
    }
    // The follow-up keeps the signed thinking before the tool use, and
    // carries the child's answer as the tool's result.
    let second = &to_anthropic[1].body;
    let assistant = &second["messages"][1]["content"];
    assert_eq!(assistant[0]["type"], "thinking", "{second}");
    assert_eq!(assistant[0]["signature"], SIGNATURE);
    let result = &second["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result", "{second}");
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert_eq!(result["content"], "It shipped on May 2.", "{second}");

    let to_openai = openai.received();
    assert_eq!(to_openai.len(), 1);
    OPENAI_CHAT.assert_valid(&to_openai[0].body);
    let sent = to_openai[0].body.to_string();
    assert!(
        !sent.contains(SIGNATURE) && !sent.contains("researcher knows"),
        "{sent}"
    );
    let messages = to_openai[0].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{sent}");
    assert_eq!(messages[1]["content"], "When did order 7 ship?");
}

/// A thinking Anthropic agent hands the conversation to an OpenAI one:
/// the history crosses by the format's one rule — the OpenAI request is
/// valid, carries the conversation, and holds no Anthropic signature or
/// thinking text.
#[tokio::test]
async fn a_thinking_anthropic_agent_hands_over_to_an_openai_one() {
    let anthropic = ReplayServer::start(vec![Reply::json(
        200,
        &json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [
                {"type": "thinking", "thinking": "Billing should take this.", "signature": SIGNATURE},
                {"type": "tool_use", "id": "toolu_1", "name": "transfer_to_billing", "input": {}}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 40, "output_tokens": 10}
        }),
    )])
    .await;
    let openai = openai_answering("Billing here: refunded.", 30, 5).await;
    let billing = Agent::builder(build(
        Provider::OPENAI,
        "gpt-test",
        format!("{}/v1", openai.url),
    ))
    .name("billing")
    .instructions("You handle billing.")
    .build()
    .unwrap();
    let support = Agent::builder(build(
        Provider::ANTHROPIC,
        "claude-test",
        anthropic.url.clone(),
    ))
    .name("support")
    .options(parlance_model::ModelOptions {
        max_tokens: Some(2048),
        reasoning: Some(parlance_model::Reasoning {
            budget_tokens: Some(1024),
            ..Default::default()
        }),
        ..Default::default()
    })
    .handoff(billing)
    .build()
    .unwrap();
    let r = support.run("Refund my order").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(r.text(), "Billing here: refunded.");
    assert_eq!(r.handoff(), Some("billing"));
    ANTHROPIC.assert_valid(&anthropic.received()[0].body);
    let to_openai = openai.received();
    assert_eq!(to_openai.len(), 1);
    OPENAI_CHAT.assert_valid(&to_openai[0].body);
    let sent = to_openai[0].body.to_string();
    assert!(
        !sent.contains(SIGNATURE) && !sent.contains("Billing should take this"),
        "{sent}"
    );
    let messages = to_openai[0].body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"], "You handle billing.", "{sent}");
    assert_eq!(messages[1]["content"], "Refund my order", "{sent}");
    // The handoff call and its result cross as a call and its result.
    assert_eq!(
        messages[2]["tool_calls"][0]["function"]["name"], "transfer_to_billing",
        "{sent}"
    );
    assert_eq!(messages[3]["role"], "tool", "{sent}");
}
