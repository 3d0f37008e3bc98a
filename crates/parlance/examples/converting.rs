//! Converting between providers' wire formats through the canonical
//! format: an OpenAI Chat Completions request read into canonical
//! messages, then written as the request Anthropic's API would get.
//! Runs offline: `cargo run -p parlance-ai --example converting`.

use parlance::providers::wire_format;
use serde_json::json;

fn main() -> anyhow::Result<()> {
    let openai = json!({
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What's the weather in Paris?"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "Sunny, 21 °C"}
        ],
        "tools": [{"type": "function", "function": {"name": "weather", "description": "Today's weather.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    });
    let from = wire_format("openai-chat").expect("a built-in format");
    let to = wire_format("anthropic").expect("a built-in format");
    let decoded = (from.decode_request)(&openai)?;
    println!(
        "canonical:\n{}",
        serde_json::to_string_pretty(&decoded.request.messages)?
    );
    let encoded = (to.encode_request)(&decoded.request, "claude-sonnet-4-5", false)?;
    for warning in &encoded.warnings {
        eprintln!("warning: {warning}");
    }
    println!(
        "anthropic:\n{}",
        serde_json::to_string_pretty(&encoded.body)?
    );
    Ok(())
}
