//! Testing an agent with no provider, no key, no network
//! (docs/guide/testing.md).
//! `cargo run -p parlance-ai --example guide_testing`

use parlance::testing::{FunctionModel, Recorder, Replay, ScriptedModel, TestModel};
use parlance::{Agent, Block, IntoModel, Message, Role, Tool};
use serde_json::{Value, json};

fn weather() -> Tool {
    Tool::new("weather", "Today's weather in a city.", |args: Value| async move {
        Ok(format!("Sunny in {}", args["city"].as_str().unwrap_or("?")))
    })
    .with_schema(json!({"type": "object", "properties": {"city": {"type": "string"}},
        "required": ["city"], "additionalProperties": false}))
}

fn agent(model: impl IntoModel) -> anyhow::Result<Agent> {
    Ok(Agent::builder(model).tool(weather()).build()?)
}

fn call() -> Message {
    Message::new(
        Role::Assistant,
        vec![Block::tool_call("c1", "weather", json!({"city": "Oslo"}))],
    )
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // TestModel: calls every tool with arguments made from its schema, then answers.
    let model = TestModel::new(); // .call_tools(["weather"]).text("Done.").seed(1)
    let r = agent(model.clone())?.run("Weather?").await;
    assert_eq!(r.text(), r#"{"weather":"Sunny in a"}"#);
    assert_eq!(model.received()[0].tools[0].name, "weather");
    println!("TestModel: {}", r.text());

    // FunctionModel: your function of the request (messages, tools, settings).
    let model = FunctionModel::new(|request| {
        if !request.messages.iter().any(|m| m.role == Role::Tool) {
            return Ok(call());
        }
        let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        Ok(Message::assistant(format!("offered: {}", tools.join(", "))))
    });
    let r = agent(model)?.run("Weather in Oslo?").await;
    println!("FunctionModel: {}", r.text());

    // ScriptedModel: its answers in order; one request too many fails the run.
    let scripted = ScriptedModel::new([Message::assistant("Hello!"), Message::assistant("Again.")]);
    let a = Agent::builder(scripted.clone()).build()?;
    let (one, two) = (a.run("Hi").await, a.run("Hi again").await);
    println!(
        "ScriptedModel: {} {} {}",
        one.text(),
        two.text(),
        scripted.remaining()
    );

    // Recorder and Replay: record a model's exchanges once, replay them offline.
    let dir = std::env::temp_dir().join(format!("guide-testing-{}", std::process::id()));
    let cassette = dir.join("weather.jsonl");
    let real = ScriptedModel::new([call(), Message::assistant("It is sunny in Oslo.")]); // a real model here: parlance::model("openai:gpt-4o-mini")?
    let recorded = agent(Recorder::new(real, &cassette)?)?
        .run("Weather in Oslo?")
        .await;
    let replayed = agent(Replay::open(&cassette)?)?
        .run("Weather in Oslo?")
        .await;
    assert_eq!(replayed.messages, recorded.messages);
    println!("Replay: {}", replayed.text());
    let changed = agent(Replay::open(&cassette)?)?.run("And in Rome?").await;
    let message = changed.error.map(|e| e.message).unwrap_or_default();
    // It names the exchange and the first difference.
    println!(
        "Changed: {}",
        &message[message.find("exchange").unwrap_or(0)..]
    );
    std::fs::remove_dir_all(dir)?;
    Ok(())
}
