//! An MCP server's tools for an agent of a package: the server's settings
//! in the language's spelling (Python's `inherit_env=True, timeout=20`,
//! seconds; JavaScript's `inheritEnv: true, timeout: 20000`,
//! milliseconds), checked by the same function as the server's TOML
//! `[[mcp]]` tables ([`parlance_mcp::McpConfig`]), so both report the same
//! errors.

use std::time::Duration;

use parlance_mcp::McpConfig;
pub use parlance_mcp::McpServer;
use serde_json::{Map, Value};

use crate::{BindError, Dialect};

/// The settings of an MCP server, in snake_case, in the order documented.
/// Durations are the dialect's (`timeout`, `startup_timeout`), not the
/// TOML's `timeout_ms`.
pub const NAMES: [&str; 15] = [
    "name",
    "command",
    "args",
    "env",
    "inherit_env",
    "cwd",
    "url",
    "headers",
    "bearer",
    "bearer_env",
    "prefix",
    "tools",
    "needs_approval",
    "timeout",
    "startup_timeout",
];

fn millis(d: Duration) -> Value {
    Value::from(u64::try_from(d.as_millis().max(1)).unwrap_or(u64::MAX))
}

/// Reads an MCP server's settings (an object in dialect `d`; a null value
/// is an unset setting) into a server not started yet: it starts when a
/// run first needs its tools. An unknown or ill-typed setting, or one that
/// cannot work (no `command` nor `url`, both, a bad header...), is an
/// error naming it.
pub fn server(v: &Value, d: Dialect) -> Result<McpServer, BindError> {
    let Value::Object(map) = v else {
        return Err(BindError::config(format!(
            "mcp server: expected {} of settings, got {v}",
            d.object()
        )));
    };
    let label = match map.get("name") {
        Some(Value::String(n)) => format!("mcp server {n:?}"),
        _ => "mcp server".to_string(),
    };
    let mut config = Map::new();
    for (key, v) in map {
        if v.is_null() {
            continue;
        }
        let Some(snake) = NAMES.iter().find(|n| d.name(n) == *key) else {
            let known: Vec<String> = NAMES.iter().map(|n| d.name(n)).collect();
            return Err(BindError::config(format!(
                "{label}: unknown setting {key:?} (known: {})",
                known.join(", ")
            )));
        };
        let what = format!("{label}: {key}");
        match *snake {
            "timeout" => {
                config.insert("timeout_ms".into(), millis(d.duration(&what, v)?));
            }
            "startup_timeout" => {
                config.insert("startup_timeout_ms".into(), millis(d.duration(&what, v)?));
            }
            _ => {
                // Each value alone, so that a wrong type names its setting.
                let mut one = Map::from_iter([(snake.to_string(), v.clone())]);
                one.entry("name").or_insert_with(|| Value::from(""));
                let one = Value::Object(one);
                serde_json::from_value::<McpConfig>(one).map_err(|e| {
                    let e = e.to_string();
                    let e = e.split(" at line").next().unwrap_or(&e);
                    BindError::config(format!("{what}: {e}"))
                })?;
                config.insert(snake.to_string(), v.clone());
            }
        }
    }
    if !config.contains_key("name") {
        return Err(BindError::config(format!(
            "mcp server: {} is required (it names the server in errors and prefixes its tools on a clash)",
            d.name("name")
        )));
    }
    let config: McpConfig = serde_json::from_value(Value::Object(config))
        .map_err(|e| BindError::config(format!("{label}: {e}")))?;
    McpServer::from_config(&config).map_err(|e| BindError::config(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error(v: Value, d: Dialect) -> String {
        server(&v, d).unwrap_err().text
    }

    #[test]
    fn settings_are_read_in_each_dialect() {
        let s = server(
            &json!({"name": "files", "command": "python3", "args": ["-V"],
                    "inherit_env": true, "timeout": 2.5, "startup_timeout": 10,
                    "needs_approval": ["rm"], "prefix": "fs", "tools": ["rm"]}),
            Dialect::Python,
        )
        .unwrap();
        assert_eq!(s.name(), "files");
        let s = server(
            &json!({"name": "tickets", "url": "http://127.0.0.1:1/mcp",
                    "headers": {"X-Team": "a"}, "bearerEnv": "PATH", "timeout": 2500,
                    "startupTimeout": 100, "needsApproval": true}),
            Dialect::Node,
        )
        .unwrap();
        assert_eq!(s.name(), "tickets");
    }

    #[test]
    fn errors_name_the_setting_as_written() {
        assert!(
            error(json!({"name": "f", "comand": "x"}), Dialect::Python)
                .starts_with("mcp server \"f\": unknown setting \"comand\" (known: name, command,"),
        );
        assert!(
            error(json!({"name": "f", "inherit_env": true}), Dialect::Node).contains(
                "unknown setting \"inherit_env\" (known: name, command, args, env, inheritEnv,"
            )
        );
        assert_eq!(
            error(
                json!({"name": "f", "command": "x", "timeout": -1}),
                Dialect::Python
            ),
            "mcp server \"f\": timeout: expected a positive number of seconds, got -1"
        );
        assert_eq!(
            error(
                json!({"name": "f", "command": "x", "startupTimeout": "soon"}),
                Dialect::Node
            ),
            "mcp server \"f\": startupTimeout: expected a positive number of milliseconds, got \"soon\""
        );
        assert!(
            error(
                json!({"name": "f", "command": "x", "args": "-v"}),
                Dialect::Python
            )
            .starts_with(
                "mcp server \"f\": args: invalid type: string \"-v\", expected a sequence"
            ),
        );
        assert!(
            error(json!({"command": "x"}), Dialect::Node)
                .starts_with("mcp server: name is required")
        );
        assert!(error(json!({"name": "f"}), Dialect::Python).starts_with("mcp server \"f\": "));
        assert!(
            error(json!(["f"]), Dialect::Python)
                .starts_with("mcp server: expected a dict of settings")
        );
    }
}
