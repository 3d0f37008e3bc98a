//! Streaming a run: text as it is written, tool calls as they start and
//! end, then the final response.
//!
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example streaming`

use std::io::Write;

use futures::StreamExt;
use parlance::{Agent, RunEvent, Tool};
use serde_json::Value;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let model = std::env::var("PARLANCE_MODEL").unwrap_or("openai:gpt-4o-mini".into());
    let clock = Tool::new("clock", "The time now, in UTC.", |_: Value| async move {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs();
        Ok(format!("{:02}:{:02} UTC", secs / 3600 % 24, secs / 60 % 60))
    });
    let agent = Agent::builder(parlance::model(&model)?)
        .tool(clock)
        .build()?;

    // The stream is Unpin: no pinning needed to call `next`.
    let mut events = agent
        .run("What time is it? Answer in a short poem.")
        .stream();
    while let Some(event) = events.next().await {
        match event {
            RunEvent::TextDelta(text) => {
                print!("{text}");
                std::io::stdout().flush()?;
            }
            RunEvent::ToolCallStarted { name, .. } => eprintln!("[{name} …]"),
            RunEvent::ToolCallFinished {
                name,
                status,
                elapsed,
                ..
            } => {
                eprintln!("[{name}: {} in {elapsed:?}]", status.as_str())
            }
            RunEvent::RunCompleted(response) => {
                let response = response.into_result()?;
                eprintln!(
                    "\n[{} tokens in, {} out]",
                    response.usage.input_tokens, response.usage.output_tokens
                );
            }
            _ => {}
        }
    }
    // Only the answer? `agent.run(…).stream().response().await` skips to it.
    Ok(())
}
