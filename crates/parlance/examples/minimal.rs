//! The minimal agent: a provider, a tool, one run.
//!
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example minimal`
//! (any model string works: `"anthropic:claude-sonnet-4-5"`...). The code
//! from `use` on is the README's Rust section, word for word (a test checks).

use parlance::{Agent, JsonSchema, Tool};
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct City {
    /// The city's name, e.g. "Paris".
    name: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let weather = Tool::new(
        "weather",
        "Today's weather in a city.",
        |city: City| async move { Ok(format!("Sunny and 21 °C in {}", city.name)) },
    );
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .tool(weather)
        .build()?;
    let answer = agent
        .run("What's the weather in Paris?")
        .await
        .into_result()?;
    println!("{}", answer.text());
    Ok(())
}
