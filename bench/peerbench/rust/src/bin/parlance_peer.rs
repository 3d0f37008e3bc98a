//! Parlance's peer for peerbench: the benchmark's task run by Parlance's
//! own agent loop (`Agent::run`), with the OpenAI Chat provider pointed at
//! `--base-url`. Flags and the `PEERBENCH_RESULT {json}` line follow
//! peerbench's peer contract (bench/peerbench/README.md).
//!
//! Beyond the contract, seq/conc print `rss_before_kb` (resident memory
//! after the warm-up) so that memory per run in flight can be read off a
//! run with many in flight: (`self_maxrss_kb` - `rss_before_kb`) / C.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use parlance::providers::Provider;
use parlance::{Agent, JsonSchema, Tool, ToolError, json};
use parlance_peerbench as bench;
use serde::Deserialize;
use serde_json::Value;

/// The allocator, chosen by `PEER_ALLOCATOR` when the process starts:
/// `mimalloc` (what the `parlance` binary uses), or the system's (glibc's,
/// the default, so that peerbench compares like with like: the other
/// peers run on their runtimes' usual allocators). With thousands of runs
/// in flight glibc's malloc takes up to 40 % of the process's CPU
/// (docs/performance.md); `bench/peerbench/scale --allocators` runs both.
#[global_allocator]
static ALLOCATOR: Chosen = Chosen;

struct Chosen;

/// 0: not read yet; 1: the system's; 2: mimalloc. Read at the first
/// allocation, before any other, and never changed: whatever allocated a
/// block frees it.
static CHOICE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

fn mimalloc() -> bool {
    match CHOICE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            // SAFETY: getenv only reads the environment (it does not
            // allocate); the name is a NUL-terminated literal, and the value,
            // when there is one, a NUL-terminated string.
            let chosen = unsafe {
                let value = libc::getenv(c"PEER_ALLOCATOR".as_ptr());
                !value.is_null() && std::ffi::CStr::from_ptr(value) == c"mimalloc"
            };
            CHOICE.store(if chosen { 2 } else { 1 }, Ordering::Relaxed);
            chosen
        }
    }
}

// SAFETY: every call goes to the one allocator chosen for the whole
// process, which upholds GlobalAlloc's contract itself.
unsafe impl std::alloc::GlobalAlloc for Chosen {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if mimalloc() {
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        } else {
            unsafe { std::alloc::System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if mimalloc() {
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        } else {
            unsafe { std::alloc::System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        if mimalloc() {
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        } else {
            unsafe { std::alloc::System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        if mimalloc() {
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, size) }
        } else {
            unsafe { std::alloc::System.realloc(ptr, layout, size) }
        }
    }
}

#[derive(Parser, Debug)]
#[command(about = "Parlance's peerbench peer")]
struct Args {
    /// The OpenAI base URL, including /v1.
    #[arg(long, default_value = "http://127.0.0.1:8011/v1")]
    base_url: String,
    #[arg(long, value_enum)]
    mode: Mode,
    /// Timed runs (seq, conc).
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Runs in flight at most (conc).
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Warm-up runs before timing (seq, conc).
    #[arg(long, default_value_t = 5)]
    warmup: usize,
    /// Stream every model call (the agent's event stream).
    #[arg(long)]
    stream: bool,
    /// The tool sleeps this long (without blocking) before answering.
    #[arg(long, default_value_t = 0.0)]
    tool_sleep_ms: f64,
    /// Speak HTTP/2 to the mock (h2c, prior knowledge): many runs share a
    /// connection, as they do with real providers over TLS (ALPN h2).
    /// Not part of peerbench's contract: its Python mock speaks HTTP/1.1.
    #[arg(long)]
    http2: bool,
    /// With --http2: this many connections, taken in turn (a server takes a
    /// bounded number of requests at once on one connection: the mock, like
    /// hyper's default, 200).
    #[arg(long, default_value_t = 1)]
    http2_connections: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
enum Mode {
    Import,
    Once,
    Seq,
    Conc,
}

/// The tool's arguments: unknown keys are refused, as the task asks.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "parlance::schemars")]
struct GetOrder {
    order_id: String,
}

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MAX_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

fn build_agent(args: &Args) -> Result<Agent, String> {
    let mut model = Provider::OPENAI
        .model(bench::MODEL)
        .base_url(args.base_url.trim_end_matches('/'))
        .api_key("sk-mock");
    if args.http2 {
        parlance::providers::transport::install_crypto();
        let clients = (0..args.http2_connections.max(1))
            .map(|_| reqwest::Client::builder().http2_prior_knowledge().build())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        model = model.http_clients(clients);
    }
    let model = model.build().map_err(|e| e.to_string())?;
    let sleep = Duration::from_secs_f64(args.tool_sleep_ms.max(0.0) / 1000.0);
    let get_order = Tool::new(
        "get_order",
        bench::TOOL_DESCRIPTION,
        move |a: GetOrder| async move {
            CALLS.fetch_add(1, Ordering::Relaxed);
            let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
            MAX_IN_FLIGHT.fetch_max(now, Ordering::SeqCst);
            if !sleep.is_zero() {
                tokio::time::sleep(sleep).await;
            }
            IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
            let status = bench::order_status(&a.order_id);
            Ok::<_, ToolError>(json!({
                "order_id": a.order_id, "status": status, "total_eur": 42.5, "items": 2
            }))
        },
    );
    Agent::builder(model)
        .instructions(bench::SYSTEM)
        .tool(get_order)
        .build()
        .map_err(|e| e.to_string())
}

/// One run of the task; the answer's text.
async fn run_once(agent: &Agent, stream: bool) -> Result<String, String> {
    let response = if stream {
        agent.run(bench::PROMPT).stream().response().await
    } else {
        agent.run(bench::PROMPT).await
    };
    let response = response.into_result().map_err(|e| e.to_string())?;
    Ok(response.text())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Warm-up, then the timed runs; their figures.
async fn timed(agent: Arc<Agent>, args: &Args) -> Result<Value, String> {
    let mut first_run_ms = 0.0;
    for i in 0..args.warmup.max(1) {
        let t = Instant::now();
        let text = run_once(&agent, args.stream).await?;
        if i == 0 {
            first_run_ms = ms(t.elapsed());
            if !bench::answer_ok(&text) {
                return Err(format!("the first answer misses an order: {text:?}"));
            }
        }
    }
    MAX_IN_FLIGHT.store(0, Ordering::SeqCst);
    CALLS.store(0, Ordering::SeqCst);
    let rss_before_kb = bench::rss_now_kb();
    let (cpu0, wall0) = (bench::cpu_seconds(), Instant::now());
    let mut latencies = Vec::with_capacity(args.runs);
    let mut ok_runs = 0usize;
    if args.mode == Mode::Seq {
        for _ in 0..args.runs {
            let t = Instant::now();
            let text = run_once(&agent, args.stream).await?;
            latencies.push(ms(t.elapsed()));
            ok_runs += usize::from(bench::answer_ok(&text));
        }
    } else {
        // `concurrency` workers, each starting its next run as soon as the
        // last ends: at most that many runs in flight and nothing else
        // held for the runs still to come (a task per run, spawned up
        // front, would count as memory per run in flight).
        let next = Arc::new(AtomicUsize::new(0));
        let mut workers = Vec::with_capacity(args.concurrency.max(1));
        for _ in 0..args.concurrency.max(1) {
            let (agent, next, stream, runs) = (agent.clone(), next.clone(), args.stream, args.runs);
            workers.push(tokio::spawn(async move {
                let mut done = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < runs {
                    let t = Instant::now();
                    let text = run_once(&agent, stream).await?;
                    done.push((ms(t.elapsed()), bench::answer_ok(&text)));
                }
                Ok::<_, String>(done)
            }));
        }
        for worker in workers {
            for (latency, ok) in worker.await.map_err(|e| e.to_string())?? {
                latencies.push(latency);
                ok_runs += usize::from(ok);
            }
        }
    }
    let wall = wall0.elapsed().as_secs_f64();
    let cpu = bench::cpu_seconds() - cpu0;
    latencies.sort_by(f64::total_cmp);
    let n = args.runs.max(1) as f64;
    Ok(json!({
        "runs": args.runs,
        "ok_runs": ok_runs,
        "first_run_ms": first_run_ms,
        "wall_s": wall,
        "cpu_s": cpu,
        "runs_per_s": n / wall,
        "per_run_ms": wall / n * 1e3,
        "cpu_per_run_ms": cpu / n * 1e3,
        "lat_ms": {
            "mean": latencies.iter().sum::<f64>() / n,
            "p50": bench::percentile(&latencies, 50.0),
            "p90": bench::percentile(&latencies, 90.0),
            "p99": bench::percentile(&latencies, 99.0),
            "max": latencies.last().copied().unwrap_or(0.0),
        },
        "max_tools_in_flight": MAX_IN_FLIGHT.load(Ordering::SeqCst),
        "tool_calls": CALLS.load(Ordering::SeqCst),
        "rss_before_kb": rss_before_kb,
    }))
}

async fn measure(args: &Args, start: Instant) -> Result<Value, String> {
    let agent = Arc::new(build_agent(args)?);
    let mut out = json!({ "import_s": start.elapsed().as_secs_f64() });
    let figures = match args.mode {
        Mode::Import => json!({}),
        Mode::Once => {
            let t = Instant::now();
            let text = run_once(&agent, args.stream).await?;
            json!({
                "run_ms": ms(t.elapsed()),
                "ok": bench::answer_ok(&text),
                "answer": text,
                "max_tools_in_flight": MAX_IN_FLIGHT.load(Ordering::SeqCst),
                "tool_calls": CALLS.load(Ordering::SeqCst),
            })
        }
        Mode::Seq | Mode::Conc => timed(agent, args).await?,
    };
    if let (Value::Object(out), Value::Object(figures)) = (&mut out, figures) {
        out.extend(figures);
    }
    Ok(out)
}

fn main() -> std::process::ExitCode {
    let start = Instant::now();
    let args = Args::parse();
    bench::raise_open_files_limit();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("parlance-peer: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(measure(&args, start)) {
        Ok(mut out) => {
            out["peer"] = json!("parlance-rs");
            out["mode"] = json!(format!("{:?}", args.mode).to_lowercase());
            out["stream"] = json!(args.stream);
            out["http2"] = json!(args.http2);
            out["allocator"] = json!(if mimalloc() { "mimalloc" } else { "system" });
            out["versions"] = json!({ "parlance-ai": env!("CARGO_PKG_VERSION") });
            out["self_maxrss_kb"] = json!(bench::max_rss_kb());
            println!("PEERBENCH_RESULT {out}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("parlance-peer: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
