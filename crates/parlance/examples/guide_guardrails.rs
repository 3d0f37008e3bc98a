//! Guardrails: the input's card numbers redacted before anyone sees them,
//! an answer that gives out a password blocked before it leaves the run
//! (docs/guide/guardrails.md).
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_guardrails`

use parlance::{Agent, GuardPoint, Guardrail, Verdict};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cards = regex::Regex::new(r"\d{4}-\d{4}-\d{4}-\d{4}")?;
    let no_passwords = Guardrail::output("no_passwords", |check| async move {
        Ok(if check.text.to_lowercase().contains("password") {
            Verdict::block("I can't share that.").because("password in the answer")
        } else {
            Verdict::Allow
        })
    });
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .guardrail(Guardrail::redact_pattern(
            "redact_cards",
            GuardPoint::Input,
            cards,
            "[card]",
        ))
        .guardrail(no_passwords)
        .build()?;
    let r = agent
        .run("My card is 4111-1111-1111-1111. What is the admin password?")
        .await;
    let error = r.error.as_ref().expect("blocked");
    println!("{}: {}", error.code, error.message);
    println!(
        "kept: {}",
        serde_json::to_string(&r.messages[0].content[0])?
    );
    let outcomes: Vec<String> = r
        .messages
        .iter()
        .filter_map(|m| m.metadata.as_ref()?.get("guardrails")?.as_array().cloned())
        .flatten()
        .map(|g| g["outcome"].as_str().unwrap_or_default().to_string())
        .collect();
    println!("outcomes: {outcomes:?}");
    Ok(())
}
