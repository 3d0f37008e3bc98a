//! `parlance threads`: list, show, delete and retry stored threads.

use std::process::ExitCode;

use clap::Subcommand;
use parlance_format::{Block, Message, RunStatus};
use parlance_runtime::ThreadRunner;
use parlance_store::Store;
use serde_json::json;

use crate::runtime;

#[derive(Subcommand)]
pub enum ThreadsAction {
    /// List threads, oldest first.
    List {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Start after this thread id.
        #[arg(long)]
        after: Option<String>,
    },
    /// Show a thread's messages and runs.
    Show {
        /// The thread id.
        id: String,
    },
    /// Delete a thread with its messages, runs and artifacts.
    Rm {
        /// The thread id.
        id: String,
    },
    /// Retry the thread's failed last run: its failed calls run again
    /// (calls that succeeded keep their results), then the run goes on.
    ///
    /// Exit status: 0 completed, 1 failed, 3 waiting for approval.
    Retry {
        /// The thread id.
        id: String,
        /// The TOML configuration (providers, agents, tools).
        #[arg(long, env = "PARLANCE_CONFIG")]
        config: Option<String>,
        /// Which agent (default: the one that made the failed run).
        #[arg(long)]
        agent: Option<String>,
    },
}

/// Retries a thread's failed last run with an agent of the configuration.
async fn retry(
    store: Store,
    id: &str,
    config: Option<String>,
    agent: Option<String>,
    as_json: bool,
) -> Result<ExitCode, String> {
    let config = crate::load_config(config.as_deref())?;
    parlance_providers::transport::install_crypto();
    let recorded = store
        .runs(id)
        .await
        .map_err(|e| e.to_string())?
        .pop()
        .and_then(|r| r.settings["name"].as_str().map(str::to_string))
        .filter(|n| config.agents.contains_key(n));
    let name = agent.or(recorded);
    let agent = crate::interactive::agent(&config, name.as_deref(), &[], &Default::default())?;
    let r = ThreadRunner::new(store, agent)
        .retry(id)
        .await
        .map_err(|e| e.to_string())?;
    if as_json {
        println!("{}", parlance_format::to_json_pretty(&r));
    } else {
        match r.status {
            RunStatus::Completed => match r.output.as_str() {
                Some(text) => println!("{text}"),
                None => println!("{}", r.output),
            },
            RunStatus::RequiresApproval => eprintln!(
                "run {} waits for approval of {} call(s)",
                r.id.as_deref().unwrap_or("?"),
                r.pending.len()
            ),
            RunStatus::Failed => {
                if let Some(e) = &r.error {
                    eprintln!("run failed ({}): {}", e.code, e.message);
                }
            }
        }
    }
    Ok(ExitCode::from(match r.status {
        RunStatus::Completed => 0,
        RunStatus::Failed => 1,
        RunStatus::RequiresApproval => 3,
    }))
}

pub fn threads(
    action: ThreadsAction,
    store: Option<String>,
    as_json: bool,
) -> Result<ExitCode, String> {
    let url = parlance_config::store_url(store);
    runtime()?.block_on(async move {
        let store = parlance_store::Store::open(&url)
            .await
            .map_err(|e| format!("store {url}: {e}"))?;
        match action {
            ThreadsAction::List { limit, after } => {
                let page = store
                    .list_threads(None, after.as_deref(), limit)
                    .await
                    .map_err(|e| e.to_string())?;
                if as_json {
                    println!("{}", serde_json::to_string_pretty(&page).expect("json"));
                } else {
                    for t in &page.items {
                        println!(
                            "{}  owner={}  metadata={}",
                            t.id,
                            t.owner.as_deref().unwrap_or("-"),
                            t.metadata
                        );
                    }
                    if let Some(next) = page.next {
                        println!("(more: --after {next})");
                    }
                }
            }
            ThreadsAction::Show { id } => {
                let messages = store.all_messages(&id).await.map_err(|e| e.to_string())?;
                let runs = store.runs(&id).await.map_err(|e| e.to_string())?;
                if as_json {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&json!({"messages": messages, "runs": runs}))
                            .expect("json")
                    );
                } else {
                    for m in &messages {
                        println!(
                            "[{}] {}: {}",
                            m.seq,
                            m.message.role.as_str(),
                            summary(&m.message)
                        );
                    }
                    for r in &runs {
                        println!("run {} {}", r.id, r.status);
                    }
                }
            }
            ThreadsAction::Retry { id, config, agent } => {
                return retry(store, &id, config, agent, as_json).await;
            }
            ThreadsAction::Rm { id } => {
                store.delete_thread(&id).await.map_err(|e| e.to_string())?;
                if !as_json {
                    println!("deleted {id}");
                }
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// One line per message for people.
fn summary(m: &Message) -> String {
    m.content
        .iter()
        .map(|b| match b {
            Block::Text(t) => t.text.clone(),
            Block::ToolCall { tool_call } => {
                format!("→ {}({})", tool_call.name, tool_call.arguments)
            }
            Block::ToolResult { tool_result } => format!(
                "← {} [{}] {}",
                tool_result
                    .name
                    .as_deref()
                    .unwrap_or(&tool_result.tool_call_id),
                tool_result.status.as_str(),
                tool_result
                    .content
                    .iter()
                    .filter_map(Block::as_text)
                    .collect::<String>()
            ),
            other => format!("<{}>", other.type_name()),
        })
        .collect::<Vec<_>>()
        .join(" ")
}
