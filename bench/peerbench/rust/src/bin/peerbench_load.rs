//! Drives `parlance serve` from outside, as its clients would: `POST
//! /v1/runs` with the benchmark's task (the server's agent does the model
//! and tool calls), `--concurrency` runs in flight, stateless or each slot
//! on a thread of its own (`--threads`). With `--server-pid`, reads the
//! server's own CPU time and peak RSS from /proc, so the figures are the
//! server's alone, not the client's or the mock's.
//!
//! Prints one line `LOAD_RESULT {json}`: runs, ok_runs, wall_s, runs_per_s,
//! lat_ms {p50,p99,max}, and with a pid server_cpu_per_run_ms,
//! server_sys_share (the part of that CPU time spent in the kernel),
//! server_peak_rss_kb, server_rss_before_kb, and the server's resident
//! memory when the last run ended split into server_rss_anon_kb (heap,
//! stacks: what the runs hold) and server_rss_file_kb (the mapped binary
//! and libraries).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use clap::Parser;
use parlance_peerbench as bench;
use serde_json::{Value, json};

#[derive(Parser, Debug)]
#[command(about = "A load generator for parlance serve")]
struct Args {
    /// The server's base URL.
    #[arg(long)]
    url: String,
    /// The configured agent to run.
    #[arg(long, default_value = "orders")]
    agent: String,
    #[arg(long, default_value_t = 1000)]
    runs: usize,
    #[arg(long, default_value_t = 100)]
    concurrency: usize,
    #[arg(long, default_value_t = 10)]
    warmup: usize,
    /// Runs on stored threads, instead of stateless: each slot has threads
    /// of its own and takes them in turn, so no two runs ever ask for the
    /// same thread at once.
    #[arg(long)]
    threads: bool,
    /// With --threads: about this many runs per thread (threads are made
    /// up front, at least one per slot), so that a thread's history, which
    /// every run of it reads and sends to the model, stays as long however
    /// many runs the load has.
    #[arg(long, default_value_t = 3)]
    runs_per_thread: usize,
    /// The server's process id, for its CPU time and memory.
    #[arg(long)]
    server_pid: Option<u32>,
}

/// The server's CPU seconds so far (user, system), all threads.
fn server_cpu(pid: u32) -> Result<(f64, f64), String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| e.to_string())?;
    // Fields after the command's closing parenthesis; utime and stime are
    // the 14th and 15th of the whole line.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Ok((ticks(11) / hz, ticks(12) / hz))
}

/// A field of /proc/PID/status in KiB (VmHWM, VmRSS, RssAnon, RssFile).
fn server_mem_kb(pid: u32, field: &str) -> i64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix(field)?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

struct Client {
    http: reqwest::Client,
    url: String,
    agent: String,
}

impl Client {
    async fn post(&self, path: &str, body: Value) -> Result<Value, String> {
        let response = self
            .http
            .post(format!("{}{path}", self.url))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| format!("POST {path}: {e}"))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| format!("POST {path}: {e}"))?;
        if !status.is_success() {
            return Err(format!("POST {path}: {status}: {text}"));
        }
        serde_json::from_str(&text).map_err(|e| format!("POST {path}: {e}: {text}"))
    }

    /// One run; whether it completed with every order in its answer.
    async fn run(&self, thread: Option<&str>) -> Result<bool, String> {
        let mut body = json!({"agent": self.agent, "input": bench::PROMPT});
        if let Some(id) = thread {
            body["thread_id"] = json!(id);
        }
        let answer = self.post("/v1/runs", body).await?;
        let text = answer["messages"].to_string();
        Ok(answer["status"] == "completed" && bench::answer_ok(&text))
    }
}

async fn load(args: Args) -> Result<Value, String> {
    parlance::providers::transport::install_crypto();
    let http = reqwest::Client::builder()
        .build()
        .map_err(|e| e.to_string())?;
    let client = Arc::new(Client {
        http,
        url: args.url.trim_end_matches('/').to_string(),
        agent: args.agent.clone(),
    });
    let slots = args.concurrency.max(1);
    // Slot s owns threads s, s + slots, s + 2 slots...
    let mut threads = Vec::new();
    if args.threads {
        let per_slot = args
            .runs
            .div_ceil(args.runs_per_thread.max(1))
            .div_ceil(slots)
            .max(1);
        for _ in 0..slots * per_slot {
            let thread = client.post("/v1/threads", json!({})).await?;
            let id = thread["id"]
                .as_str()
                .ok_or(format!("a thread without an id: {thread}"))?;
            threads.push(id.to_string());
        }
    }
    for i in 0..args.warmup {
        let thread = threads.get(i % slots.max(1)).map(String::as_str);
        if !client.run(thread).await? {
            return Err("a warm-up run did not complete with every order".into());
        }
    }
    let cpu0 = args.server_pid.map(server_cpu).transpose()?;
    let rss_before = args.server_pid.map_or(0, |p| server_mem_kb(p, "VmRSS:"));
    let next = Arc::new(AtomicUsize::new(0));
    let wall = Instant::now();
    let mut tasks = Vec::new();
    for slot in 0..slots {
        let (client, next, runs) = (client.clone(), next.clone(), args.runs);
        let own: Vec<String> = threads.iter().skip(slot).step_by(slots).cloned().collect();
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            let mut turn = 0;
            while next.fetch_add(1, Ordering::Relaxed) < runs {
                let thread = (!own.is_empty()).then(|| own[turn % own.len()].as_str());
                turn += 1;
                let t = Instant::now();
                let ok = client.run(thread).await?;
                out.push((t.elapsed().as_secs_f64() * 1e3, ok));
            }
            Ok::<_, String>(out)
        }));
    }
    let mut latencies = Vec::with_capacity(args.runs);
    let mut ok_runs = 0;
    for task in tasks {
        for (latency, ok) in task.await.map_err(|e| e.to_string())?? {
            latencies.push(latency);
            ok_runs += usize::from(ok);
        }
    }
    let wall = wall.elapsed().as_secs_f64();
    // Read at once, while the server still holds its connections.
    let (rss_anon_end, rss_file_end) = args.server_pid.map_or((0, 0), |p| {
        (server_mem_kb(p, "RssAnon:"), server_mem_kb(p, "RssFile:"))
    });
    latencies.sort_by(f64::total_cmp);
    let n = args.runs.max(1) as f64;
    let mut out = json!({
        "runs": args.runs, "ok_runs": ok_runs, "concurrency": slots, "threads": args.threads,
        "wall_s": wall, "runs_per_s": n / wall,
        "lat_ms": {"p50": bench::percentile(&latencies, 50.0),
                   "p99": bench::percentile(&latencies, 99.0),
                   "max": latencies.last().copied().unwrap_or(0.0)},
    });
    if let (Some(pid), Some((user0, sys0))) = (args.server_pid, cpu0) {
        let (user, sys) = server_cpu(pid)?;
        let (user, sys) = (user - user0, sys - sys0);
        out["server_cpu_per_run_ms"] = json!((user + sys) / n * 1e3);
        out["server_sys_share"] = json!(if user + sys > 0.0 {
            sys / (user + sys)
        } else {
            0.0
        });
        out["server_peak_rss_kb"] = json!(server_mem_kb(pid, "VmHWM:"));
        out["server_rss_before_kb"] = json!(rss_before);
        out["server_rss_anon_kb"] = json!(rss_anon_end);
        out["server_rss_file_kb"] = json!(rss_file_end);
    }
    Ok(out)
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    bench::raise_open_files_limit();
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
        .and_then(|rt| rt.block_on(load(args)));
    match result {
        Ok(out) => {
            println!("LOAD_RESULT {out}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("peerbench-load: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
