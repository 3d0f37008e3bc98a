// What reaches JavaScript through the bindings' shared core
// (bindings/core): streamed runs on stored threads, the store's whole API,
// tools returning content blocks, a stateless retry, and the agent settings
// maxToolOutput and approvalKey.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { Store, StoreError, ConfigError, DecisionError, RunError, Content, tool, approve, format } from "parlance-ai";
import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";
import { agentFor, results } from "./helpers/agents.mjs";

function dbFile(t) {
  const dir = mkdtempSync(join(process.cwd(), "db-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return `sqlite://${join(dir, "threads.db")}`;
}

const refund = tool({
  name: "refund",
  parameters: { type: "object", properties: { amount: { type: "integer" } }, required: ["amount"] },
  needsApproval: true,
  execute: ({ amount }) => `refunded ${amount}`,
});

test("a run on a stored thread streams, and what it did is stored", async (t) => {
  const mock = await startMock([text("Hello there")]);
  t.after(mock.close);
  const url = dbFile(t);
  const store = new Store(url);
  const thread = await store.createThread();
  const events = [];
  for await (const e of agentFor(mock).stream("Hi", { store, threadId: thread })) events.push(e);
  assert.ok(events.some((e) => e.type === "text_delta"));
  const last = events.at(-1);
  assert.equal(last.type, "run_completed");
  assert.equal(last.response.threadId, thread);
  assert.equal(last.response.text, "Hello there");
  const stored = await (await Store.open(url)).messages(thread);
  assert.deepEqual(stored.map((m) => m.role), ["user", "assistant"]);
});

test("a paused thread run resumes as a stream; a refused decision rejects the stream", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "refund", { amount: 3 }]), () => text("Done.")));
  t.after(mock.close);
  const store = await Store.open(dbFile(t));
  const thread = await store.createThread();
  const agent = agentFor(mock, { tools: [refund] });
  const paused = await agent.run("Refund", { store, threadId: thread });
  assert.equal(paused.status, "requires_approval");
  await assert.rejects(
    agent.resumeStream(paused, [{ decision: "approved", tool_call_id: "nope", digest: `sha256:${"0".repeat(64)}` }], { store }).response(),
    DecisionError,
  );
  const done = await agent.resumeStream(paused, [approve("c1")], { store }).response();
  assert.equal(done.text, "Done.");
  assert.deepEqual((await store.runs(thread)).map((r) => r.status), ["completed"]);
});

test("a paused response resumes as a stream without a store: the decided calls are reported", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "refund", { amount: 3 }]), () => text("Done.")));
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [refund] });
  const paused = await agent.run("Refund");
  assert.equal(paused.status, "requires_approval");
  const events = [];
  for await (const e of agent.resumeStream(paused, [approve(paused.pending[0])])) events.push(e);
  const finished = events.filter((e) => e.type === "tool_call_finished");
  assert.deepEqual(
    finished.map((e) => [e.callId ?? e.call_id, e.status]),
    [["c1", "ok"]],
  );
  assert.ok(events.some((e) => e.type === "text_delta"));
  assert.equal(events.at(-1).type, "run_completed");
  assert.equal(events.at(-1).response.text, "Done.");
  // The model read the approved call's result.
  assert.equal(mock.requests.length, 2);
});

test("the store lists, pages and reads threads, runs and waiting runs", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "refund", { amount: 3 }]), () => text("Done.")));
  t.after(mock.close);
  const store = await Store.open(dbFile(t), { lease: 5000, redact: ["sk-secret-value-123"] });
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push(await store.createThread({ n: i }));
  const first = await store.threads({ limit: 2 });
  assert.deepEqual(first.items.map((x) => x.id), ids.slice(0, 2));
  assert.equal(first.next, ids[1]);
  const rest = await store.threads({ after: first.next });
  assert.deepEqual(rest.items.map((x) => x.id), ids.slice(2));
  assert.equal(rest.next, null);
  assert.deepEqual((await store.thread(ids[0])).metadata, { n: 0 });
  const paused = await agentFor(mock, { tools: [refund] }).run("Refund sk-secret-value-123", { store, threadId: ids[0] });
  assert.deepEqual((await store.waitingRuns()).map((w) => w.id), [paused.id]);
  assert.equal((await store.run(paused.id)).status, "requires_approval");
  const page = await store.messagePage(ids[0], { start: 1, limit: 1 });
  assert.deepEqual(page.map((m) => [m.seq, m.message.role]), [[1, "assistant"]]);
  assert.ok(!JSON.stringify(await store.messages(ids[0])).includes("sk-secret-value-123"));
  await assert.rejects(store.deleteThread(ids[0]), (e) => e instanceof StoreError && e.kind === "busy");
  await store.deleteThread(ids[0], { force: true });
  await assert.rejects(store.thread(ids[0]), (e) => e instanceof StoreError && e.kind === "not_found");
  assert.deepEqual(await store.artifacts(ids[1]), []);
  await assert.rejects(store.threads({ limit: 0 }), /limit: expected a whole number from 1 to 1000, got 0/);
  await assert.rejects(Store.open(dbFile(t), { lease: -1 }), /lease: expected a positive number of milliseconds/);
  await assert.rejects(Store.open(dbFile(t), { leese: 1 }), ConfigError);
});

const PNG = Buffer.from("\x89PNG\r\n\x1a\n fake image bytes", "latin1");

test("a tool returning Content gives the model an image, and a malformed block names its path", async (t) => {
  const chart = tool({
    name: "chart",
    parameters: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
    execute: ({ name }) => new Content(`The ${name} chart:`, Content.image({ data: PNG, mediaType: "image/png" })),
  });
  const broken = tool({
    name: "broken",
    parameters: { type: "object", properties: {} },
    execute: () => new Content({ type: "image", image: { dta: "x" } }),
  });
  const hasToolMessage = (body) => body.messages.some((m) => m.role === "tool");
  const mock = await startMock((body) =>
    hasToolMessage(body) ? text("Here it is.") : calls(["c1", "chart", { name: "sales" }], ["c2", "broken", {}]),
  );
  t.after(mock.close);
  // OpenAI Chat takes only text in tool results: the run fails saying so
  // (never silently dropping the image); its messages hold the blocks.
  const failed = await agentFor(mock, { tools: [chart, broken] }).run("Chart?").catch((e) => e);
  assert.ok(failed instanceof RunError, String(failed));
  assert.match(failed.message, /OpenAI Chat tool results take only text, not image blocks/);
  const got = results(failed.response);
  assert.deepEqual(got.c1.content.map((b) => b.type), ["text", "image"]);
  assert.equal(got.c1.content[1].image.media_type, "image/png");
  assert.equal(Buffer.from(got.c1.content[1].image.data, "base64").toString("latin1"), PNG.toString("latin1"));
  assert.equal(got.c2.status, "tool_failed");
  assert.match(JSON.stringify(got.c2), /\(returned content\)\[0\]\.image/);
});

test("a stateless retry runs the failed call again", async (t) => {
  let attempts = 0;
  const flaky = tool({
    name: "flaky",
    parameters: { type: "object", properties: {} },
    execute: () => {
      attempts += 1;
      if (attempts === 1) throw new Error("down");
      return "shipped";
    },
  });
  const mock = await startMock(afterTools(calls(["c1", "flaky", {}]), () => text("It shipped.")));
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [flaky], onToolException: "fail" });
  const failed = await agent.run("Where?").catch((e) => e);
  assert.ok(failed instanceof RunError);
  const r = await agent.retry(undefined, { turns: [failed.response] });
  assert.equal(r.text, "It shipped.");
  assert.equal(attempts, 2);
  await assert.rejects(agent.retry(undefined, {}), /turns: a retry needs/);
});

test("maxToolOutput and approvalKey are agent settings", async (t) => {
  const big = tool({ name: "big", parameters: { type: "object", properties: {} }, execute: () => "x".repeat(5000) });
  const mock = await startMock(afterTools(calls(["c1", "big", {}]), () => text("ok")));
  t.after(mock.close);
  const r = await agentFor(mock, { tools: [big], maxToolOutput: 100 }).run("Go");
  assert.ok(!JSON.stringify(results(r).c1).includes("x".repeat(200)));
  const mock2 = await startMock(afterTools(calls(["c1", "refund", { amount: 1 }]), () => text("ok")));
  t.after(mock2.close);
  const signed = await agentFor(mock2, { tools: [refund], approvalKey: "0123456789abcdef-key" }).run("R", { runId: "run_1" });
  const plain = await agentFor(mock2, { tools: [refund] }).run("R", { runId: "run_1" });
  assert.notEqual(signed.pending[0].digest, plain.pending[0].digest);
  assert.throws(() => agentFor(mock2, { approvalKey: "short" }), /approvalKey: expected a secret of at least 16 bytes/);
  assert.throws(() => agentFor(mock2, { maxToolOutput: 0 }), /maxToolOutput: expected a whole number of at least 1/);
});

test("a rotated approvalKey still verifies what it signed", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "refund", { amount: 1 }]), () => text("Refunded.")));
  t.after(mock.close);
  const [oldKey, newKey] = ["0123456789abcdef-old", "0123456789abcdef-new"];
  const paused = await agentFor(mock, { tools: [refund], approvalKey: oldKey }).run("R", { runId: "run_1" });
  const decision = [approve(paused.pending[0])];
  await assert.rejects(agentFor(mock, { tools: [refund], approvalKey: newKey }).resume(paused, decision), DecisionError);
  const rotated = agentFor(mock, { tools: [refund], approvalKey: newKey, previousApprovalKeys: [oldKey] });
  assert.equal((await rotated.resume(paused, decision)).text, "Refunded.");
  const again = await rotated.run("R", { runId: "run_1" });
  assert.notEqual(again.pending[0].digest, paused.pending[0].digest);
  assert.throws(() => agentFor(mock, { previousApprovalKeys: ["short"] }), /previousApprovalKeys\[0\]: expected a secret of at least 16 bytes/);
});

test("format.convert reads a recorded stream", () => {
  const sse = [
    { type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "c", content: [], usage: { input_tokens: 1, output_tokens: 0 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
    { type: "content_block_stop", index: 0 },
    { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } },
    { type: "message_stop" },
  ]
    .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
    .join("");
  const m = format.convert(sse, { from: "anthropic", to: "canonical", kind: "stream" });
  assert.equal(m.content[0].text, "Hi");
});

test("providers as objects take retries, Azure's and Bedrock's settings", async () => {
  const { OpenAI, Azure, Bedrock } = await import("parlance-ai");
  const m = new OpenAI({ apiKey: "sk-x", retry: { maxRetries: 0, initialBackoff: 10 } }).model("gpt-4o-mini");
  assert.deepEqual([m.provider, m.modelId], ["openai", "gpt-4o-mini"]);
  const b = new Bedrock({ region: "eu-west-1", awsCredentials: { accessKeyId: "A", secretAccessKey: "S" } });
  assert.equal(b.model("anthropic.claude-3-haiku").provider, "bedrock");
  const a = new Azure({ baseURL: "https://x.openai.azure.com/openai", apiVersion: "2024-10-21", apiKey: "k" });
  assert.equal(a.model("gpt-4o").modelId, "gpt-4o");
  assert.throws(() => new OpenAI({ apiKey: "k", retry: { maxRetries: -1 } }).model("m"), /retry\.maxRetries: expected a whole number from 0 to 100/);
  assert.throws(() => new OpenAI({ apiKey: "k", base_url: "x" }).model("m"), /unknown setting "base_url" \(known: baseURL/);
});

test("a checkpoint is handed each step, awaited, and what it throws fails the run", async () => {
  const { ScriptedModel } = await import("parlance-ai/testing");
  const { Agent, RunError } = await import("parlance-ai");
  const script = () =>
    new ScriptedModel([{ content: [{ type: "tool_call", tool_call: { id: "c1", name: "refund", arguments: { amount: 80 } } }] }, "Refunded."]);
  const steps = [];
  const keep = async (step) => {
    await new Promise((r) => setTimeout(r, 5));
    steps.push(`${step.kind} ${step.message.role}`);
  };
  const agent = new Agent({ model: script(), tools: [refund] });
  const paused = await agent.run("Refund 80", { checkpoint: keep });
  assert.equal(paused.status, "requires_approval");
  assert.deepEqual(steps, ["append assistant", "append tool"]);
  const events = [];
  for await (const e of agent.resumeStream(paused, [approve(paused.pending[0])], { checkpoint: keep })) events.push(e);
  assert.equal(events.at(-1).response.text, "Refunded.");
  assert.deepEqual(steps, ["append assistant", "append tool", "replaceLast tool", "append assistant"]);

  await assert.rejects(
    new Agent({ model: script(), tools: [refund] }).run("Refund 80", {
      checkpoint: () => {
        throw new RangeError("disk full");
      },
    }),
    (e) => e instanceof RunError && e.code === "store" && /checkpoint threw RangeError: disk full/.test(e.message),
  );
  const store = new Store("sqlite::memory:");
  const thread = await store.createThread();
  await assert.rejects(
    new Agent({ model: script() }).run("hi", { store, threadId: thread, checkpoint: keep }),
    (e) => e instanceof ConfigError && /checkpoint: a run on a stored thread is checkpointed by its store/.test(e.message),
  );
  assert.throws(
    () => new Agent({ model: script() }).stream("hi", { checkpoint: "keep" }),
    (e) => e instanceof ConfigError && /checkpoint: expected a function of each step, got/.test(e.message),
  );
});
