//! One live connection to an MCP server: starting it (a child process over
//! stdio, or a streamable HTTP session), listing its tools, hearing that
//! they changed, and what its process last wrote on stderr (which is what
//! explains a server that will not start or that died).

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use parlance_agent::ToolBox;
use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;

use crate::config::{Endpoint, Settings};
use crate::link::{Link, tail};

/// Variables a stdio server gets from this process unless told otherwise
/// (those the MCP SDKs pass on by default): enough to run, no secrets.
const SAFE_ENV: &[&str] = &[
    "HOME", "LANG", "LC_ALL", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "USER",
];

/// Lines of a server's stderr kept to explain a failure.
const STDERR_LINES: usize = 8;
/// Characters kept of each of those lines.
const STDERR_LINE_CHARS: usize = 300;

/// Hears the server say its tools changed.
#[derive(Clone)]
pub(crate) struct Handler {
    name: String,
    changed: Arc<AtomicBool>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.name, "MCP server says its tools changed");
        self.changed.store(true, Ordering::Release);
    }

    fn get_info(&self) -> ClientConfig {
        // 2025-11-25: the newest version with the initialize handshake and
        // plain `notifications/tools/list_changed`, which servers of every
        // age understand.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("parlance", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// A running connection and the tools it listed.
pub(crate) struct Live {
    pub service: RunningService<RoleClient, Handler>,
    pub link: Arc<Link>,
    pub changed: Arc<AtomicBool>,
    pub tools: Arc<ToolBox>,
}

impl Live {
    /// Whether the connection is gone (the process exited, the session
    /// ended).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.link.peer.is_transport_closed()
    }

    /// Whether the server said its tools changed since the last listing
    /// (and forgets it: the caller lists again).
    pub fn take_changed(&self) -> bool {
        self.changed.swap(false, Ordering::AcqRel)
    }
}

/// Starts the server and lists its tools, within the startup timeout.
pub(crate) async fn start(settings: &Settings) -> Result<Live, String> {
    let stderr = Arc::new(Mutex::new(VecDeque::new()));
    let changed = Arc::new(AtomicBool::new(false));
    let handler = Handler {
        name: settings.name.clone(),
        changed: Arc::clone(&changed),
    };
    let connect = async {
        let service = match &settings.endpoint {
            Endpoint::Stdio { .. } => {
                let transport = spawn(settings, &stderr)?;
                handler.serve(transport).await.map_err(|e| e.to_string())?
            }
            Endpoint::Http {
                url,
                headers,
                bearer,
            } => {
                // The transport's reqwest client needs the process's TLS
                // provider (ring), as the model providers' does.
                let _ = rustls::crypto::ring::default_provider().install_default();
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(headers.iter().cloned().collect::<HashMap<_, _>>());
                if let Some(b) = bearer {
                    config = config.auth_header(b.clone());
                }
                let transport = StreamableHttpClientTransport::from_config(config);
                handler.serve(transport).await.map_err(|e| e.to_string())?
            }
        };
        Ok::<_, String>(service)
    };
    let service = match tokio::time::timeout(settings.startup_timeout, connect).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Err(format!("could not start: {e}{}", tail(&stderr))),
        Err(_) => {
            return Err(format!(
                "could not start: no answer to initialize within {} ms{}",
                settings.startup_timeout.as_millis(),
                tail(&stderr)
            ));
        }
    };
    let link = Arc::new(Link {
        name: settings.name.clone(),
        peer: service.peer().clone(),
        stderr,
    });
    let tools = list(settings, &link).await?;
    Ok(Live {
        service,
        link,
        changed,
        tools,
    })
}

/// Lists the server's tools (every page) into a tool box. A tool whose
/// schema does not compile, or whose name clashes once made safe, is left
/// out with a warning: one bad tool does not take the others away.
pub(crate) async fn list(settings: &Settings, link: &Arc<Link>) -> Result<Arc<ToolBox>, String> {
    let listed = tokio::time::timeout(settings.startup_timeout, link.peer.list_all_tools())
        .await
        .map_err(|_| {
            format!(
                "tools/list: no answer within {} ms",
                settings.startup_timeout.as_millis()
            )
        })?
        .map_err(|e| format!("tools/list failed: {e}{}", link.stderr_tail()))?;
    let mut tools = ToolBox::new();
    for t in &listed {
        if let Some(only) = &settings.only
            && !only.iter().any(|n| n == t.name.as_ref())
        {
            continue;
        }
        if let Err(e) = tools.add(crate::convert::tool(settings, link, t)) {
            tracing::warn!(server = %settings.name, tool = %t.name, error = %e, "MCP tool left out");
        }
    }
    if let Some(only) = &settings.only {
        for name in only {
            if !listed.iter().any(|t| t.name.as_ref() == name) {
                tracing::warn!(server = %settings.name, tool = %name, "configured MCP tool not offered by the server");
            }
        }
    }
    Ok(Arc::new(tools))
}

/// Runs a stdio server in its own process group (so that a wrapper such
/// as `npx` and what it starts are stopped together), its stderr read into
/// the log and kept for error messages.
fn spawn(
    settings: &Settings,
    stderr: &Arc<Mutex<VecDeque<String>>>,
) -> Result<TokioChildProcess, String> {
    let Endpoint::Stdio {
        command,
        args,
        env,
        inherit_env,
        cwd,
    } = &settings.endpoint
    else {
        unreachable!("spawn is for stdio servers");
    };
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args);
    if !inherit_env {
        cmd.env_clear();
        for k in SAFE_ENV {
            if let Some(v) = std::env::var_os(k) {
                cmd.env(k, v);
            }
        }
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let mut wrapped = CommandWrap::from(cmd);
    wrapped.wrap(ProcessGroup::leader());
    let (transport, err) = TokioChildProcess::builder(wrapped)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{command}: {e}"))?;
    if let Some(err) = err {
        let keep = Arc::clone(stderr);
        let name = settings.name.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(err).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %name, "stderr: {line}");
                let mut keep = keep.lock().unwrap_or_else(|p| p.into_inner());
                if keep.len() == STDERR_LINES {
                    keep.pop_front();
                }
                keep.push_back(line.chars().take(STDERR_LINE_CHARS).collect());
            }
        });
    }
    Ok(transport)
}
