//! Context windows: a conversation past 80 % of the model's window (a
//! small one here, 500 tokens) has its oldest turns summarized; the
//! summary is sent in their place, and the run keeps a record of the cut
//! (docs/guide/context.md).
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_context`

use parlance::{Agent, Compaction, ContextPolicy, Message, Turn};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let history: Vec<Turn> = (0..6)
        .map(|i| Turn {
            messages: vec![
                Message::user(format!("Question {i}: {}", "x".repeat(300))),
                Message::assistant(format!("Answer {i}.")),
            ],
        })
        .collect();
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .context(ContextPolicy::compact().window(500))
        .build()?;
    let r = agent
        .run("Which plan did we settle on?")
        .turns(history)
        .await;
    let record = &r.messages[1];
    let compaction = Compaction::of(record).expect("a compaction record");
    println!(
        "summarized: the first {} of 12 messages",
        compaction.replaces
    );
    println!(
        "summary: {}",
        record.text().lines().last().unwrap_or_default()
    );
    println!("answer: {}", r.output.as_str().unwrap_or_default());
    Ok(())
}
