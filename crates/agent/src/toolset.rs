//! Tools that come from outside the program and may change while an agent
//! lives: an MCP server's, listed when the server is first needed and
//! listed again when it says its tools changed.
//!
//! A [`Toolset`] hands the agent a [`ToolBox`] (validators already
//! compiled) before each model call. While nothing changed it hands back
//! the same `Arc`, so the agent rebuilds nothing: the cost of a toolset
//! that did not change is one pointer comparison per model call.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::engine::ToolBox;

/// A source of tools the agent asks before each model call.
///
/// The tools it lists are ordinary [`Tool`](crate::Tool)s: their arguments
/// are validated before they run, and their timeouts, failures, approvals
/// and order are the engine's, exactly as for tools written in Rust.
pub trait Toolset: Send + Sync + 'static {
    /// Names the source in errors and logs (`mcp server "files"`).
    fn name(&self) -> &str;

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

    fn tools(&self) -> BoxFuture<'_, Result<Arc<ToolBox>, ToolsetError>> {
        (**self).tools()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        (**self).shutdown()
    }
}
