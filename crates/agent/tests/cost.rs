//! Each assistant message gets its cost from the price table, the response
//! sums them, and a model the table does not know leaves both without one.

use std::sync::Arc;

use futures::StreamExt;
use parlance_agent::{Agent, RunEvent, Tool, ToolContext, ToolError};
use parlance_format::{Block, Message, Role, Usage};
use parlance_model::scripted::ScriptedModel;
use parlance_prices::PriceTable;
use serde_json::{Value, json};

fn answer(model: &str, content: Vec<Block>, usage: Usage) -> Message {
    let mut m = Message::new(Role::Assistant, content);
    m.provider = Some("anthropic".into());
    m.model = Some(model.into());
    m.usage = Some(usage);
    m
}

/// 3 uncached, 1111 read from the cache, 418 written, 33 out (the second
/// call of testdata/providers/anthropic/pydantic__test_anthropic_cache_real_api.yaml).
fn cached() -> Usage {
    Usage {
        input_tokens: 3 + 1111 + 418,
        output_tokens: 33,
        cached_tokens: 1111,
        cache_write_tokens: Some(418),
        reasoning_tokens: None,
    }
}

fn plain(i: u64, o: u64) -> Usage {
    Usage {
        input_tokens: i,
        output_tokens: o,
        ..Usage::default()
    }
}

fn agent(model: &ScriptedModel, prices: Option<PriceTable>) -> Agent {
    let tool = Tool::new("ping", "Ping.", |_: Value, _c: ToolContext| async move {
        Ok::<_, ToolError>("pong".to_string())
    });
    let mut b = Agent::builder(Arc::new(model.clone())).tool(tool);
    if let Some(p) = prices {
        b = b.prices(p);
    }
    b.build().unwrap()
}

fn two_calls(second_model: &str) -> ScriptedModel {
    ScriptedModel::new([
        answer(
            "claude-sonnet-4-5-20250929",
            vec![Block::tool_call("c1", "ping", json!({}))],
            cached(),
        ),
        answer(second_model, vec![Block::text("Done.")], plain(2_000, 100)),
    ])
}

#[tokio::test]
async fn each_assistant_message_has_its_cost_and_the_response_the_sum() {
    let r = agent(&two_calls("claude-sonnet-4-5"), None).run("Hi").await;
    let costs: Vec<Option<f64>> = r
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .map(|m| m.cost)
        .collect();
    // Built-in table: claude-sonnet-4-5 $3 / $0.30 read / $3.75 write / $15 out per million.
    let first = 0.002_404_8; // 3*3 + 1111*0.3 + 418*3.75 + 33*15 = 2404.8 millionths
    let second = 0.007_5; // 2000*3 + 100*15 = 7500 millionths
    assert_eq!(costs, vec![Some(first), Some(second)]);
    assert_eq!(r.cost, Some(first + second));
    // Tool and user messages have none.
    assert!(
        r.messages
            .iter()
            .filter(|m| m.role != Role::Assistant)
            .all(|m| m.cost.is_none())
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["messages"][1]["cost"], json!(first));
    assert_eq!(json["cost"], json!(first + second));
}

#[tokio::test]
async fn the_streamed_message_carries_its_cost() {
    let model = two_calls("claude-sonnet-4-5");
    let mut stream = agent(&model, None).run("Hi").stream();
    let mut costs = Vec::new();
    while let Some(e) = stream.next().await {
        if let RunEvent::MessageCompleted(m) = e
            && m.role == Role::Assistant
        {
            costs.push(m.cost);
        }
    }
    assert_eq!(costs, vec![Some(0.002_404_8), Some(0.007_5)]);
}

#[tokio::test]
async fn one_unpriced_call_leaves_the_run_without_a_total() {
    let r = agent(&two_calls("no-such-model"), None).run("Hi").await;
    let assistant: Vec<&Message> = r
        .messages
        .iter()
        .filter(|m| m.role == Role::Assistant)
        .collect();
    assert_eq!(assistant[0].cost, Some(0.002_404_8));
    assert_eq!(assistant[1].cost, None);
    assert_eq!(r.cost, None);
    assert!(serde_json::to_value(&r).unwrap().get("cost").is_none());
}

#[tokio::test]
async fn an_agents_own_table_comes_first() {
    let mine = PriceTable::from_json_str(
        r#"{"providers": [{"id": "anthropic", "models": [
            {"id": "house", "match": {"equals": "no-such-model"}, "input": "1", "output": "10"}]}]}"#,
        "mine",
    )
    .unwrap()
    .then(PriceTable::builtin().clone());
    let r = agent(&two_calls("no-such-model"), Some(mine))
        .run("Hi")
        .await;
    // 2000 * 1 + 100 * 10 = 3000 millionths, after the built-in 2404.8.
    assert_eq!(r.cost, Some(0.002_404_8 + 0.003));
}
