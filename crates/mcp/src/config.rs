//! What an MCP server is: how to reach it (a command to run, or a URL) and
//! how its tools are offered. The same settings come from Rust (the
//! builder methods) and from the server's TOML (`[[mcp]]`, read with
//! serde), so both are checked by one function, [`McpConfig::check`].

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

/// The time a server has to start and answer `initialize` and
/// `tools/list` (a package runner such as `npx` may download first).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// One MCP server, as configured.
///
/// In TOML (the server's `[[mcp]]` tables):
///
/// ```toml
/// [[mcp]]
/// name = "files"
/// command = "npx"
/// args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"]
/// env = { LOG_LEVEL = "warn" }
/// prefix = "fs"                   # the model sees fs_read_file, ...
///
/// [[mcp]]
/// name = "tickets"
/// url = "https://mcp.example.com/mcp"
/// bearer_env = "TICKETS_TOKEN"    # or bearer = "..." (not in a file you share)
/// headers = { "X-Team" = "support" }
/// timeout_ms = 20000
/// needs_approval = ["close_ticket"]
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpConfig {
    /// The server's name: in errors, logs, and how agents refer to it.
    pub name: String,
    /// stdio: the program to run (found on `PATH`).
    pub command: Option<String>,
    /// stdio: its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// stdio: environment variables set for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// stdio: pass this process's whole environment on (default: only
    /// `HOME`, `LANG`, `LC_ALL`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `TMPDIR`, `USER`
    /// and `env`, so that API keys do not reach every server).
    #[serde(default)]
    pub inherit_env: bool,
    /// stdio: its working directory.
    pub cwd: Option<String>,
    /// Streamable HTTP: the endpoint (`https://host/mcp`).
    pub url: Option<String>,
    /// Streamable HTTP: headers sent with every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Streamable HTTP: a bearer token (`Authorization: Bearer ...`).
    pub bearer: Option<String>,
    /// Streamable HTTP: the environment variable holding the bearer token.
    pub bearer_env: Option<String>,
    /// Put before each tool's name, with `_` (`fs` makes `fs_read_file`):
    /// how two servers offering the same tool name are told apart.
    pub prefix: Option<String>,
    /// Offer only these tools (their names on the server, before any prefix).
    pub tools: Option<Vec<String>>,
    /// Calls that wait for a human's decision: `true` (all), or tool names.
    #[serde(default)]
    pub needs_approval: Approval,
    /// Time a call may take (default: the agent's tool timeout).
    pub timeout_ms: Option<u64>,
    /// Time the server has to start and list its tools (default 30 s).
    pub startup_timeout_ms: Option<u64>,
}

/// Which calls need approval: `needs_approval = true` or a list of names.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Approval {
    /// All (`true`) or none (`false`, the default).
    All(bool),
    /// These tools (their names on the server).
    Tools(Vec<String>),
}

impl Default for Approval {
    fn default() -> Self {
        Approval::All(false)
    }
}

impl Approval {
    /// Whether calls to `tool` (its name on the server) need approval.
    pub fn covers(&self, tool: &str) -> bool {
        match self {
            Approval::All(all) => *all,
            Approval::Tools(names) => names.iter().any(|n| n == tool),
        }
    }
}

/// How the server is reached, once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Endpoint {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        inherit_env: bool,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<(http::HeaderName, http::HeaderValue)>,
        bearer: Option<String>,
    },
}

/// The settings a connection runs with.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub name: String,
    pub endpoint: Endpoint,
    pub prefix: Option<String>,
    pub only: Option<Vec<String>>,
    pub approval: Approval,
    pub timeout: Option<Duration>,
    pub startup_timeout: Duration,
}

/// A configuration that cannot work; the message names the setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("mcp server {name:?}: {message}")]
pub struct ConfigError {
    /// The server's name as configured.
    pub name: String,
    /// What is wrong, naming the setting (`url: ...`).
    pub message: String,
}

impl McpConfig {
    /// Checks the settings and reads what comes from the environment
    /// (`bearer_env`, through `env` so that tests need not touch it).
    pub(crate) fn check(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, ConfigError> {
        let fail = |message: String| ConfigError {
            name: self.name.clone(),
            message,
        };
        if self.name.trim().is_empty() {
            return Err(fail("name: must not be empty".into()));
        }
        let stdio_only =
            !self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some() || self.inherit_env;
        let http_only =
            !self.headers.is_empty() || self.bearer.is_some() || self.bearer_env.is_some();
        let endpoint = match (&self.command, &self.url) {
            (Some(_), Some(_)) => {
                return Err(fail(
                    "give either command (stdio) or url (streamable HTTP), not both".into(),
                ));
            }
            (None, None) => {
                return Err(fail("give command (stdio) or url (streamable HTTP)".into()));
            }
            (Some(command), None) => {
                if command.trim().is_empty() {
                    return Err(fail("command: must not be empty".into()));
                }
                if http_only {
                    return Err(fail(
                        "headers, bearer and bearer_env are for a url, not a command".into(),
                    ));
                }
                Endpoint::Stdio {
                    command: command.clone(),
                    args: self.args.clone(),
                    env: self
                        .env
                        .iter()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                    inherit_env: self.inherit_env,
                    cwd: self.cwd.clone(),
                }
            }
            (None, Some(url)) => {
                if stdio_only {
                    return Err(fail(
                        "args, env, inherit_env and cwd are for a command, not a url".into(),
                    ));
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(fail(format!(
                        "url: expected an http:// or https:// URL, got {url:?}"
                    )));
                }
                let mut headers = Vec::new();
                for (k, v) in &self.headers {
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|_| fail(format!("headers: {k:?} is not a valid header name")))?;
                    let mut value = http::HeaderValue::from_str(v)
                        .map_err(|_| fail(format!("headers.{k}: not a valid header value")))?;
                    value.set_sensitive(true);
                    headers.push((name, value));
                }
                let bearer = match (&self.bearer, &self.bearer_env) {
                    (Some(_), Some(_)) => {
                        return Err(fail("give bearer or bearer_env, not both".into()));
                    }
                    (Some(b), None) => Some(b.clone()),
                    (None, Some(var)) => {
                        Some(env(var).filter(|v| !v.is_empty()).ok_or_else(|| {
                            fail(format!(
                                "bearer_env: the environment variable {var} is not set"
                            ))
                        })?)
                    }
                    (None, None) => None,
                };
                if let Some(b) = &bearer
                    && http::HeaderValue::from_str(&format!("Bearer {b}")).is_err()
                {
                    return Err(fail("bearer: not a valid header value".into()));
                }
                Endpoint::Http {
                    url: url.clone(),
                    headers,
                    bearer,
                }
            }
        };
        if let Some(p) = &self.prefix
            && (p.is_empty()
                || !p
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        {
            return Err(fail(format!(
                "prefix: letters, digits, _ and - only, got {p:?}"
            )));
        }
        if self.timeout_ms == Some(0) {
            return Err(fail("timeout_ms: must be more than 0".into()));
        }
        if self.startup_timeout_ms == Some(0) {
            return Err(fail("startup_timeout_ms: must be more than 0".into()));
        }
        Ok(Settings {
            name: self.name.clone(),
            endpoint,
            prefix: self.prefix.clone(),
            only: self.tools.clone(),
            approval: self.needs_approval.clone(),
            timeout: self.timeout_ms.map(Duration::from_millis),
            startup_timeout: self
                .startup_timeout_ms
                .map_or(DEFAULT_STARTUP_TIMEOUT, Duration::from_millis),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Settings, String> {
        let c: McpConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        c.check(|k| (k == "TOKEN").then(|| "t0ken".to_string()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_command_or_a_url_and_what_goes_with_each() {
        let s =
            parse("name = \"a\"\ncommand = \"node\"\nargs = [\"x.js\"]\nprefix = \"fs\"").unwrap();
        assert!(matches!(s.endpoint, Endpoint::Stdio { ref command, .. } if command == "node"));
        let s = parse("name = \"b\"\nurl = \"http://127.0.0.1:1/mcp\"\nbearer_env = \"TOKEN\"\nheaders = { X-Team = \"a\" }").unwrap();
        let Endpoint::Http {
            bearer, headers, ..
        } = s.endpoint
        else {
            panic!()
        };
        assert_eq!(bearer.as_deref(), Some("t0ken"));
        assert_eq!(headers[0].0.as_str(), "x-team");

        for (text, message) in [
            (
                "name = \"a\"",
                "mcp server \"a\": give command (stdio) or url (streamable HTTP)",
            ),
            (
                "name = \"a\"\ncommand = \"x\"\nurl = \"http://h/\"",
                "mcp server \"a\": give either command (stdio) or url (streamable HTTP), not both",
            ),
            (
                "name = \"a\"\nurl = \"ftp://h/\"",
                "mcp server \"a\": url: expected an http:// or https:// URL, got \"ftp://h/\"",
            ),
            (
                "name = \"a\"\nurl = \"http://h/\"\nargs = [\"x\"]",
                "mcp server \"a\": args, env, inherit_env and cwd are for a command, not a url",
            ),
            (
                "name = \"a\"\ncommand = \"x\"\nbearer = \"t\"",
                "mcp server \"a\": headers, bearer and bearer_env are for a url, not a command",
            ),
            (
                "name = \"a\"\nurl = \"http://h/\"\nbearer_env = \"NOPE\"",
                "mcp server \"a\": bearer_env: the environment variable NOPE is not set",
            ),
            (
                "name = \"a\"\nurl = \"http://h/\"\nheaders = { \"bad name\" = \"v\" }",
                "mcp server \"a\": headers: \"bad name\" is not a valid header name",
            ),
            (
                "name = \"a\"\ncommand = \"x\"\nprefix = \"a.b\"",
                "mcp server \"a\": prefix: letters, digits, _ and - only, got \"a.b\"",
            ),
            (
                "name = \"a\"\ncommand = \"x\"\ntimeout_ms = 0",
                "mcp server \"a\": timeout_ms: must be more than 0",
            ),
            (
                "name = \"\"\ncommand = \"x\"",
                "mcp server \"\": name: must not be empty",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err(), message, "{text}");
        }
        assert!(
            parse("name = \"a\"\ncommand = \"x\"\ncolour = 1")
                .unwrap_err()
                .contains("unknown field `colour`")
        );
    }

    #[test]
    fn approval_is_all_none_or_named_tools() {
        let s = parse("name = \"a\"\ncommand = \"x\"\nneeds_approval = [\"rm\"]").unwrap();
        assert!(s.approval.covers("rm") && !s.approval.covers("ls"));
        let s = parse("name = \"a\"\ncommand = \"x\"\nneeds_approval = true").unwrap();
        assert!(s.approval.covers("ls"));
        let s = parse("name = \"a\"\ncommand = \"x\"").unwrap();
        assert!(!s.approval.covers("ls"));
    }
}
