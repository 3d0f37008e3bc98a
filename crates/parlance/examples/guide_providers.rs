//! A provider's model built with your key and base URL, and a history
//! converted from one provider's wire format to another's
//! (docs/guide/providers.md).
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_providers`

use parlance::providers::wire_format;
use parlance::{Agent, Provider};
use serde_json::json;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Any OpenAI-compatible server: a base URL and a key of your own.
    let base = std::env::var("OPENAI_BASE_URL").unwrap_or("https://api.openai.com/v1".into());
    let model = Provider::OPENAI
        .model("gpt-4o-mini")
        .base_url(base)
        .api_key(std::env::var("OPENAI_API_KEY")?)
        .build()?;
    let agent = Agent::builder(model).instructions("Be brief.").build()?;
    println!("{}", agent.run("Hello!").await.into_result()?.text());

    // Anthropic's signed thinking cannot go to OpenAI: it is dropped, and said.
    let anthropic_request = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Greet back.", "signature": "EqQBCg"},
                {"type": "text", "text": "Hello!"}]},
            {"role": "user", "content": "And again?"}
        ]
    });
    let from = wire_format("anthropic").expect("a built-in format");
    let to = wire_format("openai-chat").expect("a built-in format");
    let decoded = (from.decode_request)(&anthropic_request)?;
    let encoded = (to.encode_request)(&decoded.request, "gpt-4o-mini", false)?;
    let roles: Vec<&str> = encoded.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["role"].as_str())
        .collect();
    println!("{roles:?}");
    for warning in decoded.warnings.iter().chain(&encoded.warnings) {
        println!("dropped: {warning}");
    }
    Ok(())
}
