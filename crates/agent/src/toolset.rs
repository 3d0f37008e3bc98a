//! Tools that come from outside the program and may change while an agent
//! lives: an MCP server's, listed when the server is first needed and
//! listed again when it says its tools changed.
//!
//! A [`Toolset`] hands the agent a [`ToolBox`] (validators already
//! compiled) before each model call. While nothing changed it hands back
//! the same `Arc`, so the agent rebuilds nothing: the cost of a toolset
//! that did not change is one pointer comparison per model call.
//!
//! Names: the agent's own tools keep theirs. A name that more than one
//! source offers (the agent and a toolset, or two toolsets) is offered by
//! each toolset as `{prefix}_{name}`, with the toolset's
//! [`prefix`](Toolset::prefix): which source a name came from never
//! depends on which answered first.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use parlance_format::ToolSpec;

use crate::engine::ToolBox;

/// A source of tools the agent asks before each model call.
///
/// The tools it lists are ordinary [`Tool`](crate::Tool)s: their arguments
/// are validated before they run, and their timeouts, failures, approvals
/// and order are the engine's, exactly as for tools written in Rust.
pub trait Toolset: Send + Sync + 'static {
    /// Names the source in errors and logs (`mcp server "files"`).
    fn name(&self) -> &str;

    /// Put with `_` before the name of a tool that another source also
    /// offers (an MCP server's name: `files` makes `files_search`).
    fn prefix(&self) -> &str;

    /// The tools as they are now; the first call starts the source (a
    /// server process, a connection). Return the same `Arc` while nothing
    /// changed. An error fails the run with code `tools_unavailable`.
    fn tools(&self) -> BoxFuture<'_, Result<Arc<ToolBox>, ToolsetError>>;

    /// Stops the source (ends its process, closes its connection). A later
    /// [`tools`](Toolset::tools) starts it again.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

/// A toolset could not say what its tools are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{toolset}: {message}")]
pub struct ToolsetError {
    /// The toolset's name (`mcp server "files"`).
    pub toolset: String,
    /// What went wrong (`could not start: No such file or directory`).
    pub message: String,
}

impl ToolsetError {
    /// An error of the toolset named `toolset`.
    pub fn new(toolset: impl Into<String>, message: impl Into<String>) -> Self {
        ToolsetError {
            toolset: toolset.into(),
            message: message.into(),
        }
    }
}

/// Shared toolsets are toolsets.
impl<T: Toolset + ?Sized> Toolset for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn prefix(&self) -> &str {
        (**self).prefix()
    }

    fn tools(&self) -> BoxFuture<'_, Result<Arc<ToolBox>, ToolsetError>> {
        (**self).tools()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        (**self).shutdown()
    }
}

/// What an agent offers now: its own tools and its toolsets', merged.
#[derive(Clone)]
pub(crate) struct Offered {
    /// The toolsets' boxes this was merged from (compared by pointer).
    parts: Vec<Arc<ToolBox>>,
    pub(crate) tools: Arc<ToolBox>,
    pub(crate) specs: Arc<[ToolSpec]>,
}

/// The last merge, kept so that toolsets that did not change cost a
/// pointer comparison each.
#[derive(Default)]
pub(crate) struct OfferCache(Mutex<Option<Offered>>);

impl OfferCache {
    /// The last merge, if there was one.
    pub(crate) fn last(&self) -> Option<Offered> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The agent's tools merged with `parts` (one box per toolset, in the
    /// agent's order), merged again only when a part changed.
    pub(crate) fn offer(
        &self,
        own: &ToolBox,
        sets: &[Arc<dyn Toolset>],
        parts: Vec<Arc<ToolBox>>,
    ) -> Offered {
        let mut last = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(o) = &*last
            && o.parts.len() == parts.len()
            && o.parts.iter().zip(&parts).all(|(a, b)| Arc::ptr_eq(a, b))
        {
            return o.clone();
        }
        let tools = merge(own, sets, &parts);
        let offered = Offered {
            specs: tools.specs().into(),
            tools: Arc::new(tools),
            parts,
        };
        *last = Some(offered.clone());
        offered
    }
}

/// The agent's own tools, then each toolset's, a name offered by more
/// than one source prefixed in each toolset that offers it. A tool whose
/// prefixed name is still taken is left out, with a warning.
fn merge(own: &ToolBox, sets: &[Arc<dyn Toolset>], parts: &[Arc<ToolBox>]) -> ToolBox {
    let mut sources: HashMap<&str, usize> = HashMap::new();
    for name in own.names() {
        *sources.entry(name).or_default() += 1;
    }
    for part in parts {
        for name in part.names() {
            *sources.entry(name).or_default() += 1;
        }
    }
    let mut out = ToolBox::new();
    for name in own.names() {
        out.copy_from(own, name, name);
    }
    for (set, part) in sets.iter().zip(parts) {
        for name in part.names() {
            let offered = if sources[name] > 1 {
                format!("{}_{name}", set.prefix())
            } else {
                name.to_string()
            };
            if !out.copy_from(part, name, &offered) {
                tracing::warn!(toolset = set.name(), tool = name, offered = %offered, "tool left out: its name is taken");
            }
        }
    }
    out
}
