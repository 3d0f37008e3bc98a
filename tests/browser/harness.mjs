// What the browser tests share: the real `parlance serve` (built by
// scripts/test) on 127.0.0.1 with a fresh SQLite store, a mock model
// provider speaking the OpenAI Chat wire format whose answers follow the
// conversation (so several runs can go at once), the HTTP tools the agent
// calls, and headless Chromium (Debian's) driven by playwright-core.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = fileURLToPath(new URL(".", import.meta.url));
export const repo = join(here, "..", "..");
// Screenshots: into docs/ (shown in the README) when asked, else a
// temporary folder (still taken, so that taking them is tested).
export const docs = process.env.PARLANCE_UI_SCREENSHOTS === "1" ? join(repo, "docs") : mkdtempSync(join(tmpdir(), "parlance-shots-"));
const binary = process.env.PARLANCE_BIN ?? join(repo, "target", "debug", "parlance");

export const TOKENS = { alice: "tok-alice-123456", bob: "tok-bob-654321", ops: "tok-ops-987654" };

// Untrusted text that must stay text.
export const XSS = `<img src=x onerror="window.__xss='img'"><script>window.__xss='script'</script>`;

const text = (m) =>
  typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join("");

let callCounter = 0;
const call = (name, args) => ({
  id: `call_${++callCounter}`,
  type: "function",
  function: { name, arguments: JSON.stringify(args) },
});

// The model: what it answers depends on the first user message (the
// scenario) and on whether tool results just came back.
function answer(messages) {
  const last = messages[messages.length - 1];
  const asked = text(messages.find((m) => m.role === "user") ?? {});
  if (last.role === "tool") {
    const results = messages.slice(messages.findLastIndex((m) => m.role === "assistant") + 1).map(text);
    const extra = asked.includes("xss") ? ` ${XSS}` : "";
    return { role: "assistant", content: `Done. The tools said: ${results.join(" | ")}.${extra}` };
  }
  const order = asked.match(/A-\d+/)?.[0] ?? "A-1001";
  if (asked.includes("two refunds")) {
    return {
      role: "assistant",
      content: "I will refund both orders.",
      tool_calls: [...asked.matchAll(/A-\d+/g)].slice(0, 2).map(([id], i) => call("refund", { order_id: id, amount: 40 + 20 * i })),
    };
  }
  if (asked.includes("ship")) {
    const args = { order_id: order, carrier: "dhl", express: false, address: { city: "Lyon", zip: "69001" }, parcels: [2] };
    return { role: "assistant", content: "Shipping it.", tool_calls: [call("ship", args)] };
  }
  if (asked.includes("tag it")) {
    return { role: "assistant", content: null, tool_calls: [call("tag", { label: "box", 'q"]k': "ok", zone: "z" })] };
  }
  if (asked.includes("look up")) {
    return { role: "assistant", content: null, tool_calls: [call("lookup_order", { id: order })] };
  }
  // "long note": one unbroken 400-character word, to try the layout.
  const note = asked.includes("xss") ? XSS : asked.includes("long note") ? "R".repeat(400) : "customer asked twice";
  const said = asked.includes("xss") ? `Refunding now. ${XSS}` : `I will refund 300 EUR on ${order}.`;
  return { role: "assistant", content: said, tool_calls: [call("refund", { order_id: order, amount: 300, note })] };
}

function reply(res, body, message) {
  const usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 };
  const finish = message.tool_calls ? "tool_calls" : "stop";
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", model: body.model,
      choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  const delta = { ...message, tool_calls: message.tool_calls?.map((c, index) => ({ index, ...c })) };
  const chunk = (d, f, u) => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: body.model,
    choices: [{ index: 0, delta: d, finish_reason: f }], ...(u ? { usage: u } : {}) })}\n\n`;
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(chunk(delta, null) + chunk({}, finish) + `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", model: body.model, choices: [], usage })}\n\n` + "data: [DONE]\n\n");
}

// The Anthropic Messages wire format, for a model that thinks: it thinks
// and calls the slow tool, then says what came back.
function thinker(messages) {
  const last = messages[messages.length - 1];
  const results = Array.isArray(last.content) ? last.content.filter((b) => b.type === "tool_result") : [];
  if (results.length) {
    const said = results.map((r) => (typeof r.content === "string" ? r.content : (r.content ?? []).map((c) => c.text ?? "").join(""))).join(" | ");
    return { stop: "end_turn", blocks: [{ type: "text", text: `The lookup said: ${said}` }] };
  }
  return {
    stop: "tool_use",
    blocks: [
      { type: "thinking", thinking: "The customer wants order A-1 checked; the slow service first.", signature: "sig-1" },
      { type: "tool_use", id: `toolu_${++callCounter}`, name: "slow_lookup", input: { id: "A-1" } },
    ],
  };
}

function replyAnthropic(res, body, { stop, blocks }) {
  const usage = { input_tokens: 80, output_tokens: 20 };
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "msg_1", type: "message", role: "assistant", model: body.model, content: blocks, stop_reason: stop, usage }));
    return;
  }
  const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  let out = ev("message_start", { message: { id: "msg_1", type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, usage: { input_tokens: 80, output_tokens: 1 } } });
  blocks.forEach((b, index) => {
    if (b.type === "thinking") {
      out += ev("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
      out += ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: b.thinking } });
      out += ev("content_block_delta", { index, delta: { type: "signature_delta", signature: b.signature } });
    } else if (b.type === "tool_use") {
      out += ev("content_block_start", { index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
      out += ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } });
    } else {
      out += ev("content_block_start", { index, content_block: { type: "text", text: "" } });
      out += ev("content_block_delta", { index, delta: { type: "text_delta", text: b.text } });
    }
    out += ev("content_block_stop", { index });
  });
  out += ev("message_delta", { delta: { stop_reason: stop }, usage: { output_tokens: 20 } });
  out += ev("message_stop", {});
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.end(out);
}

async function readJson(req) {
  let data = "";
  for await (const chunk of req) data += chunk;
  return JSON.parse(data || "{}");
}

// The mock provider and the tools, on one port. `lookupFailures` HTTP 503
// answers come before the lookup tool works (a failed run to retry).
export async function startMocks() {
  const state = { lookupFailures: 0, refunds: [], shipments: [] };
  const server = http.createServer(async (req, res) => {
    try {
      const body = await readJson(req);
      if (req.url === "/v1/chat/completions") return reply(res, body, answer(body.messages));
      if (req.url === "/v1/messages") return replyAnthropic(res, body, thinker(body.messages));
      if (req.url === "/slow") {
        // Answers after the tool's timeout (or never, if the call is dropped).
        const timer = setTimeout(() => { res.writeHead(200); res.end("{}"); }, 5000);
        res.on("close", () => clearTimeout(timer));
        return;
      }
      if (req.url === "/refund") {
        state.refunds.push(body);
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ refunded: body.amount, order_id: body.order_id }));
      }
      if (req.url === "/ship") {
        state.shipments.push(body);
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ shipped: body.order_id }));
      }
      if (req.url === "/lookup") {
        if (state.lookupFailures > 0) {
          state.lookupFailures -= 1;
          res.writeHead(503);
          return res.end("the order service is down");
        }
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ id: body.id, status: "shipped" }));
      }
      res.writeHead(404);
      res.end();
    } catch (e) {
      res.writeHead(500);
      res.end(String(e));
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${server.address().port}`, state, close: () => server.close() };
}

// `anonymous`: no token configured (loopback only): the API's anonymous caller.
// `store`: another server's store URL (two servers sharing one store).
// `top`: more top-level settings (`allowed_origins = [...]`).
function config(dir, mocks, { anonymous = false, store = null, top = "" } = {}) {
  const tokens = anonymous ? "" : `[[auth.tokens]]
token = "${TOKENS.alice}"
subject = "alice"
[[auth.tokens]]
token = "${TOKENS.bob}"
subject = "bob"
[[auth.tokens]]
token = "${TOKENS.ops}"
subject = "ops"
operator = true
`;
  const schema = {
    type: "object",
    properties: {
      order_id: { type: "string", pattern: "^A-[0-9]+$", description: "The order, like A-1001." },
      amount: { type: "integer", minimum: 1, maximum: 500, description: "In EUR; at most 500 without a manager." },
      note: { type: "string", description: "Why, for the books." },
    },
    required: ["order_id", "amount"],
    additionalProperties: false,
  };
  const lookup = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
  // Every kind of field the edit form draws: a choice, true/false, a
  // nested object with a pattern, an array (as JSON).
  const ship = {
    type: "object",
    properties: {
      order_id: { type: "string" },
      carrier: { type: "string", enum: ["dhl", "ups", "post"] },
      express: { type: "boolean" },
      address: {
        type: "object",
        properties: { city: { type: "string" }, zip: { type: "string", pattern: "^[0-9]{5}$" } },
        required: ["city", "zip"],
        additionalProperties: false,
      },
      parcels: { type: "array", items: { type: "integer", minimum: 1 } },
    },
    required: ["order_id", "carrier", "address"],
    additionalProperties: false,
  };
  // Keys a CSS selector cannot hold unescaped (`"`, `]`): the page's
  // live checks must still find their fields.
  const tag = {
    type: "object",
    properties: { label: { type: "string" }, 'q"]k': { type: "string", maxLength: 3 }, zone: { type: "string", maxLength: 2 } },
    required: ["label"],
  };
  const toml = `
listen = "127.0.0.1:0"
secret = "browser-test-secret-0123456789"
${top}
[store]
url = "${store ?? storeUrl(dir)}"
${tokens}[providers.mock]
format = "openai-chat"
base_url = "${mocks.url}/v1"
api_key_env = "PARLANCE_TEST_NO_KEY"
[agents.support]
model = "mock:gpt-test"
instructions = "You handle refunds."
tools = ["refund", "lookup_order", "ship", "tag"]
on_tool_exception = "fail"
[agents.careful]
model = "mock:gpt-test"
instructions = "You look orders up."
tools = ["lookup_order"]
on_tool_exception = "return_generic"
[providers.mockthink]
format = "anthropic"
base_url = "${mocks.url}"
api_key_env = "PARLANCE_TEST_NO_KEY"
[agents.thinker]
model = "mockthink:claude-test"
instructions = "You think first."
tools = ["slow_lookup"]
[tools.slow_lookup]
kind = "http"
url = "${mocks.url}/slow"
description = "Look an order up in the slow service."
timeout_ms = 300
input_schema = '${JSON.stringify(lookup)}'
[tools.ship]
kind = "http"
url = "${mocks.url}/ship"
description = "Ship an order."
needs_approval = true
input_schema = '${JSON.stringify(ship)}'
[tools.tag]
kind = "http"
url = "${mocks.url}/ship"
description = "Tag an order."
needs_approval = true
input_schema = '${JSON.stringify(tag)}'
[tools.refund]
kind = "http"
url = "${mocks.url}/refund"
description = "Refund an order to the customer's card."
needs_approval = true
input_schema = '${JSON.stringify(schema)}'
[tools.lookup_order]
kind = "http"
url = "${mocks.url}/lookup"
description = "Look up an order."
input_schema = '${JSON.stringify(lookup)}'
`;
  const path = join(dir, "parlance.toml");
  writeFileSync(path, toml);
  return path;
}

const storeUrl = (dir) => `sqlite://${join(dir, "threads.db")}`;

// `parlance serve` with the test configuration; resolves once it listens.
export async function startServer(mocks, options = {}) {
  const dir = mkdtempSync(join(tmpdir(), "parlance-ui-"));
  const child = spawn(binary, ["serve", "--config", config(dir, mocks, options)], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, RUST_LOG: "warn" },
  });
  const exited = once(child, "exit");
  let stopping = null;
  const lines = createInterface({ input: child.stdout });
  const [line] = await once(lines, "line");
  const url = line.replace("parlance: listening on ", "").trim();
  if (!url.startsWith("http://")) throw new Error(`unexpected: ${line}`);
  return {
    url,
    store: options.store ?? storeUrl(dir),
    // Once, however often it is called.
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGTERM");
          // A server that does not stop is a failure to see, not a hang.
          const kill = setTimeout(() => child.kill("SIGKILL"), 15000);
          await exited;
          clearTimeout(kill);
        }
        rmSync(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

// The API, as a client would call it.
export async function api(server, token, method, path, body) {
  const resp = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: resp.status, json, text };
}

// A thread of `who` and a run on it with `input`, as the API answers it.
export async function startRun(server, who, input, agent = "support") {
  const thread = await api(server, TOKENS[who], "POST", "/v1/threads", {});
  const run = await api(server, TOKENS[who], "POST", "/v1/runs", { agent, input, thread_id: thread.json.id });
  return { thread: thread.json.id, run: run.json };
}

// Debian's Chromium, headless, with the flags this machine's closed
// network needs (no background connections); playwright-core gives it a
// fresh profile (--user-data-dir) each launch.
// `args`: more Chromium flags.
export async function browser(args = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      ...args,
    ],
  });
}

// A browser context logged in as `who` through the login form.
export async function login(b, server, who, options = {}) {
  const context = await b.newContext({ viewport: { width: 1100, height: 900 }, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  page.on("dialog", (d) => { errors.push(new Error(`dialog: ${d.message()}`)); d.dismiss(); });
  // Nothing but our server (the pages work without third-party hosts).
  page.on("request", (r) => {
    if (!r.url().startsWith(`${server.url}/`) && !r.url().startsWith("data:")) errors.push(new Error(`request to ${r.url()}`));
  });
  page.errors = errors;
  await page.goto(`${server.url}/ui`);
  await page.getByLabel("API token").fill(TOKENS[who]);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL(`${server.url}/ui`);
  return { context, page };
}

// Polls `f` until it returns something truthy.
export async function eventually(f, what, ms = 15000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
