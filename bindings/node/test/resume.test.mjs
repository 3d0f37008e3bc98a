// Runs that finish on their own after their process died: a worker process
// starts a run on a stored thread (SQLite file, PostgreSQL), its tool call
// is in flight when the worker is killed with SIGKILL; this process finds
// the run dead once its lease runs out and carries it on
// (`store.resumeDeadRuns`): the call runs again here, once, with the same
// idempotency key, the model's committed step is not asked again, and the
// same run ends `completed`.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

import { Agent, ConfigError, Store, StoreError, tool } from "parlance-ai";
import { FunctionModel } from "parlance-ai/testing";
import { sleep } from "./helpers/agents.mjs";

const WORKER = `
import { writeFileSync } from "node:fs";
import { Agent, Store, tool } from "parlance-ai";
import { FunctionModel } from "parlance-ai/testing";
const [url, name, marker] = process.argv.slice(1);
const charge = tool({
  name: "charge",
  description: "Charge a card.",
  parameters: { type: "object", properties: { amount: { type: "integer" } }, required: ["amount"] },
  execute: (_args, ctx) => { writeFileSync(marker, ctx.idempotencyKey); return new Promise(() => {}); },
});
const model = new FunctionModel(() => ({ content: [{ type: "tool_call", tool_call: { id: "c1", name: "charge", arguments: { amount: 5 } } }] }));
const store = await Store.open(url, { lease: 500 });
const thread = await store.createThread();
console.log(thread);
await new Agent({ model, tools: [charge], name, toolTimeout: 3600000 }).run("Charge me 5", { store, threadId: thread });
`;

function storeUrl(t, backend, dir) {
  if (backend === "sqlite") return `sqlite://${join(dir, "threads.db")}`;
  const url = process.env.PARLANCE_TEST_POSTGRES_URL;
  if (!url && process.env.PARLANCE_REQUIRE_POSTGRES) {
    throw new Error("PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not");
  }
  if (!url) t.skip("no PostgreSQL (set PARLANCE_TEST_POSTGRES_URL)");
  return url;
}

/** Runs the worker until its tool call is in flight, then kills it: the thread and the call's key. */
async function killedMidTool(url, name, dir) {
  const marker = join(dir, `started-${name}`);
  const child = spawn(process.execPath, ["--input-type=module", "-e", WORKER, url, name, marker], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const deadline = Date.now() + 60000;
  while (!existsSync(marker) || readFileSync(marker, "utf8") === "") {
    assert.equal(child.exitCode, null, "the worker ended before its tool started");
    assert.ok(Date.now() < deadline, "the worker's tool never started");
    await sleep(20);
  }
  child.kill("SIGKILL");
  await exited;
  await sleep(800); // past the lease
  return { thread: out.trim(), key: readFileSync(marker, "utf8") };
}

/** The scenario on `backend`. */
async function carriedOn(t, backend) {
  {
    const dir = mkdtempSync(join(process.cwd(), "resume-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const url = storeUrl(t, backend, dir);
    if (!url) return;
    const name = `support-${process.pid}-${Date.now()}`;
    const { thread, key } = await killedMidTool(url, name, dir);
    const keys = [];
    const asked = [];
    const charge = tool({
      name: "charge",
      description: "Charge a card.",
      parameters: { type: "object", properties: { amount: { type: "integer" } }, required: ["amount"] },
      execute: ({ amount }, ctx) => {
        keys.push(ctx.idempotencyKey);
        return `charged ${amount}`;
      },
    });
    const model = new FunctionModel((messages) => {
      asked.push(messages.length);
      return "Charged.";
    });
    const agent = new Agent({ model, tools: [charge], name });
    const other = new Agent({ model, tools: [charge], name: `${name}-other` });
    const store = await Store.open(url, { lease: 500 });
    const dead = (await store.deadRuns()).filter((r) => r.threadId === thread);
    assert.equal(dead.length, 1);
    assert.equal(dead[0].agent, name);
    // An agent that did not make it leaves it alone.
    assert.ok((await store.resumeDeadRuns([other])).every((r) => r.threadId !== thread));
    const resumed = (await store.resumeDeadRuns([agent])).filter((r) => r.threadId === thread);
    assert.deepEqual(resumed, [{ runId: dead[0].runId, threadId: thread, status: "completed", reason: null }]);
    const runs = await store.runs(thread);
    assert.deepEqual(runs.map((r) => [r.id, r.status]), [[dead[0].runId, "completed"]], "the same run went on");
    assert.deepEqual(keys, [key]);
    assert.equal(key, `${thread}/c1`);
    assert.deepEqual(asked, [3], "only the step after the tool was asked (user, call, result)");
    assert.deepEqual((await store.messages(thread)).map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
    await assert.rejects(agent.carryOn(dead[0].runId, { store }), (e) => e instanceof StoreError && /not a dead run/.test(e.message));
  }
}

test("a killed worker's run is carried on here, its call run again once with its key", (t) => carriedOn(t, "sqlite"));
test("a killed worker's run is carried on here, on PostgreSQL", (t) => carriedOn(t, "postgres"));

test("carryOn checks its arguments", async (t) => {
  const dir = mkdtempSync(join(process.cwd(), "resume-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const store = await Store.open(`sqlite://${join(dir, "t.db")}`);
  const agent = new Agent({ model: new FunctionModel(() => "hi"), name: "a" });
  await assert.rejects(agent.carryOn("run_x", {}), (e) => e instanceof ConfigError && /store: carryOn needs the Store/.test(e.message));
  await assert.rejects(
    agent.carryOn("run_x", { store, maxAttempts: 0 }),
    (e) => e instanceof ConfigError && /maxAttempts: expected a whole number from 1 to 1000, got 0/.test(e.message),
  );
  await assert.rejects(agent.carryOn("run_x", { store }), (e) => e instanceof StoreError && /run_x is not a dead run/.test(e.message));
  assert.deepEqual(await store.resumeDeadRuns([agent]), []);
  await assert.rejects(store.resumeDeadRuns(agent), (e) => e instanceof ConfigError && /agents: expected a list/.test(e.message));
});
