// The user guide's TypeScript examples (docs/guide/examples/typescript,
// included by the pages of docs/guide), as a reader meets them: compiled
// by strict tsc against the installed package's types, then each run with
// node (its own process), against the local mock of the OpenAI API
// (OPENAI_BASE_URL) where the example names a provider's model. Each
// one's output is checked, and so is what it sent.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";
import { before, test } from "node:test";

import { localModelPath } from "parlance-ai";

import { afterTools, calls, startMock, text } from "./helpers/mock.mjs";
import { startServe } from "./helpers/serve.mjs";

const repo = process.env.PARLANCE_REPO;
assert.ok(repo, "PARLANCE_REPO names the repository (bindings/node/scripts/test sets it)");
const source = join(repo, "docs", "guide", "examples", "typescript");
// Beside the installed package, so that "parlance-ai" and "zod" resolve.
const work = join(process.cwd(), "guide");
const out = join(work, "out");

before(() => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(source, join(work, "src"), { recursive: true });
  writeFileSync(
    join(work, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        strict: true,
        skipLibCheck: false,
        outDir: "out",
        rootDir: "src",
        // Node's own types, from the package's development dependencies.
        typeRoots: [join(repo, "bindings", "node", "node_modules", "@types")],
        types: ["node"],
      },
      include: ["src/*.ts"],
    }),
  );
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const r = spawnSync(process.execPath, [tsc, "-p", join(work, "tsconfig.json")], { encoding: "utf8" });
  assert.equal(r.status, 0, `tsc refused the guide's examples:\n${r.stdout}${r.stderr}`);
});

/** Runs a compiled example with node, in a fresh folder; {code, stdout, stderr}. */
function run(name, mock, extra = {}) {
  const cwd = join(work, `run-${name}`);
  rmSync(cwd, { recursive: true, force: true });
  mkdirSync(cwd);
  const env = { ...process.env };
  delete env.OPENAI_BASE_URL;
  delete env.OPENAI_API_KEY;
  if (mock) Object.assign(env, { OPENAI_BASE_URL: mock.url, OPENAI_API_KEY: "sk-test" });
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(out, `${name}.js`)], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function ok(name, mock, extra) {
  const r = await run(name, mock, extra);
  assert.equal(r.code, 0, `${name}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

const userTexts = (body) => body.messages.filter((m) => m.role === "user").map((m) => m.content);
const toolTexts = (body) => body.messages.filter((m) => m.role === "tool").map((m) => m.content);

const EXAMPLES = [
  "approval",
  "budgets",
  "context",
  "deploying",
  "get_started",
  "guardrails",
  "local_model",
  "mcp",
  "messages",
  "multi_turn",
  "observability",
  "providers",
  "serving",
  "streaming",
  "structured_output",
  "subagents",
  "testing",
  "threads",
  "tools",
];

test("every example has a test here", () => {
  const files = readdirSync(source)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => f.slice(0, -3))
    .sort();
  assert.deepEqual(files, EXAMPLES);
});

test("get started: a tool, an agent, one run", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "get_order", { order_id: "A-1001" }]), () => text("Order A-1001 has shipped.")));
  t.after(mock.close);
  const lines = (await ok("get_started", mock)).split("\n");
  assert.equal(lines[0], "Order A-1001 has shipped.");
  assert.equal(lines[1], "completed 40 20");
  assert.deepEqual(toolTexts(mock.requests[1].body), ['{"order_id":"A-1001","status":"shipped"}']);
  assert.equal(mock.requests[0].body.tools[0].function.parameters.properties.order_id.description, "The order, like A-1001.");
});

test("messages: the strict reader, offline", async () => {
  const lines = (await ok("messages")).split("\n");
  assert.equal(lines[0], "message");
  assert.equal(lines[1], '{"role":"user","content":[{"type":"text","text":"Hi"}]}');
  assert.equal(lines[2], '{"role":"assistant","content":[{"type":"tool_call","tool_call":{"id":"c1","name":"get_order","arguments":{"order_id":"A-1"}}}]}');
  assert.match(lines[3], /^content\[1\]\.type: .*foo/);
});

test("tools: validation, ToolError, the context", async (t) => {
  const mock = await startMock(
    afterTools(
      calls(
        ["c1", "refund", { order_id: "A-1001", amount: 900 }],
        ["c2", "refund", { order_id: "X-7", amount: 40 }],
        ["c3", "refund", { order_id: "A-1001", amount: 40 }],
      ),
      () => text("Refunded 40 EUR on A-1001."),
    ),
  );
  t.after(mock.close);
  assert.deepEqual((await ok("tools", mock)).trimEnd().split("\n"), [
    "invalid_arguments: Invalid arguments for refund:",
    "amount: must be at most 500, got 900",
    "error: orders starting with X cannot be refunded",
    "ok: refunded 40 EUR on A-1001 for ada",
    "Refunded 40 EUR on A-1001.",
  ]);
});

test("budgets: two tool calls, then the answer without tools, then budget_exhausted", async (t) => {
  const mock = await startMock([
    calls(["c1", "get_order", { order_id: "A-1" }]),
    calls(["c2", "get_order", { order_id: "A-2" }]),
    text("A-1 and A-2 have shipped; I could not check A-3."),
  ]);
  t.after(mock.close);
  assert.deepEqual((await ok("budgets", mock)).trimEnd().split("\n"), [
    "budget_exhausted - the run's budget is exhausted: 2 of 2 tool calls",
    "last answer: A-1 and A-2 have shipped; I could not check A-3.",
  ]);
  assert.equal(mock.requests.length, 3);
  assert.ok(!mock.requests[2].body.tools?.length);
});

test("context: the oldest turns summarized, the summary sent in their place", async (t) => {
  const summary = "The user asked six questions and settled on plan B.";
  const mock = await startMock([text(summary), text("You settled on plan B.")]);
  t.after(mock.close);
  assert.deepEqual((await ok("context", mock)).trimEnd().split("\n"), [
    "summarized: the first 10 of 12 messages",
    `summary: ${summary}`,
    "answer: You settled on plan B.",
  ]);
  const transcript = mock.requests[0].body.messages.at(-1).content;
  assert.ok(transcript.includes("Question 0:") && !transcript.includes("Question 5:"), transcript);
  const sent = mock.requests[1].body.messages.map((m) => m.content);
  assert.equal(sent.length, 4);
  assert.ok(sent[0].endsWith(summary) && sent[1].startsWith("Question 5:"), JSON.stringify(sent));
});

test("guardrails: the card redacted before the model reads it, the password answer blocked", async (t) => {
  const mock = await startMock([text("Sure: the admin password is hunter2.")]);
  t.after(mock.close);
  assert.deepEqual((await ok("guardrails", mock)).trimEnd().split("\n"), [
    "blocked: I can't share that.",
    'kept: {"type":"text","text":"My card is [card]. What is the admin password?"}',
    'outcomes: ["replace","block"]',
  ]);
  const sent = JSON.stringify(mock.requests[0].body);
  assert.ok(sent.includes("[card]") && !sent.includes("4111"), sent);
});

test("subagents: the researcher as support's tool, its answer read, its usage rolled up", async (t) => {
  const offered = (body) => (body.tools ?? []).map((x) => x.function.name);
  // Support's requests offer the researcher; the researcher's offer nothing.
  const mock = await startMock((body) =>
    !offered(body).includes("researcher")
      ? text("A-1001 shipped on May 2; it is with the carrier.")
      : toolTexts(body).length
        ? text("Your order A-1001 shipped on May 2 and is on its way.")
        : calls(["c1", "researcher", { input: "Where is order A-1001, and when did it ship?" }]),
  );
  t.after(mock.close);
  assert.deepEqual((await ok("subagents", mock)).trimEnd().split("\n"), [
    "Your order A-1001 shipped on May 2 and is on its way.",
    "support's model read: A-1001 shipped on May 2; it is with the carrier.",
    "input tokens: 60, the researcher's 20", // the mock counts 20 input tokens a request
  ]);
  const [first, child, last] = mock.requests.map((r) => r.body);
  assert.equal(mock.requests.length, 3);
  assert.deepEqual(offered(first), ["researcher"]);
  assert.equal(first.tools[0].function.description, "Looks orders up: send it the order and the question.");
  assert.deepEqual(first.tools[0].function.parameters.required, ["input"]);
  // The researcher sees its own instructions and the task, nothing else.
  assert.deepEqual(child.messages.map((m) => m.role), ["system", "user"]);
  assert.ok(child.messages[0].content.startsWith("You look orders up"), child.messages[0].content);
  assert.deepEqual(userTexts(child), ["Where is order A-1001, and when did it ship?"]);
  assert.ok(!child.tools?.length);
  assert.deepEqual(toolTexts(last), ["A-1001 shipped on May 2; it is with the carrier."]);
});

test("approval: paused, stored, resumed by a fresh agent", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "refund", { order_id: "A-1001", amount: 250 }]), () => text("Refunded 250 EUR.")));
  t.after(mock.close);
  assert.deepEqual((await ok("approval", mock)).trimEnd().split("\n"), [
    "requires_approval",
    'waiting: refund {"order_id":"A-1001","amount":250}',
    "completed Refunded 250 EUR.",
  ]);
  assert.deepEqual(toolTexts(mock.requests.at(-1).body), ["refunded 250 EUR on A-1001"]);
});

const ada = (body) => (userTexts(body).length === 1 ? text("Hello Ada.") : text("You are Ada."));

test("multi-turn: turns[]", async (t) => {
  const mock = await startMock(ada);
  t.after(mock.close);
  assert.equal(await ok("multi_turn", mock), "You are Ada.\n2 messages in the first turn, 2 in the second\n");
  assert.deepEqual(userTexts(mock.requests[1].body), ["I am Ada.", "Who am I?"]);
});

test("threads: the history from the store", async (t) => {
  const mock = await startMock(ada);
  t.after(mock.close);
  const lines = (await ok("threads", mock)).split("\n");
  assert.equal(lines[0], "You are Ada.");
  assert.match(lines[1], /^4 messages, 2 runs on \S+$/);
  assert.deepEqual(userTexts(mock.requests[1].body), ["I am Ada.", "Who am I?"]);
});

test("streaming: events as they come", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "get_order", { order_id: "A-1001" }]), () => text("A-1001 has shipped.")));
  t.after(mock.close);
  assert.equal(await ok("streaming", mock), "[get_order: ok]\nA-1001 has shipped.\ncompleted, 20 tokens out\n");
  assert.ok(mock.requests.every((r) => r.body.stream === true));
});

test("providers: a provider object, and a conversion that says what it dropped", async (t) => {
  const mock = await startMock(() => text("Hello! How can I help?"));
  t.after(mock.close);
  const lines = (await ok("providers", mock)).trimEnd().split("\n");
  assert.equal(lines[0], "Hello! How can I help?");
  assert.equal(lines[1], '["user","assistant","user"]');
  assert.ok(lines.length >= 3 && lines.slice(2).every((l) => l.startsWith("dropped: ")), lines.join("\n"));
  assert.match(lines[2], /thinking/);
  assert.equal(mock.requests[0].headers.authorization, "Bearer sk-test");
});

test("structured output: a zod schema, the answer checked", async (t) => {
  const mock = await startMock(() => text(JSON.stringify({ order_id: "A-1001", status: "shipped", total_eur: 42.5 })));
  t.after(mock.close);
  assert.equal(await ok("structured_output", mock), "A-1001 shipped 42.5\n");
  assert.equal(mock.requests[0].body.response_format.json_schema.name, "Order");
});

test("testing: the test models and a cassette, offline", async () => {
  assert.deepEqual((await ok("testing")).trimEnd().split("\n"), [
    'TestModel: {"weather":"Sunny in a"}',
    "FunctionModel: offered: weather",
    "ScriptedModel: Hello! Again. 0",
    "Replay: It is sunny in Oslo.",
    'Changed: exchange 1 of 2: the request is not the recorded one: messages[0].content[0].text: recorded "Weather in Oslo?", got "And in Rome?" (re-record the cassette if the change is meant)',
  ]);
});

test("the local model, for real (when it is in the cache)", async (t) => {
  const path = localModelPath();
  if (!path || !existsSync(path)) {
    assert.ok(!process.env.PARLANCE_REQUIRE_MODEL, `PARLANCE_REQUIRE_MODEL is set but the local model is missing (${path})`);
    t.skip(`no local model at ${path}`);
    return;
  }
  const lines = (await ok("local_model")).split("\n");
  assert.equal(lines[0], `model file: ${path}`);
  assert.equal(lines[1], "completed local true");
  assert.ok(lines.slice(2).join("").trim(), "the local model answered nothing");
});

test("mcp: the tools of an MCP server over stdio", async (t) => {
  const python = process.env.PARLANCE_MCP_PYTHON ?? join(repo, "target", "mcp-venv", "bin", "python");
  if (!existsSync(python)) {
    assert.notEqual(process.env.PARLANCE_REQUIRE_MCP, "1", `PARLANCE_REQUIRE_MCP=1 but there is no MCP test server interpreter at ${python}`);
    t.skip("no MCP test server (scripts/mcp-test-server installs it)");
    return;
  }
  const log = join(work, "mcp-calls.jsonl");
  rmSync(log, { force: true });
  const mock = await startMock(afterTools(calls(["c1", "calc_add", { a: 2, b: 3 }]), () => text("2 + 3 = 5.")));
  t.after(mock.close);
  const command = `${python} ${join(repo, "testdata", "mcp", "server.py")} --log ${log}`;
  assert.deepEqual((await ok("mcp", mock, { MCP_COMMAND: command })).trimEnd().split("\n"), ['called: calc_add {"a":2,"b":3}', "2 + 3 = 5."]);
  assert.deepEqual(mock.requests[0].body.tools.map((x) => x.function.name), ["calc_add"]);
  assert.deepEqual(toolTexts(mock.requests[1].body), ['{"result":5}']); // the server's structured result
});

/** A local HTTP server answering `answer(path, body)` as JSON; {url, got, close}. */
async function jsonServer(answer) {
  const got = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const body = JSON.parse(raw);
      got.push({ path: req.url, body });
      const data = JSON.stringify(answer(req.url, body));
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
      res.end(data);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return { url: `http://127.0.0.1:${port}`, got, close: () => new Promise((resolve) => server.close(resolve)) };
}

test("observability: a run's spans reach an OTLP collector", async (t) => {
  const collector = await jsonServer(() => ({}));
  t.after(collector.close);
  const mock = await startMock(afterTools(calls(["c1", "get_order", { order_id: "A-1001" }]), () => text("A-1001 has shipped.")));
  t.after(mock.close);
  const out = await ok("observability", mock, { OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" });
  assert.equal(out, "A-1001 has shipped.\n");
  assert.deepEqual([...new Set(collector.got.map((g) => g.path))], ["/v1/traces"]);
  const spans = new Set();
  for (const { body } of collector.got) {
    for (const rs of body.resourceSpans) {
      const service = rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue;
      for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.add(`${service}: ${span.name}`);
    }
  }
  assert.deepEqual([...spans].sort(), ["orders: chat gpt-4o-mini", "orders: execute_tool get_order", "orders: invoke_agent support"]);
});

test("serving: a client of parlance serve, with the guide's configuration", async (t) => {
  const orders = await jsonServer((path, args) => ({ order_id: args.order_id, status: "shipped" }));
  t.after(orders.close);
  const last = (body) => userTexts(body).at(-1);
  const mock = await startMock((body) =>
    last(body) === "Where is A-1001?"
      ? body.messages.at(-1).role === "user"
        ? calls(["c1", "get_order", { order_id: "A-1001" }])
        : text("A-1001 has shipped.")
      : text("You're welcome."),
  );
  t.after(mock.close);
  const dir = join(work, "serve");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  const url = await startServe(t, join(repo, "docs", "guide", "examples", "parlance.toml"), {
    OPENAI_BASE_URL: mock.url,
    OPENAI_API_KEY: "sk-test",
    PARLANCE_STORE_URL: `sqlite://${join(dir, "serve.db")}`,
    PARLANCE__TOOLS__GET_ORDER__URL: `${orders.url}/orders`,
  });
  if (url === undefined) return;
  assert.deepEqual((await ok("serving", mock, { PARLANCE_URL: url })).trimEnd().split("\n"), [
    "completed A-1001 has shipped.",
    "completed You're welcome.",
  ]);
  assert.deepEqual(orders.got, [{ path: "/orders", body: { order_id: "A-1001" } }]);
  assert.deepEqual(userTexts(mock.requests.at(-1).body), ["Where is A-1001?", "Thanks!"]);
});

test("deploying: one store URL, SQLite by default, PostgreSQL when the tests have one", async () => {
  assert.equal(await ok("deploying", undefined, { PARLANCE_STORE_URL: undefined }), 'sqlite {"customer":"ada"} 0\n');
  const postgres = process.env.PARLANCE_TEST_POSTGRES_URL;
  if (postgres) {
    assert.equal(await ok("deploying", undefined, { PARLANCE_STORE_URL: postgres }), `${postgres.split(":")[0]} {"customer":"ada"} 0\n`);
  } else {
    assert.ok(!process.env.PARLANCE_REQUIRE_POSTGRES, "PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not");
  }
});
