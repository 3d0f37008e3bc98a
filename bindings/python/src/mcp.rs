//! An MCP server's tools: `McpServer` (``parlance.McpServer`` wraps it),
//! read by the bindings' shared reader (`parlance_bindings::mcp`) and
//! given to an agent as a toolset. One object is one connection, shared
//! by every agent it is given to.

use parlance_bindings::Dialect;
use parlance_bindings::mcp::{McpServer, server};
use pyo3::prelude::*;

use crate::convert::from_py;
use crate::errors::bind_error;
use crate::runtime::{awaitable, block_on};

/// An MCP server, not started until a run needs its tools.
#[pyclass(module = "parlance._core", name = "McpServer", frozen)]
pub struct PyMcpServer {
    pub server: McpServer,
}

#[pymethods]
impl PyMcpServer {
    /// ``settings``: a dict (``name``, ``command``/``args`` or ``url``...;
    /// see ``parlance.McpServer``).
    #[new]
    fn new(py: Python<'_>, settings: &Bound<'_, PyAny>) -> PyResult<Self> {
        let settings = from_py(settings, "settings")?;
        let server = server(&settings, Dialect::Python).map_err(|e| bind_error(py, e))?;
        Ok(PyMcpServer { server })
    }

    /// Its name.
    #[getter]
    fn name(&self) -> &str {
        self.server.name()
    }

    /// Stops it (a child process ends; an HTTP session closes), as an
    /// awaitable; a later run starts it again.
    fn shutdown<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let server = self.server.clone();
        awaitable(py, "McpServer.shutdown()", async move {
            server.shutdown().await;
            Ok(())
        })
    }

    /// ``shutdown``, waited for with the GIL released.
    fn shutdown_blocking(&self, py: Python<'_>) -> PyResult<()> {
        let server = self.server.clone();
        block_on(py, async move {
            server.shutdown().await;
            Ok(())
        })
    }

    fn __repr__(&self) -> String {
        format!("McpServer({:?})", self.server.name())
    }
}
