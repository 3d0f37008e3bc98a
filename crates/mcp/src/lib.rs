//! The tools of MCP servers as Parlance tools, with the official Rust SDK
//! (rmcp) as the client.
//!
//! An [`McpServer`] is a [`Toolset`]: give it to an agent and its tools are
//! offered to the model next to the agent's own, under the same engine
//! (arguments validated against the server's input schema before the call
//! is sent, the timeout, the exception policy, approvals, concurrency,
//! results in call order).
//!
//! ```ignore
//! # async fn demo(model: std::sync::Arc<dyn parlance_model::Model>) -> Result<(), Box<dyn std::error::Error>> {
//! use parlance_agent::Agent;
//! use parlance_mcp::McpServer;
//!
//! let files = McpServer::stdio("files", "npx")
//!     .args(["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"])
//!     .prefix("fs")
//!     .build()?;
//! let agent = Agent::builder(model).toolset(files.clone()).build()?;
//! let answer = agent.run("What is in /srv/docs/README?").await;
//! files.shutdown().await; // or drop the last handle: the process is killed
//! # Ok(()) }
//! ```
//!
//! - **Lazily started**: nothing runs until the first run needs the tools.
//! - **Kept up to date**: `notifications/tools/list_changed` makes the next
//!   model call list the tools again.
//! - **Failures**: `isError` results are [`ToolError`](parlance_agent::ToolError)s
//!   (the model reads the message); a JSON-RPC error, a broken connection or
//!   a server that died mid-call are unexpected failures (`tool_failed`,
//!   under `on_tool_exception`); the run goes on, and the next model call
//!   starts the server again. A server that cannot start at all fails the
//!   run with `tools_unavailable`, naming the server and its stderr.

#![warn(missing_docs)]

mod config;
mod connection;
mod convert;
mod link;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use parlance_agent::{ToolBox, Toolset, ToolsetError};

pub use config::{Approval, ConfigError, DEFAULT_STARTUP_TIMEOUT, McpConfig};
pub use convert::FAILURE_TYPE;

use config::Settings;
use connection::Live;

/// After a server that was running died and could not be started again,
/// the next attempt waits this long (its last tools stay offered; their
/// calls fail saying why).
const RESTART_PAUSE: Duration = Duration::from_secs(5);

/// A timeout in whole milliseconds, at least 1; one past `u64::MAX`
/// milliseconds is `u64::MAX` (never wrapped round to a short one).
fn millis(timeout: Duration) -> u64 {
    u64::try_from(timeout.as_millis().max(1)).unwrap_or(u64::MAX)
}

/// An MCP server's tools, as a [`Toolset`]. Cheap to clone: clones share
/// one connection. The connection is made on first use and closed by
/// [`shutdown`](McpServer::shutdown), or when the last clone is dropped
/// (a child process is then killed, with its process group).
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Settings,
    label: String,
    /// The server's name made safe for a tool name.
    clash_prefix: String,
    state: tokio::sync::Mutex<State>,
}

enum State {
    Stopped,
    Running(Live),
    /// It ran, died, and could not be started again: its last tools are
    /// still offered (their calls fail with the reason).
    Broken {
        tools: Arc<ToolBox>,
        error: String,
        since: Instant,
    },
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.inner.settings.name)
            .finish()
    }
}

/// Builds an [`McpServer`] in Rust (the same settings as [`McpConfig`]).
#[derive(Debug, Clone)]
#[must_use = "call .build() to get the server"]
pub struct McpServerBuilder {
    config: McpConfig,
}

impl McpServer {
    /// A server run as a child process, spoken to over its stdin/stdout.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> McpServerBuilder {
        McpServerBuilder {
            config: McpConfig {
                name: name.into(),
                command: Some(command.into()),
                ..McpConfig::default()
            },
        }
    }

    /// A server reached over streamable HTTP at `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> McpServerBuilder {
        McpServerBuilder {
            config: McpConfig {
                name: name.into(),
                url: Some(url.into()),
                ..McpConfig::default()
            },
        }
    }

    /// A server from its configuration (the server's `[[mcp]]` tables);
    /// `bearer_env` is read from this process's environment now.
    pub fn from_config(config: &McpConfig) -> Result<McpServer, ConfigError> {
        let settings = config.check(|k| std::env::var(k).ok())?;
        Ok(McpServer {
            inner: Arc::new(Inner {
                label: format!("mcp server {:?}", settings.name),
                clash_prefix: convert::visible_name(None, &settings.name),
                settings,
                state: tokio::sync::Mutex::new(State::Stopped),
            }),
        })
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.inner.settings.name
    }

    /// Stops the server now (closes stdin and waits a moment for the
    /// process, then signals it; ends an HTTP session). The next run that
    /// needs its tools starts it again.
    pub async fn shutdown(&self) {
        let old = std::mem::replace(&mut *self.inner.state.lock().await, State::Stopped);
        if let State::Running(live) = old {
            tracing::debug!(server = %self.inner.settings.name, "stopping MCP server");
            let _ = live.service.cancel().await;
        }
    }

    async fn current_tools(&self) -> Result<Arc<ToolBox>, ToolsetError> {
        let s = &self.inner.settings;
        let mut state = self.inner.state.lock().await;
        if let State::Running(live) = &*state {
            if !live.is_closed() {
                if !live.take_changed() {
                    return Ok(Arc::clone(&live.tools));
                }
                match connection::list(s, &live.link).await {
                    Ok(tools) => {
                        tracing::debug!(server = %s.name, tools = ?tools, "MCP tools listed again");
                        let State::Running(live) = &mut *state else {
                            unreachable!()
                        };
                        live.tools = Arc::clone(&tools);
                        return Ok(tools);
                    }
                    Err(e) if !live.is_closed() => {
                        tracing::warn!(server = %s.name, error = %e, "MCP tools could not be listed again; the last list stays");
                        return Ok(Arc::clone(&live.tools));
                    }
                    Err(_) => {}
                }
            }
            tracing::warn!(server = %s.name, "MCP server connection lost; starting it again");
        }
        let last = match &*state {
            State::Running(live) => Some(Arc::clone(&live.tools)),
            State::Broken {
                tools,
                error,
                since,
            } => {
                if since.elapsed() < RESTART_PAUSE {
                    tracing::debug!(server = %s.name, error = %error, "MCP server still down");
                    return Ok(Arc::clone(tools));
                }
                Some(Arc::clone(tools))
            }
            State::Stopped => None,
        };
        match connection::start(s).await {
            Ok(live) => {
                tracing::info!(server = %s.name, tools = ?live.tools, "MCP server started");
                let tools = Arc::clone(&live.tools);
                *state = State::Running(live);
                Ok(tools)
            }
            Err(error) => match last {
                // It worked before: the run goes on with the tools it knew,
                // whose calls now fail saying the server is down.
                Some(tools) => {
                    tracing::warn!(server = %s.name, error = %error, "MCP server could not be started again");
                    *state = State::Broken {
                        tools: Arc::clone(&tools),
                        error,
                        since: Instant::now(),
                    };
                    Ok(tools)
                }
                None => Err(ToolsetError::new(self.inner.label.clone(), error)),
            },
        }
    }
}

impl Toolset for McpServer {
    fn name(&self) -> &str {
        &self.inner.label
    }

    fn prefix(&self) -> &str {
        &self.inner.clash_prefix
    }

    fn tools(&self) -> BoxFuture<'_, Result<Arc<ToolBox>, ToolsetError>> {
        Box::pin(self.current_tools())
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(McpServer::shutdown(self))
    }
}

impl McpServerBuilder {
    /// stdio: the command's arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, args: I) -> Self {
        self.config.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// stdio: an environment variable for the process.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.env.insert(key.into(), value.into());
        self
    }

    /// stdio: pass this process's whole environment on (by default only
    /// `PATH`, `HOME` and the like, and what [`env`](Self::env) sets).
    pub fn inherit_env(mut self) -> Self {
        self.config.inherit_env = true;
        self
    }

    /// stdio: the process's working directory.
    pub fn cwd(mut self, dir: impl Into<String>) -> Self {
        self.config.cwd = Some(dir.into());
        self
    }

    /// HTTP: a header sent with every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.config.headers.insert(name.into(), value.into());
        self
    }

    /// HTTP: `Authorization: Bearer TOKEN` on every request.
    pub fn bearer(mut self, token: impl Into<String>) -> Self {
        self.config.bearer = Some(token.into());
        self
    }

    /// Put `prefix` and `_` before each tool's name.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.config.prefix = Some(prefix.into());
        self
    }

    /// Offer only these tools (their names on the server).
    pub fn only<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tools: I) -> Self {
        self.config.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Every call waits for a human's decision.
    pub fn needs_approval(mut self) -> Self {
        self.config.needs_approval = Approval::All(true);
        self
    }

    /// Calls to these tools (their names on the server) wait for a
    /// human's decision.
    pub fn needs_approval_for<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        tools: I,
    ) -> Self {
        self.config.needs_approval = Approval::Tools(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Time a call may take (default: the agent's tool timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout_ms = Some(millis(timeout));
        self
    }

    /// Time the server has to start and list its tools (default 30 s).
    pub fn startup_timeout(mut self, timeout: Duration) -> Self {
        self.config.startup_timeout_ms = Some(millis(timeout));
        self
    }

    /// Checks the settings; nothing is started yet.
    pub fn build(self) -> Result<McpServer, ConfigError> {
        McpServer::from_config(&self.config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 39: a timeout past `u64::MAX` milliseconds used to wrap round
    /// (`as u64`) to a shorter one.
    #[test]
    fn a_timeout_past_u64_milliseconds_is_the_longest() {
        assert_eq!(millis(Duration::from_secs(u64::MAX / 2)), u64::MAX);
        assert_eq!(millis(Duration::MAX), u64::MAX);
        assert_eq!(millis(Duration::ZERO), 1);
        assert_eq!(millis(Duration::from_micros(1_500_900)), 1500);
    }
}
