//! What the runner's suites share: the two backends, a temp dir, scripted
//! messages, an agent with a few tools.
#![allow(dead_code)]

use std::sync::Arc;

use parlance_agent::{Agent, Limits, OnToolException, Tool, ToolContext, ToolError};
use parlance_format::{Block, FinishReason, Message, Role, Usage};
use parlance_model::scripted::ScriptedModel;
use parlance_store::Store;
use serde_json::{Value, json};

pub fn postgres_url() -> Option<String> {
    match std::env::var("PARLANCE_TEST_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                std::env::var("PARLANCE_REQUIRE_POSTGRES").is_err(),
                "PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not"
            );
            eprintln!(
                "PostgreSQL not configured (PARLANCE_TEST_POSTGRES_URL): its half of the suite is skipped"
            );
            None
        }
    }
}

pub async fn sqlite() -> (Store, tempdir::TempDir) {
    let dir = tempdir::TempDir::new();
    let store = Store::open(dir.path().join("threads.db").to_str().unwrap())
        .await
        .unwrap();
    (store, dir)
}

/// A tiny temp-dir helper (removes itself).
pub mod tempdir {
    pub struct TempDir(std::path::PathBuf);
    impl TempDir {
        pub fn new() -> Self {
            let p = std::env::temp_dir().join(format!(
                "parlance-runtime-{}-{}",
                std::process::id(),
                rand::random::<u64>()
            ));
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

pub fn says(text: &str) -> Message {
    let mut m = Message::assistant(text);
    m.finish_reason = Some(FinishReason::Stop);
    m.usage = Some(Usage {
        input_tokens: 10,
        output_tokens: 3,
        ..Usage::default()
    });
    m
}

pub fn calls(list: &[(&str, &str, Value)]) -> Message {
    let mut m = Message::new(
        Role::Assistant,
        list.iter()
            .map(|(id, n, a)| Block::tool_call(*id, *n, a.clone()))
            .collect(),
    );
    m.finish_reason = Some(FinishReason::ToolCalls);
    m.usage = Some(Usage {
        input_tokens: 20,
        output_tokens: 5,
        ..Usage::default()
    });
    m
}

pub fn agent(model: &ScriptedModel, policy: OnToolException) -> Agent {
    Agent::builder(Arc::new(model.clone()))
        .instructions("You help.")
        .limits(Limits {
            on_tool_exception: policy,
            ..Limits::default()
        })
        .tool(Tool::new(
            "lookup",
            "Look up.",
            |a: Value, _c: ToolContext| async move { Ok::<_, ToolError>(json!({"found": a["q"]})) },
        ))
        .tool(
            Tool::new(
                "refund",
                "Refund.",
                |a: Value, _c: ToolContext| async move {
                    Ok::<_, ToolError>(format!("refunded {}", a["amount"]))
                },
            )
            .needs_approval(),
        )
        .tool(Tool::blocking(
            "charge",
            "Charge.",
            |_: Value, _c: ToolContext| -> Result<String, ToolError> {
                panic!("card 4111-1111 declined")
            },
        ))
        .build()
        .unwrap()
}

/// Runs each listed test on SQLite and on PostgreSQL.
#[macro_export]
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (store, _dir) = super::common::sqlite().await;
                    super::$name(store).await;
                }
            )*
        }
        mod postgres_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(url) = super::common::postgres_url() else { return };
                    let store = parlance_store::Store::open(&url).await.unwrap();
                    super::$name(store).await;
                }
            )*
        }
    };
}
