//! Two turns (docs/guide/multi-turn.md): the first response goes back,
//! unchanged, in `turns`.
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_multi_turn`

use parlance::Agent;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .instructions("Be brief.")
        .build()?;
    let first = agent.run("I am Ada.").await.into_result()?;
    let n = first.messages.len();
    let second = agent.run("Who am I?").turns([first]).await.into_result()?; // the model sees both turns
    println!("{}", second.text());
    println!(
        "{n} messages in the first turn, {} in the second",
        second.messages.len()
    );
    Ok(())
}
