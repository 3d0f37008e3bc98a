// What the tests of the protocols `parlance serve` speaks share: HTTP
// tools that record their calls, a server whose agent has a tool and a
// tool that waits for approval, a thread of the caller, a wait.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { startServe } from "./serve.mjs";

/** `ann`'s token (`bob` has `tok-bob-0123456789`). */
export const TOKEN = "tok-ann-0123456789";

/** An HTTP tool that records what it was sent and answers `answer(args)`. */
export async function toolServer(answer) {
  const got = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const args = JSON.parse(body);
      got.push(args);
      const data = JSON.stringify(answer(args));
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
      res.end(data);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, got, close: () => new Promise((r) => server.close(r)) };
}

/** Waits (polling) until `cond()` holds; fails after `ms`. */
export async function until(what, cond, ms = 10000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * `parlance serve` (its files in a folder `name`) with agent `support`:
 * `get_order`, an HTTP tool at `orders`, and `refund`, at `refunds`,
 * waiting for approval; its model the mock at `mock`. Its URL, or
 * undefined when the command is not built.
 */
export async function serveSupport(t, name, mock, orders, refunds) {
  const dir = join(process.cwd(), name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  const config = join(dir, "parlance.toml");
  writeFileSync(
    config,
    `
[store]
url = "sqlite://${join(dir, "serve.db")}"
identity_dir = "${join(dir, "identity")}"

[agents.support]
model = "openai:gpt-4o-mini"
instructions = "You answer about orders."
tools = ["get_order", "refund"]

[tools.get_order]
kind = "http"
url = "${orders.url}/orders"
description = "Look up one order by its id."
input_schema = '{"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}'

[tools.refund]
kind = "http"
url = "${refunds.url}/refunds"
description = "Refund an order."
needs_approval = true
input_schema = '{"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}'
`,
  );
  return startServe(t, config, {
    OPENAI_BASE_URL: mock.url,
    OPENAI_API_KEY: "sk-test",
    PARLANCE_API_TOKENS: `ann=${TOKEN},bob=tok-bob-0123456789`,
  });
}

/** A new thread of `ann`. */
export async function newThread(url) {
  const r = await fetch(`${url}/v1/threads`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(r.status, 201);
  return (await r.json()).id;
}
