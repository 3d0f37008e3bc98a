// peerbench peer for the npm package (parlance-ai, on the Rust core).
//
// Implements the harness's peer contract itself (flags, warm-up, timing,
// one `PEERBENCH_RESULT {json}` line), so that nothing outside this
// repository is imported: one prompt, the model asks for three parallel
// `get_order` calls (arguments validated by the Rust engine), the tools
// run on Node's main thread, the model answers. The package is resolved
// from PARLANCE_PEER_NODE_DIR (the packed tarball installed there by
// bench/peerbench/run). See README.md beside this file.
const T0 = performance.now(); // before the framework's import (as the harness's Node peers do)

import { createRequire } from "node:module";
import { join } from "node:path";

const dir = process.env.PARLANCE_PEER_NODE_DIR;
if (!dir) throw new Error("PARLANCE_PEER_NODE_DIR is not set (bench/peerbench/run sets it)");
const require = createRequire(join(dir, "package.json"));
const { Agent, OpenAI, tool, version } = require("parlance-ai");

const PROMPT = "What is the status of my orders A-1001, A-1002 and A-1003?";
const SYSTEM = "You are an order-status assistant. Use the get_order tool to look up orders.";
const MODEL = "gpt-4o-mini";
const API_KEY = "sk-mock";
const EXPECTED = ["A-1001", "A-1002", "A-1003"];
const STATUSES = { "A-1001": "shipped", "A-1002": "processing", "A-1003": "delivered" };
const track = { inFlight: 0, most: 0, calls: 0, sleepMs: 0 };

function parseArgs(argv) {
  const a = { mode: null, baseUrl: null, runs: 1, concurrency: 1, warmup: 5, stream: false, toolSleepMs: 0 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === "--base-url") a.baseUrl = argv[++i];
    else if (k === "--mode") a.mode = argv[++i];
    else if (k === "--runs") a.runs = Number.parseInt(argv[++i], 10);
    else if (k === "--concurrency") a.concurrency = Number.parseInt(argv[++i], 10);
    else if (k === "--warmup") a.warmup = Number.parseInt(argv[++i], 10);
    else if (k === "--stream") a.stream = true;
    else if (k === "--tool-sleep-ms") a.toolSleepMs = Number.parseFloat(argv[++i]);
    else throw new Error(`unknown argument ${k}`);
  }
  if (!a.baseUrl || !a.mode) throw new Error("--base-url and --mode are required");
  return a;
}

function build(args) {
  const getOrder = tool({
    name: "get_order",
    description: "Look up one order by its id and return its status.",
    parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
    execute: async ({ order_id }) => {
      track.calls++;
      track.inFlight++;
      track.most = Math.max(track.most, track.inFlight);
      try {
        if (track.sleepMs) await new Promise((resolve) => setTimeout(resolve, track.sleepMs));
        return { order_id, status: STATUSES[order_id] ?? "unknown", total_eur: 42.5, items: 2 };
      } finally {
        track.inFlight--;
      }
    },
  });
  const agent = new Agent({
    model: MODEL,
    provider: new OpenAI({ baseURL: args.baseUrl, apiKey: API_KEY }),
    instructions: SYSTEM,
    tools: [getOrder],
  });
  if (args.stream) {
    return async () => {
      for await (const e of agent.stream(PROMPT)) {
        if (e.type === "run_completed") return e.response.text;
      }
      throw new Error("the stream ended without run_completed");
    };
  }
  return async () => (await agent.run(PROMPT)).text;
}

const pct = (xs, p) => {
  if (!xs.length) return null;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.max(0, Math.round((p / 100) * (s.length - 1))))];
};
const ok = (t) => typeof t === "string" && EXPECTED.every((i) => t.includes(i));
const cpuS = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function drive(args, runOnce) {
  const out = {};
  if (args.mode === "import") return out;
  if (args.mode === "once") {
    const t = performance.now();
    const text = await runOnce();
    return { run_ms: performance.now() - t, ok: ok(text), answer: text, max_tools_in_flight: track.most, tool_calls: track.calls };
  }
  let firstMs = null;
  for (let i = 0; i < Math.max(1, args.warmup); i++) {
    const t = performance.now();
    const text = await runOnce();
    if (i === 0) {
      firstMs = performance.now() - t;
      if (!ok(text)) throw new Error(`peer answer check failed: ${JSON.stringify(text)}`);
    }
  }
  track.most = 0;
  track.calls = 0;
  const lat = [];
  let oks = 0;
  const one = async () => {
    const t = performance.now();
    const text = await runOnce();
    lat.push(performance.now() - t);
    oks += ok(text) ? 1 : 0;
  };
  const cpu0 = cpuS();
  const t0 = performance.now();
  if (args.mode === "seq") {
    for (let i = 0; i < args.runs; i++) await one();
  } else {
    let next = 0;
    const worker = async () => {
      while (next < args.runs) {
        next++;
        await one();
      }
    };
    await Promise.all(Array.from({ length: Math.min(args.concurrency, args.runs) }, worker));
  }
  const wall = (performance.now() - t0) / 1000;
  const cpu = cpuS() - cpu0;
  return {
    runs: args.runs, ok_runs: oks, first_run_ms: firstMs, wall_s: wall, cpu_s: cpu,
    runs_per_s: args.runs / wall, per_run_ms: (wall / args.runs) * 1000, cpu_per_run_ms: (cpu / args.runs) * 1000,
    lat_ms: { mean: lat.reduce((a, b) => a + b, 0) / lat.length, p50: pct(lat, 50), p90: pct(lat, 90), p99: pct(lat, 99), max: Math.max(...lat) },
    max_tools_in_flight: track.most, tool_calls: track.calls,
  };
}

const args = parseArgs(process.argv.slice(2));
track.sleepMs = args.toolSleepMs;
const runOnce = build(args);
const importS = (performance.now() - T0) / 1000; // import + agent construction
const result = await drive(args, runOnce);
Object.assign(result, {
  import_s: importS, peer: "parlance-node", mode: args.mode, stream: args.stream,
  versions: { node: process.version, "parlance-ai": version },
  self_maxrss_kb: process.resourceUsage().maxRSS,
});
process.stdout.write(`PEERBENCH_RESULT ${JSON.stringify(result)}\n`, () => process.exit(0));
