//! A conversation kept by the store (docs/guide/threads.md): SQLite here,
//! PostgreSQL with a postgres:// URL; each run's steps committed as they
//! complete, the history loaded for the next run.
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --features store --example guide_threads`

#[cfg(feature = "store")]
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    use parlance::store::{Resumer, Store, ThreadRunner};
    use parlance::{Agent, Message};
    use serde_json::json;

    let store = Store::open("sqlite://guide-threads.db").await?;
    let thread = store
        .create_thread(None, json!({"customer": "ada"}))
        .await?
        .id;
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .instructions("Be brief.")
        .build()?;
    // At start-up: runs of this agent that a process left when it died are
    // carried on from their last committed step (none here); `spawn` would
    // look again every third of the lease.
    Resumer::new(store.clone(), [agent.clone()])
        .resume_dead(false)
        .await?;
    let runner = ThreadRunner::new(store.clone(), agent);
    runner
        .run(&thread, vec![Message::user("I am Ada.")])
        .await?;
    let r = runner
        .run(&thread, vec![Message::user("Who am I?")])
        .await?; // the history comes from the store
    println!("{}", r.into_result()?.text());
    println!(
        "{} messages, {} runs on {thread}",
        store.messages(&thread, 0, 1000).await?.len(),
        store.runs(&thread).await?.len()
    );
    Ok(())
}

#[cfg(not(feature = "store"))]
fn main() {
    eprintln!("this example needs the `store` feature: --features store");
    std::process::exit(2);
}
