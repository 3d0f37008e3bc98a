//! A tool's input schema derived from its argument type: field doc comments
//! become the descriptions the model reads, `schemars` attributes the
//! bounds, and arguments are validated against it before the tool runs.
//! Runs offline: `cargo run -p parlance-ai --example tool_schema`.

use parlance::scripted::ScriptedModel;
use parlance::{Agent, Block, Message, Role, Tool, ToolError, ToolStatus};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Not sent: the tool's own description wins over the type's doc comment.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Refund {
    /// The order, like A-1001.
    #[schemars(regex(pattern = r"^A-[0-9]{4}$"))]
    order_id: String,
    /// The amount in euros.
    #[schemars(range(min = 1, max = 500))]
    amount: u32,
    /// Why, in the customer's words.
    reason: Option<String>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let refund = Tool::new("refund", "Refund an order.", |r: Refund| async move {
        if r.amount > 100 {
            return Err(ToolError::new("refunds over 100 EUR need a manager"));
        }
        let why = r.reason.unwrap_or_else(|| "no reason given".into());
        Ok(format!(
            "refunded {} EUR on {} ({why})",
            r.amount, r.order_id
        ))
    });
    // This is what every request that offers the tool carries.
    println!("{}", serde_json::to_string_pretty(refund.spec())?);

    // A model that calls it twice: once with arguments the schema refuses
    // (the tool never runs; the model is told what is wrong), once validly.
    let call = |id: &str, args| Block::tool_call(id, "refund", args);
    let model = ScriptedModel::new([
        Message::new(
            Role::Assistant,
            vec![
                call("c1", json!({"order_id": "1001", "amount": 900})),
                call("c2", json!({"order_id": "A-1001", "amount": 40})),
            ],
        ),
        Message::assistant("One refund went through."),
    ]);
    let agent = Agent::builder(model).tool(refund).build()?;
    let response = agent.run("Refund A-1001, 40 EUR").await;
    for result in response.messages[2]
        .content
        .iter()
        .filter_map(Block::as_tool_result)
    {
        let text: String = result.content.iter().filter_map(Block::as_text).collect();
        println!(
            "{}: {} — {text}",
            result.tool_call_id,
            result.status.as_str()
        );
        assert!(matches!(
            result.status,
            ToolStatus::InvalidArguments | ToolStatus::Ok
        ));
    }
    Ok(())
}
