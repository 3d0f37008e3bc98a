//! Every run's spans (GenAI semantic conventions), exported with OTLP over
//! HTTP to a collector (Jaeger, Tempo, an OpenTelemetry Collector...)
//! (docs/guide/observability.md).
//! `OPENAI_API_KEY=sk-... cargo run -p parlance-ai --features otel --example guide_observability`

#[cfg(feature = "otel")]
#[tokio::main]
async fn main() -> anyhow::Result<()> {
    use parlance::{Agent, Tool, ToolContext, ToolError};
    use serde_json::Value;

    let traces = parlance::otel::init(&parlance::otel::Settings {
        endpoint: Some(std::env::var("OTLP_ENDPOINT").unwrap_or("http://localhost:4318".into())),
        service_name: Some("orders".into()),
        ..Default::default()
    })
    .map_err(anyhow::Error::msg)?;
    let get_order = Tool::new(
        "get_order",
        "Look up one order by its id.",
        |a: Value, _c: ToolContext| async move {
            Ok::<_, ToolError>(format!(
                "{}: shipped",
                a["order_id"].as_str().unwrap_or("?")
            ))
        },
    );
    let agent = Agent::builder(parlance::model("openai:gpt-4o-mini")?)
        .name("support")
        .tool(get_order)
        .build()?;
    println!(
        "{}",
        agent.run("Where is A-1001?").await.into_result()?.text()
    );
    if let Some(t) = traces {
        // Sends the spans now (they go in batches).
        t.flush().map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

#[cfg(not(feature = "otel"))]
fn main() {
    eprintln!("this example needs the `otel` feature: --features otel");
    std::process::exit(2);
}
