//! The peer and the mock, as peerbench runs them: real processes over
//! 127.0.0.1. The peer must do the task (three concurrent, validated tool
//! calls, two model requests per run, every order named) and print the
//! contract's result line; the mock must check the tool results it gets.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// The mock on a free port, killed when dropped.
struct MockProcess {
    child: Child,
    addr: String,
}

impl MockProcess {
    fn start(extra: &[&str]) -> MockProcess {
        let mut child = Command::new(env!("CARGO_BIN_EXE_peerbench-mock"))
            .args(["--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the mock starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the mock prints its address");
        let addr = line
            .trim()
            .rsplit("http://")
            .next()
            .expect("an address")
            .to_string();
        MockProcess { child, addr }
    }

    /// One request on its own connection; the whole answer, head and body.
    fn http(&self, method: &str, path: &str, body: &str) -> String {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("send");
        let mut text = String::new();
        s.read_to_string(&mut text).expect("read");
        text
    }

    fn get(&self, path: &str) -> Value {
        let text = self.http("GET", path, "");
        let body = text.split("\r\n\r\n").nth(1).expect("a body");
        serde_json::from_str(body).expect("JSON")
    }
}

impl Drop for MockProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A program's result line (`PREFIX {json}`), once it exited successfully.
fn result_line(out: &std::process::Output, prefix: &str, what: &str) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what} failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no result line in {stdout:?}"));
    serde_json::from_str(line).expect("the result line is JSON")
}

/// Runs the peer; its result line's JSON.
fn peer(mock: &MockProcess, args: &[&str]) -> Value {
    peer_on(mock, args, "system")
}

/// Runs the peer on this allocator (`PEER_ALLOCATOR`).
fn peer_on(mock: &MockProcess, args: &[&str], allocator: &str) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_parlance-peer"))
        .args(["--base-url", &format!("http://{}/p/test/v1", mock.addr)])
        .args(args)
        .env("PEER_ALLOCATOR", allocator)
        .output()
        .expect("the peer runs");
    result_line(&out, "PEERBENCH_RESULT ", &format!("peer {args:?}"))
}

#[test]
fn one_run_calls_three_tools_at_once_and_names_every_order() {
    let mock = MockProcess::start(&[]);
    let r = peer(&mock, &["--mode", "once", "--tool-sleep-ms", "100"]);
    assert_eq!(r["peer"], "parlance-rs");
    assert_eq!(r["mode"], "once");
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["tool_calls"], 3);
    assert_eq!(
        r["max_tools_in_flight"], 3,
        "the tools ran one after another"
    );
    let answer = r["answer"].as_str().expect("an answer");
    assert!(answer.contains("A-1002=processing"), "{answer}");
    assert!(r["run_ms"].as_f64().expect("run_ms") >= 100.0);
    let stats = mock.get("/_stats");
    assert_eq!(stats["requests"], 2, "{stats}");
    assert_eq!(stats["tool_results_ok"], 1, "{stats}");
    assert_eq!(stats["tool_results_bad"], 0, "{stats}");
}

#[test]
fn sequential_and_concurrent_runs_report_the_contracts_figures() {
    let mock = MockProcess::start(&["--latency-ms", "5"]);
    let seq = peer(&mock, &["--mode", "seq", "--runs", "4", "--warmup", "1"]);
    assert_eq!(seq["runs"], 4);
    assert_eq!(seq["ok_runs"], 4);
    assert_eq!(seq["tool_calls"], 12);
    for key in [
        "wall_s",
        "cpu_s",
        "runs_per_s",
        "per_run_ms",
        "cpu_per_run_ms",
        "first_run_ms",
    ] {
        assert!(seq[key].as_f64().is_some_and(|v| v > 0.0), "{key} in {seq}");
    }
    let lat = &seq["lat_ms"];
    assert!(lat["p50"].as_f64() <= lat["p99"].as_f64(), "{lat}");
    assert!(lat["p99"].as_f64() <= lat["max"].as_f64(), "{lat}");

    let conc = peer(
        &mock,
        &[
            "--mode",
            "conc",
            "--runs",
            "40",
            "--concurrency",
            "20",
            "--warmup",
            "1",
        ],
    );
    assert_eq!(conc["ok_runs"], 40, "{conc}");
    assert_eq!(conc["tool_calls"], 120);
    assert!(conc["rss_before_kb"].as_i64().is_some_and(|v| v > 0));
    assert!(conc["self_maxrss_kb"].as_i64() >= conc["rss_before_kb"].as_i64());
    let stats = mock.get("/_stats");
    // Two requests per run (the warm-ups included), all checked good.
    assert_eq!(stats["requests"], 2 * (4 + 1 + 40 + 1), "{stats}");
    assert_eq!(stats["tool_results_bad"], 0, "{stats}");
    assert!(stats["max_in_flight"].as_u64() > Some(1), "{stats}");
}

#[test]
fn streamed_runs_stream_every_model_call() {
    let mock = MockProcess::start(&[]);
    let r = peer(&mock, &["--mode", "once", "--stream"]);
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["stream"], true);
    let stats = mock.get("/_stats");
    assert_eq!(stats["stream_requests"], 2, "{stats}");
    assert_eq!(stats["tool_results_ok"], 1, "{stats}");
}

#[test]
fn an_invalid_argument_goes_back_to_the_model_not_to_the_tool() {
    let mock = MockProcess::start(&[]);
    let out = Command::new(env!("CARGO_BIN_EXE_parlance-peer"))
        .args([
            "--base-url",
            &format!("http://{}/p/t/s/badargs/v1", mock.addr),
        ])
        .args(["--mode", "once"])
        .output()
        .expect("the peer runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("PEERBENCH_RESULT "))
        .expect("a result line");
    let r: Value = serde_json::from_str(line).expect("JSON");
    // Only the two valid calls reached the tool; the model got all three results.
    assert_eq!(r["tool_calls"], 2, "{r}");
    let stats = mock.get("/_stats");
    assert_eq!(stats["tool_results_ok"], 1, "{stats}");
}

#[test]
fn a_peer_without_a_mode_says_what_is_missing() {
    let out = Command::new(env!("CARGO_BIN_EXE_parlance-peer"))
        .output()
        .expect("the peer runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--mode"), "{err}");
}

#[test]
fn the_mock_refuses_a_body_that_is_not_json_and_unknown_routes() {
    let mock = MockProcess::start(&[]);
    let text = mock.http("POST", "/v1/chat/completions", "{not json");
    assert!(text.starts_with("HTTP/1.1 400"), "{text}");
    assert!(text.contains("not JSON"), "{text}");
    let text = mock.http("GET", "/nope", "");
    assert!(text.starts_with("HTTP/1.1 404"), "{text}");
}

#[test]
fn the_mock_answers_the_tool_over_http_and_counts_it() {
    let mock = MockProcess::start(&[]);
    let post = |body: &str| mock.http("POST", "/tools/get_order", body);
    let ok = post(r#"{"order_id": "A-1003"}"#);
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    let body: Value =
        serde_json::from_str(ok.split("\r\n\r\n").nth(1).expect("body")).expect("JSON");
    assert_eq!(body["status"], "delivered");
    assert_eq!(body["order_id"], "A-1003");
    let bad = post(r#"{"order_id": 12345}"#);
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    assert!(bad.contains("order_id"), "{bad}");
    assert_eq!(mock.get("/_stats")["tool_calls"], 2);
}

#[test]
fn one_http2_connection_carries_the_mocks_stream_limit_and_more_connections_carry_more() {
    // Each answer waits 100 ms, so 16 runs started at once overlap.
    let mock = MockProcess::start(&["--latency-ms", "100", "--max-concurrent-streams", "4"]);
    let conc = |connections: &str| {
        let r = peer(
            &mock,
            &[
                "--mode",
                "conc",
                "--runs",
                "16",
                "--concurrency",
                "16",
                "--warmup",
                "1",
                "--http2",
                "--http2-connections",
                connections,
            ],
        );
        assert_eq!(r["ok_runs"], 16, "{r}");
        let stats = mock.get("/_stats");
        mock.http("POST", "/_reset", "");
        stats["max_in_flight"].as_u64().expect("max_in_flight")
    };
    let one = conc("1");
    assert!(
        (2..=4).contains(&one),
        "one connection, at most 4 streams: {one} in flight"
    );
    let three = conc("3");
    assert!(
        (5..=12).contains(&three),
        "three connections of 4 streams: {three} in flight"
    );
}

/// The hand-written server the server bench compares `parlance serve`
/// with does the same task: two model requests and three tool requests
/// over HTTP per run, every order named, driven by the load generator,
/// which reads the server's CPU and memory from /proc.
#[test]
fn the_hand_written_server_does_the_task_under_the_load_generator() {
    let mock = MockProcess::start(&[]);
    let mut server = Command::new(env!("CARGO_BIN_EXE_peerbench-raw-server"))
        .args(["--port", "0", "--mock", &format!("http://{}", mock.addr)])
        .stdout(Stdio::piped())
        .spawn()
        .expect("the hand-written server starts");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the server prints its address");
    let url = line
        .trim()
        .rsplit(' ')
        .next()
        .expect("an address")
        .to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_peerbench-load"))
        .args([
            "--url",
            &url,
            "--runs",
            "20",
            "--concurrency",
            "5",
            "--warmup",
            "2",
        ])
        .args(["--server-pid", &server.id().to_string()])
        .output()
        .expect("the load generator runs");
    let _ = server.kill();
    let _ = server.wait();
    let r = result_line(&out, "LOAD_RESULT ", "the load generator");
    assert_eq!(r["ok_runs"], 20, "{r}");
    assert!(
        r["server_cpu_per_run_ms"].as_f64().expect("CPU") > 0.0,
        "{r}"
    );
    assert!(r["server_rss_anon_kb"].as_i64().expect("anon") > 0, "{r}");
    assert!(r["server_rss_file_kb"].as_i64().expect("file") > 0, "{r}");
    let share = r["server_sys_share"].as_f64().expect("kernel share");
    assert!((0.0..=1.0).contains(&share), "{r}");
    let stats = mock.get("/_stats");
    // 22 runs (2 warm-up): two chat requests and three tool calls each.
    assert_eq!(stats["requests"], 44, "{stats}");
    assert_eq!(stats["tool_calls"], 66, "{stats}");
    assert_eq!(stats["tool_results_ok"], 22, "{stats}");
}

/// The peer runs on the system's allocator unless `PEER_ALLOCATOR=mimalloc`
/// (the scale bench runs both), and says which in its result line.
#[test]
fn the_peer_says_which_allocator_it_ran_on() {
    let mock = MockProcess::start(&[]);
    let mut default = Command::new(env!("CARGO_BIN_EXE_parlance-peer"));
    default
        .args(["--base-url", &format!("http://{}/v1", mock.addr)])
        .args(["--mode", "once"])
        .env_remove("PEER_ALLOCATOR");
    let r = result_line(
        &default.output().expect("the peer runs"),
        "PEERBENCH_RESULT ",
        "peer",
    );
    assert_eq!(r["allocator"], "system", "{r}");
    let r = peer_on(
        &mock,
        &["--mode", "conc", "--runs", "30", "--concurrency", "10"],
        "mimalloc",
    );
    assert_eq!(r["allocator"], "mimalloc", "{r}");
    assert_eq!(r["ok_runs"], 30, "{r}");
}
