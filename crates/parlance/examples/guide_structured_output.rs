//! A typed answer (docs/guide/structured-output.md): the schema goes to
//! the model, the engine checks the answer against it, and `output` is
//! the value, read into your type.
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --example guide_structured_output`

use parlance::{Agent, JsonSchema};
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Status {
    Processing,
    Shipped,
    Delivered,
}

#[derive(Deserialize, JsonSchema)]
struct Order {
    order_id: String,
    status: Status,
    total_eur: f64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .instructions("Extract the order.")
        .output_schema("Order", parlance::agent::schema_for::<Order>())
        .build()?;
    let r = agent
        .run("Order A-1001 shipped, 42.50 EUR.")
        .await
        .into_result()?;
    let order: Order = serde_json::from_value(r.output)?;
    let status = match order.status {
        Status::Processing => "processing",
        Status::Shipped => "shipped",
        Status::Delivered => "delivered",
    };
    println!("{} {status} {}", order.order_id, order.total_eur);
    Ok(())
}
