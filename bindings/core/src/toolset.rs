//! A toolset written in Python or JavaScript: a function the agent asks
//! before each model call for the tools it offers now (tools that come
//! and go: per customer, per feature flag, discovered at run time). The
//! tools are the package's ordinary tools, validated, timed out and
//! approved by the engine; a name the agent or another toolset also
//! offers is prefixed (`parlance::agent::toolset`).
//!
//! While the function returns the very same tool objects, the agent gets
//! the same [`ToolBox`] back and rebuilds nothing (the packages key each
//! tool by the object's identity, and keep the objects alive while they
//! are cached, so an identity is never reused).

use std::any::Any;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use parlance::Tool;
use parlance::agent::{ToolBox, Toolset, ToolsetError};

/// One tool the function returned: the tool, the identity of the object
/// it came from, and what keeps that object alive while it is cached.
pub struct Listed {
    /// The object's identity.
    pub key: u64,
    /// The tool.
    pub tool: Tool,
    /// Kept while the listing is cached.
    pub keep: Box<dyn Any + Send + Sync>,
}

/// Calls the host function: its tools, or what it raised (a sentence
/// naming it).
pub type ListFn = dyn Fn() -> BoxFuture<'static, Result<Vec<Listed>, String>> + Send + Sync;

struct Cached {
    keys: Vec<u64>,
    tools: Arc<ToolBox>,
    _keep: Vec<Box<dyn Any + Send + Sync>>,
}

/// A [`Toolset`] whose tools a host function lists.
pub struct HostToolset {
    label: String,
    prefix: String,
    list: Box<ListFn>,
    last: Mutex<Option<Cached>>,
}

impl HostToolset {
    /// The toolset `name` (in errors: `toolset "name"`), whose tools get
    /// `prefix` (default: the name) when another source offers their name.
    pub fn new(
        name: &str,
        prefix: Option<String>,
        list: impl Fn() -> BoxFuture<'static, Result<Vec<Listed>, String>> + Send + Sync + 'static,
    ) -> HostToolset {
        HostToolset {
            label: format!("toolset {name:?}"),
            prefix: prefix.unwrap_or_else(|| name.to_string()),
            list: Box::new(list),
            last: Mutex::new(None),
        }
    }

    async fn current(&self) -> Result<Arc<ToolBox>, ToolsetError> {
        let listed = (self.list)()
            .await
            .map_err(|e| ToolsetError::new(&self.label, e))?;
        let keys: Vec<u64> = listed.iter().map(|l| l.key).collect();
        let mut last = self.last.lock().expect("not poisoned");
        if let Some(c) = &*last
            && c.keys == keys
        {
            return Ok(Arc::clone(&c.tools));
        }
        let mut tools = ToolBox::new();
        let mut keep = Vec::with_capacity(listed.len());
        for l in listed {
            tools
                .add(l.tool)
                .map_err(|e| ToolsetError::new(&self.label, e.to_string()))?;
            keep.push(l.keep);
        }
        let tools = Arc::new(tools);
        *last = Some(Cached {
            keys,
            tools: Arc::clone(&tools),
            _keep: keep,
        });
        Ok(tools)
    }
}

impl Toolset for HostToolset {
    fn name(&self) -> &str {
        &self.label
    }

    fn prefix(&self) -> &str {
        &self.prefix
    }

    fn tools(&self) -> BoxFuture<'_, Result<Arc<ToolBox>, ToolsetError>> {
        Box::pin(self.current())
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {
            self.last.lock().expect("not poisoned").take();
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parlance::scripted::ScriptedModel;
    use parlance::{Agent, Block, Message};
    use serde_json::json;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn echo(name: &str) -> Tool {
        Tool::new(name, "Says it back.", |a: serde_json::Value| async move {
            Ok::<_, parlance::ToolError>(a.to_string())
        })
    }

    #[tokio::test]
    async fn tools_are_listed_before_each_call_and_reused_while_the_same() {
        let calls = Arc::new(AtomicU64::new(0));
        let n = Arc::clone(&calls);
        let set = Arc::new(HostToolset::new("flags", None, move || {
            let i = n.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                // The same object (key 1) twice, then a new one (key 2).
                let key = if i < 2 { 1 } else { 2 };
                Ok(vec![Listed {
                    key,
                    tool: echo(if key == 1 { "first" } else { "second" }),
                    keep: Box::new(()),
                }])
            })
        }));
        let a = set.tools().await.unwrap();
        let b = set.tools().await.unwrap();
        assert!(Arc::ptr_eq(&a, &b), "the same objects: the same tool box");
        let c = set.tools().await.unwrap();
        assert_eq!(c.names().collect::<Vec<_>>(), ["second"]);

        let model = ScriptedModel::new([
            Message::new(
                parlance::Role::Assistant,
                vec![Block::tool_call("c1", "second", json!({"x": 1}))],
            ),
            Message::assistant("done"),
        ]);
        let agent = Agent::builder(model.clone())
            .toolset(Arc::clone(&set))
            .build()
            .unwrap();
        let r = agent.run("go").await;
        assert_eq!(r.text(), "done", "{:?}", r.error);
        assert_eq!(
            calls.load(Ordering::SeqCst),
            5,
            "asked before each model call"
        );
    }

    #[tokio::test]
    async fn an_error_or_a_duplicate_name_names_the_toolset() {
        let failing = HostToolset::new("flags", None, || {
            Box::pin(async { Err("lookup raised KeyError: 'x'".into()) })
        });
        let e = failing.tools().await.unwrap_err();
        assert_eq!(
            e.to_string(),
            "toolset \"flags\": lookup raised KeyError: 'x'"
        );
        let twice = HostToolset::new("flags", Some("f".into()), || {
            Box::pin(async {
                Ok(vec![
                    Listed {
                        key: 1,
                        tool: echo("a"),
                        keep: Box::new(()),
                    },
                    Listed {
                        key: 2,
                        tool: echo("a"),
                        keep: Box::new(()),
                    },
                ])
            })
        });
        assert_eq!(twice.prefix(), "f");
        let e = twice.tools().await.unwrap_err();
        assert!(e.to_string().starts_with("toolset \"flags\": "), "{e}");
        assert!(e.to_string().contains("\"a\""), "{e}");
    }
}
