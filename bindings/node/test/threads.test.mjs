// Runs on threads stored in a real SQLite file and on the PostgreSQL
// server scripts/test starts (PARLANCE_TEST_POSTGRES_URL): history from
// the store, a paused run resumed by a fresh agent and store (as another
// process would), a failed run retried, one run at a time per thread.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

import { Agent, Store, StoreError, ConfigError, tool, approve } from "parlance-ai";
import { FunctionModel, ScriptedModel } from "parlance-ai/testing";
import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";
import { agentFor, results, textOf, sleep } from "./helpers/agents.mjs";

function dbFile(t) {
  // A fresh folder beside the installed package (inside the repository's target/).
  const dir = mkdtempSync(join(process.cwd(), "db-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return `sqlite://${join(dir, "threads.db")}`;
}

/** A store URL on `backend`: a fresh SQLite file, or the test PostgreSQL
 * server (undefined: skip; with PARLANCE_REQUIRE_POSTGRES its absence
 * fails, as in the Rust and Python suites). */
function storeUrl(t, backend) {
  if (backend === "sqlite") return dbFile(t);
  const url = process.env.PARLANCE_TEST_POSTGRES_URL;
  if (!url && process.env.PARLANCE_REQUIRE_POSTGRES) {
    throw new Error("PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not");
  }
  if (!url) t.skip("no PostgreSQL (set PARLANCE_TEST_POSTGRES_URL)");
  return url;
}

for (const backend of ["sqlite", "postgres"]) {
  test(`runs on a thread: the history comes from the store (${backend})`, async (t) => {
    const url = storeUrl(t, backend);
    if (!url) return;
    const mock = await startMock([text("Hello Ada."), text("You are Ada.")]);
    t.after(mock.close);
    const store = await Store.open(url);
    const thread = await store.createThread({ customer: "ada" });
    const agent = agentFor(mock, { instructions: "Be brief." });
    const first = await agent.run("I am Ada.", { store, threadId: thread });
    assert.equal(first.threadId, thread);
    const second = await agent.run("Who am I?", { store, threadId: thread });
    assert.equal(second.text, "You are Ada.");
    assert.deepEqual(
      mock.requests[1].body.messages.map((m) => m.content),
      ["Be brief.", "I am Ada.", "Hello Ada.", "Who am I?"],
    );
    const stored = await store.messages(thread);
    assert.equal(stored.length, 4);
    const runs = await store.runs(thread);
    assert.deepEqual(runs.map((r) => r.status), ["completed", "completed"]);
  });

  test(`a paused run on a thread resumes from the store alone, with a fresh agent and store (${backend})`, async (t) => {
    const url = storeUrl(t, backend);
    if (!url) return;
    const ran = [];
    const refund = tool({
      name: "refund",
      parameters: { type: "object", properties: { amount: { type: "integer" } }, required: ["amount"] },
      needsApproval: true,
      execute: ({ amount }) => {
        ran.push(amount);
        return `refunded ${amount}`;
      },
    });
    const mock = await startMock(afterTools(calls(["c1", "refund", { amount: 20 }]), () => text("Refunded.")));
    t.after(mock.close);
    const store = await Store.open(url);
    const thread = await store.createThread();
    const paused = await agentFor(mock, { tools: [refund] }).run("Refund 20", { store, threadId: thread });
    assert.equal(paused.status, "requires_approval");
    // Elsewhere, later: only the stored JSON and the database.
    const again = new Store(url);
    const r = await agentFor(mock, { tools: [refund] }).resume(paused.toString(), [approve("c1")], { store: again });
    assert.equal(r.status, "completed");
    assert.deepEqual(ran, [20]);
    assert.equal(textOf(results(r).c1), "refunded 20");
    const history = await again.messages(thread);
    assert.equal(history.at(-1).content[0].text, "Refunded.");
  });
}

test("a failed run is retried on its thread; one run at a time holds a thread", async (t) => {
  let fail = true;
  // Without a reply the mock answers 500: a model error.
  const mock = await startMock(() => (fail ? undefined : text("Back again.")));
  t.after(mock.close);
  const store = await Store.open(dbFile(t));
  const thread = await store.createThread();
  const agent = agentFor(mock, { modelSettings: {} });
  const err = await agent.run("hi", { store, threadId: thread }).catch((e) => e);
  assert.equal(err.name, "RunError");
  assert.equal(err.code, "model_error");
  fail = false;
  const r = await agent.retry(thread, { store });
  assert.equal(r.text, "Back again.");
  assert.deepEqual((await store.runs(thread)).map((x) => x.status), ["failed", "completed"]);

  // A slow tool holds the thread; a second run on it is refused.
  const slow = tool({ name: "slow", execute: async () => { await sleep(300); return "done"; } });
  const m2 = await startMock(afterTools(calls(["s1", "slow", {}]), () => text("ok")));
  t.after(m2.close);
  const busyAgent = agentFor(m2, { tools: [slow] });
  const running = busyAgent.run("go", { store, threadId: thread });
  await sleep(100);
  await assert.rejects(busyAgent.run("again", { store, threadId: thread }), (e) => {
    assert.ok(e instanceof StoreError, e);
    assert.equal(e.kind, "busy");
    assert.match(e.message, /is busy/);
    return true;
  });
  assert.equal((await running).text, "ok");
});

test("bad store use is a clear error", async (t) => {
  await assert.rejects(Store.open("mysql://nope"), StoreError);
  const store = new Store(dbFile(t));
  await assert.rejects(store.messages("thread_nope"), (e) => e instanceof StoreError && e.kind === "not_found");
  const mock = await startMock([]);
  t.after(mock.close);
  await assert.rejects(agentFor(mock).run("hi", { store }), ConfigError);
  await assert.rejects(agentFor(mock).run("hi", { store: {}, threadId: "x" }), ConfigError);
});

// A run that is killed in the middle of a tool call, in its own process.
const CRASHING_RUN = `
import { writeFileSync } from "node:fs";
import { Agent, Store, tool } from "parlance-ai";
import { FunctionModel } from "parlance-ai/testing";
const [url, marker, thread] = process.argv.slice(1);
const stall = tool({
  name: "stall",
  description: "Never ends.",
  parameters: { type: "object", properties: {} },
  execute: () => { writeFileSync(marker, "started"); return new Promise(() => {}); },
});
const model = new FunctionModel(() => ({ content: [{ type: "tool_call", tool_call: { id: "c1", name: "stall", arguments: {} } }] }));
const store = await Store.open(url, { lease: 1000 });
await new Agent({ model, tools: [stall], toolTimeout: 3600000 }).run("go", { store, threadId: thread });
`;

for (const backend of ["sqlite", "postgres"]) {
  test(`artifacts are stored on the thread but never sent (${backend})`, async (t) => {
    const url = storeUrl(t, backend);
    if (!url) return;
    const sent = [];
    const model = new FunctionModel((messages) => {
      sent.push(JSON.stringify(messages));
      if (sent.length === 1) return { content: [{ type: "tool_call", tool_call: { id: "c1", name: "charge", arguments: {} } }] };
      return "Sorry.";
    });
    const charge = tool({
      name: "charge",
      description: "Charges the card.",
      parameters: { type: "object", properties: {} },
      execute: () => {
        throw new TypeError("card 4111-1111-1111-1111 declined");
      },
    });
    const agent = () => new Agent({ model, tools: [charge], onToolException: "returnGeneric" });
    const store = await Store.open(url);
    const thread = await store.createThread();
    assert.equal((await agent().run("Charge me", { store, threadId: thread })).status, "completed");
    const artifacts = await (await Store.open(url)).artifacts(thread);
    assert.deepEqual(
      artifacts.map((a) => [a.tool_call_id ?? a.toolCallId, a.artifact]),
      [["c1", { error_type: "TypeError", message: "card 4111-1111-1111-1111 declined" }]],
    );
    await agent().run("Hello?", { store: await Store.open(url), threadId: thread });
    assert.equal(sent.length, 3);
    sent.forEach((request, i) => assert.ok(!request.includes("4111"), `request ${i} carried the artifact`));
    assert.ok(sent[2].includes("charge failed."));
  });

  test(`a run whose process was killed frees its thread after the lease (${backend})`, async (t) => {
    const url = storeUrl(t, backend);
    if (!url) return;
    const store = await Store.open(url, { lease: 1000 });
    const thread = await store.createThread();
    const dir = mkdtempSync(join(process.cwd(), "crash-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const marker = join(dir, "started");
    const child = spawn(process.execPath, ["--input-type=module", "-e", CRASHING_RUN, url, marker, thread], { stdio: "inherit" });
    const exited = new Promise((resolve) => child.on("exit", resolve));
    const deadline = Date.now() + 60000;
    while (!existsSync(marker)) {
      assert.equal(child.exitCode, null, "the run's process ended before its tool started");
      assert.ok(Date.now() < deadline, "the tool never started");
      await sleep(20);
    }
    child.kill("SIGKILL");
    await exited;
    const agent = new Agent({ model: new ScriptedModel(["Back."]) });
    let r;
    try {
      // Within the dead run's lease (unless this machine stalled past it).
      r = await agent.run("Hello?", { store, threadId: thread });
    } catch (e) {
      assert.ok(e instanceof StoreError && e.kind === "busy", String(e));
      await sleep(1200);
      r = await agent.run("Hello?", { store, threadId: thread });
    }
    assert.equal(r.text, "Back.");
    const runs = await store.runs(thread);
    assert.deepEqual(
      runs.map((x) => [x.status, x.error?.code ?? null]),
      [
        ["failed", "interrupted"],
        ["completed", null],
      ],
    );
  });
}

test("a tool call's idempotency key: the thread (or the run) and the call, the same on a retry", async (t) => {
  const seen = [];
  const charge = tool({
    name: "charge",
    description: "Charge a card.",
    parameters: { type: "object", properties: {} },
    execute: async (_args, ctx) => {
      seen.push(ctx.idempotencyKey);
      if (seen.length === 2) throw new Error("the card service is down");
      return "charged";
    },
  });
  const mock = await startMock([
    calls(["c1", "charge", {}]),
    text("done"),
    calls(["c9", "charge", {}]),
    text("done"),
  ]);
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [charge], onToolException: "fail" });
  await agent.run("Charge", { runId: "run_fixed" });
  assert.equal(seen[0], "run_fixed/c1");
  const store = new Store(dbFile(t));
  const thread = await store.createThread();
  await agent.run("Charge", { store, threadId: thread }).catch(() => {});
  await agent.retry(thread, { store });
  assert.deepEqual(seen.slice(1), [`${thread}/c9`, `${thread}/c9`]);
});
