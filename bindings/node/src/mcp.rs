//! An MCP server's tools: `NativeMcpServer` (the package's `McpServer`
//! wraps it), read by the bindings' shared reader
//! (`parlance_bindings::mcp`) and given to agents as a toolset through a
//! [`NativeToolsetList`]. One object is one connection, shared by every
//! agent it is given to.

use std::sync::Arc;

use napi::Env;
use napi::bindgen_prelude::{AsyncBlock, Function};
use napi_derive::napi;
use parlance_bindings::Dialect;
use parlance_bindings::mcp::{McpServer, server};

use crate::errors::{bind, parse};
use crate::js_call::JsFunction;
use crate::task::promise;

/// An MCP server, not started until a run needs its tools.
#[napi]
pub struct NativeMcpServer {
    pub(crate) server: McpServer,
}

#[napi]
impl NativeMcpServer {
    /// `settings`: JSON text (`name`, `command`/`args` or `url`...; see
    /// the package's `McpServer`).
    #[napi(constructor, catch_unwind)]
    pub fn new(settings: String) -> napi::Result<Self> {
        let v = parse("McpServer", &settings)?;
        let server = server(&v, Dialect::Node).map_err(bind)?;
        Ok(NativeMcpServer { server })
    }

    /// Its name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.server.name().to_string()
    }

    /// Stops it (a child process ends; an HTTP session closes); a later
    /// run starts it again.
    #[napi(catch_unwind)]
    pub fn shutdown(&self, env: &Env) -> napi::Result<AsyncBlock<()>> {
        let server = self.server.clone();
        promise(env, async move {
            server.shutdown().await;
            Ok(())
        })
    }
}

/// A toolset written in JavaScript, before its agent is built (its tools
/// are made with the agent's host: see `agent.rs`).
pub(crate) struct Hosted {
    pub name: String,
    pub prefix: Option<String>,
    pub list: Arc<JsFunction>,
}

/// A toolset given to an agent.
pub(crate) enum Given {
    Mcp(McpServer),
    Hosted(Hosted),
}

/// The toolsets given to an agent, in order.
#[napi]
#[derive(Default)]
pub struct NativeToolsetList {
    pub(crate) toolsets: Vec<Given>,
}

#[napi]
impl NativeToolsetList {
    /// An empty list.
    #[napi(constructor)]
    pub fn new() -> Self {
        NativeToolsetList::default()
    }

    /// Adds an MCP server.
    #[napi]
    pub fn push(&mut self, server: &NativeMcpServer) {
        self.toolsets.push(Given::Mcp(server.server.clone()));
    }

    /// Adds a toolset written in JavaScript: `call([token, json])` lists
    /// its tools (`lib/js_call.cjs`; `{tag}` in, `[{index, def}]` out).
    #[napi(catch_unwind)]
    pub fn push_hosted(
        &mut self,
        name: String,
        prefix: Option<String>,
        call: Function<'_, (i64, String), ()>,
        abort: Function<'_, i64, ()>,
    ) -> napi::Result<()> {
        let list = Arc::new(JsFunction::new(call, abort, format!("toolset {name:?}"))?);
        self.toolsets
            .push(Given::Hosted(Hosted { name, prefix, list }));
        Ok(())
    }
}
