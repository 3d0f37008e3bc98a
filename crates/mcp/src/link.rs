//! What a listed tool keeps of its server: the connection's peer and the
//! last lines its process wrote on stderr (which explain a server that
//! died or refused a call).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rmcp::{Peer, RoleClient};

/// What a tool needs to reach its server: the peer of the connection it
/// was listed on, and that connection's stderr.
pub(crate) struct Link {
    /// The server's name in the configuration.
    pub name: String,
    /// The client side of the connection.
    pub peer: Peer<RoleClient>,
    /// The last lines the server's process wrote on stderr.
    pub stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Link {
    /// `; its stderr ended with: ...`, or nothing when it wrote nothing
    /// (or the server is not a process).
    pub fn stderr_tail(&self) -> String {
        tail(&self.stderr)
    }
}

/// `; its stderr ended with: ...` for these lines, or nothing.
pub(crate) fn tail(lines: &Mutex<VecDeque<String>>) -> String {
    let lines = lines.lock().unwrap_or_else(|p| p.into_inner());
    if lines.is_empty() {
        String::new()
    } else {
        format!(
            "; its stderr ended with: {}",
            lines.iter().cloned().collect::<Vec<_>>().join(" | ")
        )
    }
}
