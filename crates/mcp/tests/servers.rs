//! An agent against a real MCP server (testdata/mcp/server.py, on the
//! official Python SDK from PyPI), over stdio and over streamable HTTP:
//! tools listed with their schemas, calls validated before they reach the
//! server, `isError`, images, timeouts, a server that dies mid-call, tools
//! that change, approvals, name clashes, lazy start and shutdown.

mod common;

use std::time::Duration;

use common::{CallLog, Transport, calls, python, results, says, server};
use parlance_agent::{Agent, Resume, Tool};
use parlance_format::{Block, Decision, DecisionKind, RunStatus, ToolStatus};
use parlance_mcp::McpServer;
use parlance_model::scripted::ScriptedModel;
use serde_json::json;

fn text(blocks: &[Block]) -> String {
    blocks
        .iter()
        .filter_map(Block::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

async fn listed_validated_and_run(transport: Transport) {
    let Some(py) = python() else { return };
    let log = CallLog::new();
    let (builder, _http) = server("tests", transport, &py, &log);
    let mcp = builder.timeout(Duration::from_millis(700)).build().unwrap();
    let model = ScriptedModel::new([]);
    model.push_step(Box::new(|request| {
        let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "add", "echo", "sleep", "fail", "pid", "die", "picture", "grow"
            ]
        );
        let add = &request.tools[0];
        assert_eq!(add.description.as_deref(), Some("Adds two integers."));
        assert_eq!(add.input_schema["properties"]["a"]["type"], "integer");
        assert_eq!(add.input_schema["required"], json!(["a", "b"]));
        Ok(calls(&[
            ("c1", "add", json!({"a": 2, "b": 3})),
            ("c2", "add", json!({"a": "two", "b": 3})),
            ("c3", "fail", json!({"message": "no such city"})),
            ("c4", "picture", json!({})),
            ("c5", "sleep", json!({"seconds": 30})),
        ]))
    }));
    model.push(calls(&[("c6", "echo", json!({"text": "still here"}))]));
    model.push(says("done"));
    let agent = Agent::builder(model.clone())
        .toolset(mcp.clone())
        .build()
        .unwrap();
    assert!(log.calls().is_empty(), "started before it was needed");

    let r = agent.run("go").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let res = results(&r);
    let statuses: Vec<ToolStatus> = res.iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        [
            ToolStatus::Ok,
            ToolStatus::InvalidArguments,
            ToolStatus::Error,
            ToolStatus::Ok,
            ToolStatus::Timeout,
            ToolStatus::Ok
        ]
    );
    // Structured content is the result.
    assert_eq!(
        serde_json::to_value(&res[0].content).unwrap(),
        json!([{"type": "json", "json": {"result": 5}}])
    );
    assert!(
        text(&res[1].content).contains("a: "),
        "{:?}",
        res[1].content
    );
    assert_eq!(
        text(&res[2].content),
        "Error executing tool fail: no such city"
    );
    assert_eq!(text(&res[3].content), "a 1x1 png");
    assert!(
        matches!(&res[3].content[1], Block::Image { image } if image.media_type.as_deref() == Some("image/png") && image.data.as_deref().is_some_and(|d| d.starts_with("iVBOR")))
    );
    assert_eq!(text(&res[5].content), "still here");

    // The invalid call never reached the server; the others did.
    let mut seen = log.tools();
    seen.sort();
    assert_eq!(seen, ["add", "echo", "fail", "picture", "sleep"]);
    assert!(log.calls().iter().all(|c| c["args"]["a"] != "two"));
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_tools_listed_validated_and_run() {
    listed_validated_and_run(Transport::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn http_tools_listed_validated_and_run() {
    listed_validated_and_run(Transport::Http).await;
}

async fn dies_mid_call(transport: Transport) {
    let Some(py) = python() else { return };
    let log = CallLog::new();
    let (builder, _http) = server("mortal", transport, &py, &log);
    let mcp = builder.build().unwrap();
    let model = ScriptedModel::new([
        calls(&[("c1", "die", json!({}))]),
        calls(&[("c2", "echo", json!({"text": "again"}))]),
        says("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .toolset(mcp.clone())
        .build()
        .unwrap();
    let r = agent.run("go").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let res = results(&r);
    assert_eq!(res[0].status, ToolStatus::ToolFailed, "{:?}", res[0]);
    let why = text(&res[0].content);
    assert!(why.contains("mortal"), "{why}");
    match transport {
        // The next model call started the server again.
        Transport::Stdio => {
            assert_eq!(res[1].status, ToolStatus::Ok, "{:?}", res[1]);
            assert_eq!(text(&res[1].content), "again");
            assert_eq!(log.tools(), ["die", "echo"]);
        }
        // Nobody starts an HTTP server again: its calls fail, saying so.
        Transport::Http => {
            assert_eq!(res[1].status, ToolStatus::ToolFailed, "{:?}", res[1]);
            assert!(text(&res[1].content).contains("mortal"));
            assert_eq!(log.tools(), ["die"]);
        }
    }
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_server_that_dies_mid_call() {
    dies_mid_call(Transport::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn http_server_that_dies_mid_call() {
    dies_mid_call(Transport::Http).await;
}

async fn tools_change(transport: Transport) {
    let Some(py) = python() else { return };
    let log = CallLog::new();
    let (builder, _http) = server("growing", transport, &py, &log);
    let mcp = builder.build().unwrap();
    let model = ScriptedModel::new([calls(&[("c1", "grow", json!({}))])]);
    model.push_step(Box::new(|request| {
        assert!(
            request.tools.iter().any(|t| t.name == "late"),
            "late not listed"
        );
        Ok(calls(&[("c2", "late", json!({}))]))
    }));
    model.push(says("done"));
    let agent = Agent::builder(model.clone())
        .toolset(mcp.clone())
        .build()
        .unwrap();
    let r = agent.run("go").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    let res = results(&r);
    assert_eq!(text(&res[1].content), "late tool", "{:?}", res[1]);
    assert!(!model.received()[0].tools.iter().any(|t| t.name == "late"));
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stdio_tools_list_changed_is_heard() {
    tools_change(Transport::Stdio).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn http_tools_list_changed_is_heard() {
    tools_change(Transport::Http).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_needs_approval_waits_then_runs() {
    let Some(py) = python() else { return };
    let log = CallLog::new();
    let (builder, _http) = server("careful", Transport::Stdio, &py, &log);
    let mcp = builder.needs_approval_for(["add"]).build().unwrap();
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "add", json!({"a": 1, "b": 1})),
            ("c2", "echo", json!({"text": "free"})),
        ]),
        says("done"),
    ]);
    let agent = Agent::builder(model.clone())
        .toolset(mcp.clone())
        .build()
        .unwrap();
    let paused = agent.run("go").await;
    assert_eq!(
        paused.status,
        RunStatus::RequiresApproval,
        "{:?}",
        paused.error
    );
    assert_eq!(log.tools(), ["echo"]);
    let d = Decision {
        tool_call_id: "c1".into(),
        digest: paused.pending[0].digest.clone(),
        decision: DecisionKind::Approved,
        arguments: None,
        reason: None,
        content: None,
    };
    let r = agent
        .resume(Resume {
            turns: vec![],
            paused,
            decisions: vec![d],
        })
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(log.tools(), ["echo", "add"]);
    mcp.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn names_two_servers_share_are_prefixed_with_the_server() {
    let Some(py) = python() else { return };
    let (one_log, two_log) = (CallLog::new(), CallLog::new());
    let one = server("one", Transport::Stdio, &py, &one_log)
        .0
        .build()
        .unwrap();
    let two = server("two", Transport::Stdio, &py, &two_log)
        .0
        .only(["add", "echo"])
        .build()
        .unwrap();
    let own = Tool::new(
        "echo",
        "The agent's own echo.",
        |_: serde_json::Value| async { Ok::<_, parlance_agent::ToolError>("own") },
    );
    let model = ScriptedModel::new([]);
    model.push_step(Box::new(|request| {
        let names: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "echo", "one_add", "one_echo", "sleep", "fail", "pid", "die", "picture", "grow",
                "two_add", "two_echo"
            ]
        );
        Ok(calls(&[
            ("c1", "one_add", json!({"a": 1, "b": 2})),
            ("c2", "two_echo", json!({"text": "to two"})),
            ("c3", "echo", json!({"text": "to me"})),
        ]))
    }));
    model.push(says("done"));
    let agent = Agent::builder(model.clone())
        .tool(own)
        .toolset(one.clone())
        .toolset(two.clone())
        .build()
        .unwrap();
    let r = agent.run("go").await;
    assert_eq!(r.status, RunStatus::Completed, "{:?}", r.error);
    assert_eq!(text(&results(&r)[2].content), "own");
    assert_eq!(one_log.tools(), ["add"]);
    assert_eq!(two_log.tools(), ["echo"]);
    agent.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_cannot_start_fails_the_run_naming_it() {
    let mcp = McpServer::stdio("ghost", "parlance-no-such-mcp-server")
        .build()
        .unwrap();
    let model = ScriptedModel::new([says("never")]);
    let agent = Agent::builder(model.clone()).toolset(mcp).build().unwrap();
    let r = agent.run("go").await;
    assert_eq!(r.status, RunStatus::Failed);
    let e = r.error.unwrap();
    assert_eq!(e.code, "tools_unavailable");
    assert!(
        e.message
            .starts_with("mcp server \"ghost\": could not start: parlance-no-such-mcp-server: "),
        "{}",
        e.message
    );
    assert!(model.received().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn http_without_the_right_token_is_refused() {
    let Some(py) = python() else { return };
    let log = CallLog::new();
    let http = common::http_server(&py, &log, Some("s3cret"));
    let mcp = McpServer::http("locked", http.url.clone())
        .bearer("wrong")
        .build()
        .unwrap();
    let model = ScriptedModel::new([says("never")]);
    let agent = Agent::builder(model.clone()).toolset(mcp).build().unwrap();
    let r = agent.run("go").await;
    let e = r.error.unwrap();
    assert_eq!(e.code, "tools_unavailable");
    assert!(
        e.message
            .starts_with("mcp server \"locked\": could not start"),
        "{}",
        e.message
    );
    assert!(log.tools().iter().all(|t| t == "refused-unauthorized"));
    assert!(!log.tools().is_empty());
}

fn alive(pid: u64) -> bool {
    // A zombie (exited, not yet reaped) is not alive.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

async fn wait_gone(pid: u64) {
    for _ in 0..100 {
        if !alive(pid) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("process {pid} still running");
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_and_drop_end_the_process() {
    let Some(py) = python() else { return };
    let log = CallLog::new();
    for how in ["shutdown", "drop"] {
        let mcp = server("short", Transport::Stdio, &py, &log)
            .0
            .build()
            .unwrap();
        let model = ScriptedModel::new([calls(&[("c1", "pid", json!({}))]), says("done")]);
        let agent = Agent::builder(model.clone()).toolset(mcp).build().unwrap();
        let r = agent.run("go").await;
        let Block::Json { json } = &results(&r)[0].content[0] else {
            panic!("{r:?}")
        };
        let pid = json["result"].as_u64().unwrap();
        assert!(alive(pid));
        if how == "shutdown" {
            agent.shutdown().await;
        } else {
            drop(agent);
        }
        wait_gone(pid).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_initialize_times_out_naming_it() {
    // `sleep` reads nothing and writes nothing: no MCP server at all.
    let mcp = McpServer::stdio("mute", "sleep")
        .args(["30"])
        .startup_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let model = ScriptedModel::new([says("never")]);
    let agent = Agent::builder(model.clone()).toolset(mcp).build().unwrap();
    let started = std::time::Instant::now();
    let r = agent.run("go").await;
    let e = r.error.unwrap();
    assert_eq!(e.code, "tools_unavailable");
    assert_eq!(
        e.message,
        "mcp server \"mute\": could not start: no answer to initialize within 300 ms"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(model.received().is_empty());
}
