//! Testing an agent without a provider: `TestModel` calls the agent's
//! tools with arguments made from their schemas; `FunctionModel` answers
//! with your function; `Recorder` writes a real model's exchanges to a
//! cassette and `Replay` serves them back offline.
//!
//! `cargo run -p parlance-ai --example testing` (offline). With
//! `PARLANCE_MODEL=openai:gpt-4o-mini` (and its key) the cassette is
//! recorded from that provider instead of a scripted stand-in.

use std::sync::Arc;

use parlance::scripted::ScriptedModel;
use parlance::testing::{FunctionModel, Recorder, Replay, TestModel};
use parlance::{Agent, Block, Message, Model, Role, Tool};
use serde_json::{Value, json};

fn weather() -> Tool {
    Tool::new("weather", "Today's weather in a city.", |args: Value| async move {
        Ok(format!("Sunny in {}", args["city"].as_str().unwrap_or("?")))
    })
    .with_schema(json!({"type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"], "additionalProperties": false}))
}

fn agent(model: impl parlance::IntoModel) -> anyhow::Result<Agent> {
    Ok(Agent::builder(model).tool(weather()).build()?)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // 1. No script: the tool is called with schema-valid arguments.
    let model = TestModel::new();
    let r = agent(model.clone())?.run("Weather?").await.into_result()?;
    println!("TestModel: {}", r.text());

    // 2. Your function of the request.
    let model = FunctionModel::new(|request| {
        let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        Ok(Message::assistant(format!("offered: {}", tools.join(", "))))
    });
    println!("FunctionModel: {}", agent(model)?.run("Hi").await.text());

    // 3. Record once, replay offline.
    let real: Arc<dyn Model> = match std::env::var("PARLANCE_MODEL") {
        Ok(spec) => parlance::model(&spec)?,
        Err(_) => Arc::new(ScriptedModel::new([
            Message::new(
                Role::Assistant,
                vec![Block::tool_call("c1", "weather", json!({"city": "Paris"}))],
            ),
            Message::assistant("It is sunny in Paris."),
        ])),
    };
    let dir = std::env::temp_dir().join(format!("parlance-example-{}", std::process::id()));
    let cassette = dir.join("weather.jsonl");
    let question = "What's the weather in Paris?";
    let recorded = agent(Recorder::new(real, &cassette)?)?.run(question).await;
    let replayed = agent(Replay::open(&cassette)?)?.run(question).await;
    assert_eq!(replayed.messages, recorded.messages);
    println!("Replay: {}", replayed.text());
    // A changed question is not what was recorded: the run says where.
    let changed = agent(Replay::open(&cassette)?)?.run("And in Rome?").await;
    println!(
        "Changed: {}",
        changed.error.map(|e| e.message).unwrap_or_default()
    );
    std::fs::remove_dir_all(dir)?;
    Ok(())
}
