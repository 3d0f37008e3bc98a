//! Threads: conversations stored in SQLite (or PostgreSQL), each run's
//! steps committed as they complete, the history loaded for the next run.
//!
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --features store --example threads`

use parlance::store::{Store, ThreadRunner};
use parlance::{Agent, Message};
use serde_json::json;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let model = std::env::var("PARLANCE_MODEL").unwrap_or("openai:gpt-4o-mini".into());
    let agent = Agent::builder(parlance::model(&model)?)
        .instructions("You remember what the user told you.")
        .build()?;
    let store = Store::open("sqlite://./threads-example.db").await?;
    let thread = store
        .create_thread(None, json!({"example": "threads"}))
        .await?;
    let runner = ThreadRunner::new(store, agent);

    let first = runner
        .run(&thread.id, vec![Message::user("My name is Ada.")])
        .await?;
    println!("{}", first.into_result()?.text());
    // The second run sees the first: the thread's history is loaded.
    let second = runner
        .run(&thread.id, vec![Message::user("What is my name?")])
        .await?;
    println!("{}", second.into_result()?.text());
    println!("thread {} in ./threads-example.db", thread.id);
    Ok(())
}
