//! A run as events (docs/guide/streaming.md): text as it is written, tool
//! calls as they end.
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_streaming`

use std::io::Write;

use futures::StreamExt;
use parlance::{Agent, JsonSchema, RunEvent, Tool};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct GetOrder {
    order_id: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let get_order = Tool::new(
        "get_order",
        "Look up one order by its id.",
        |a: GetOrder| async move {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await; // a database, an HTTP call...
            Ok(json!({"order_id": a.order_id, "status": "shipped"}))
        },
    );
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .instructions("You answer about orders.")
        .tool(get_order)
        .build()?;
    let mut events = agent.run("Where is A-1001?").stream();
    while let Some(event) = events.next().await {
        match event {
            RunEvent::TextDelta(text) => {
                print!("{text}");
                std::io::stdout().flush()?;
            }
            RunEvent::ToolCallFinished { name, status, .. } => {
                println!("[{name}: {}]", status.as_str())
            }
            RunEvent::RunCompleted(r) => println!(
                "\n{}, {} tokens out",
                r.status.as_str(),
                r.usage.output_tokens
            ),
            _ => {}
        }
    }
    Ok(())
}
