//! What the store and runtime suites share: the two backends, a temp dir,
//! scripted messages, the [`both!`](crate::both) macro.

use parlance_format::{Block, FinishReason, Message, Role, Usage};
use parlance_store::Store;
use serde_json::Value;

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
                "parlance-store-{}-{}",
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
    impl Default for TempDir {
        fn default() -> Self {
            Self::new()
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

/// A store on the PostgreSQL server of `PARLANCE_TEST_POSTGRES_URL`, or
/// `None` when none is configured (see [`postgres_url`]).
pub async fn postgres() -> Option<Store> {
    let url = postgres_url()?;
    Some(Store::open(&url).await.unwrap())
}

/// Runs each listed test on SQLite and on PostgreSQL: each `name` is an
/// `async fn name(store: Store)` of the calling test file.
#[macro_export]
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let (store, _dir) = $crate::store::sqlite().await;
                    super::$name(store).await;
                }
            )*
        }
        mod postgres_backend {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(store) = $crate::store::postgres().await else { return };
                    super::$name(store).await;
                }
            )*
        }
    };
}
