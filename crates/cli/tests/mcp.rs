//! MCP servers configured in `parlance serve`'s TOML (`[[mcp]]`, named by
//! an agent's `mcp = [...]`): the test server (testdata/mcp/server.py, the
//! official Python SDK, installed by scripts/mcp-test-server) is started
//! by the first run that needs it and stopped with the server.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::replay::ReplayServer;
use common::*;
use serde_json::json;

/// The Python with the MCP SDK, or `None` (the test passes saying why,
/// unless `PARLANCE_REQUIRE_MCP=1`).
fn python() -> Option<String> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = std::env::var("PARLANCE_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo.join("target/mcp-venv/bin/python"));
    if path.exists() {
        return Some(path.display().to_string());
    }
    assert!(
        std::env::var("PARLANCE_REQUIRE_MCP").as_deref() != Ok("1"),
        "PARLANCE_REQUIRE_MCP=1 but {} is missing: run scripts/mcp-test-server",
        path.display()
    );
    eprintln!(
        "skipped: {} is missing (run scripts/mcp-test-server)",
        path.display()
    );
    None
}

fn script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/mcp/server.py")
        .display()
        .to_string()
}

fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_mcp_server_serves_an_agent_and_stops_with_the_server() {
    let Some(py) = python() else { return };
    let provider = ReplayServer::start(vec![
        chat(calls(&[
            ("c1", "add", json!({"a": 2, "b": 3})),
            ("c2", "add", json!({"a": "two", "b": 3})),
            ("c3", "pid", json!({})),
        ])),
        chat(text("5, and my pid.")),
    ])
    .await;
    let dir = temp_dir();
    let log = dir.join("calls.jsonl");
    let tables = format!(
        "[[mcp]]\nname = \"py\"\ncommand = {py:?}\nargs = [{:?}, \"--log\", {:?}]\ntimeout_ms = 20000\n",
        script(),
        log.display().to_string()
    );
    let extra = Extra {
        agent: "mcp = [\"py\"]",
        tables: &tables,
        ..Extra::default()
    };
    let cfg = config_with(&dir, &provider.url, "http://127.0.0.1:9", "", &extra);
    let server = start(&cfg);
    assert!(
        !log.exists(),
        "the MCP server started before a run needed it"
    );

    let (status, r) = post(
        &server.url,
        "/v1/runs",
        &json!({"agent": "support", "input": "2 + 3?"}),
        None,
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["status"], "completed", "{r}");
    let sent = &provider.received()[0].body["tools"];
    let names: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"lookup_order") && names.contains(&"add"),
        "{names:?}"
    );
    let results: Vec<&serde_json::Value> = r["messages"][2]["content"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    // status ok is left out of the JSON
    assert!(results[0]["tool_result"].get("status").is_none(), "{r}");
    assert_eq!(results[0]["tool_result"]["content"][0]["json"]["result"], 5);
    assert_eq!(results[1]["tool_result"]["status"], "invalid_arguments");
    let pid = results[2]["tool_result"]["content"][0]["json"]["result"]
        .as_u64()
        .unwrap();
    let calls = std::fs::read_to_string(&log).unwrap();
    assert_eq!(calls.lines().count(), 2, "{calls}");

    // SIGTERM: the server stops its MCP servers on the way out.
    assert!(alive(pid));
    let mut server = server;
    Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    server.child.wait().unwrap();
    for _ in 0..100 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the MCP server {pid} outlived parlance serve");
}

#[test]
fn an_agent_naming_an_unknown_mcp_server_is_refused_at_start() {
    let dir = temp_dir();
    let extra = Extra {
        agent: "mcp = [\"nope\"]",
        tables: "[[mcp]]\nname = \"py\"\ncommand = \"python3\"\n",
        ..Extra::default()
    };
    let cfg = config_with(&dir, "http://127.0.0.1:9", "http://127.0.0.1:9", "", &extra);
    let out = Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(["serve", "--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("agents.support.mcp: no [[mcp]] server named \"nope\" in the configuration"),
        "{err}"
    );

    let extra = Extra {
        tables: "[[mcp]]\nname = \"py\"\nurl = \"ftp://x\"\n",
        ..Extra::default()
    };
    let cfg = config_with(&dir, "http://127.0.0.1:9", "http://127.0.0.1:9", "", &extra);
    let out = Command::new(env!("CARGO_BIN_EXE_parlance"))
        .args(["serve", "--config", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "mcp[0]: mcp server \"py\": url: expected an http:// or https:// URL, got \"ftp://x\""
        ),
        "{err}"
    );
}
