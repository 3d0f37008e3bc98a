// Agents that call agents (`agent.asTool(...)`): in memory, the caller's
// model reads only the sub-agent's output and what it spent rolls up; on a
// store (a real SQLite file, and PostgreSQL), a sub-agent's approval is
// listed in its caller's place, decided through the caller by a fresh
// store and fresh agents, and both runs finish; a forged decision runs
// nothing.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { Agent, AgentTool, ConfigError, DecisionError, Store, tool, approve } from "parlance-ai";
import { FunctionModel } from "parlance-ai/testing";

function storeUrl(t, backend) {
  if (backend === "sqlite") {
    const dir = mkdtempSync(join(process.cwd(), "db-"));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    return `sqlite://${join(dir, "threads.db")}`;
  }
  const url = process.env.PARLANCE_TEST_POSTGRES_URL;
  if (!url && process.env.PARLANCE_REQUIRE_POSTGRES) {
    throw new Error("PARLANCE_REQUIRE_POSTGRES is set but PARLANCE_TEST_POSTGRES_URL is not");
  }
  if (!url) t.skip("no PostgreSQL (set PARLANCE_TEST_POSTGRES_URL)");
  return url;
}

const call = (id, name, args) => ({ content: [{ type: "tool_call", tool_call: { id, name, arguments: args } }] });
const answered = (messages) => messages.some((m) => m.role === "tool");

function researcher(refunds) {
  const refund = tool({
    name: "refund",
    description: "Refund the order.",
    parameters: { type: "object", properties: { amount: { type: "integer" } }, required: ["amount"] },
    needsApproval: true,
    execute: ({ amount }) => {
      refunds.push(amount);
      return `refunded ${amount}`;
    },
  });
  const model = new FunctionModel((messages) => (answered(messages) ? "Refunded 20 on A-7." : call("r1", "refund", { amount: 20 })));
  return new Agent({ model, name: "researcher", instructions: "You refund orders.", tools: [refund] });
}

function support(child, seen = []) {
  const model = new FunctionModel((messages) => {
    seen.push(messages);
    return answered(messages) ? "Your refund is done." : call("p1", "researcher", { input: "Refund 20 on order A-7" });
  });
  return new Agent({ model, name: "support", tools: [child.asTool({ description: "Refunds orders." })] });
}

test("the caller reads only the sub-agent's output, and its usage rolls up", async () => {
  const sent = [];
  const child = new Agent({
    model: new FunctionModel((messages) => {
      sent.push(messages);
      return { content: [{ type: "text", text: "Order 7 shipped." }], usage: { input_tokens: 100, output_tokens: 1 } };
    }),
    name: "researcher",
    instructions: "You look orders up.",
  });
  const seen = [];
  const parent = support(child, seen);
  const r = await parent.run("Where is order 7?");
  assert.equal(r.text, "Your refund is done.");
  const result = seen[1].at(-1).content[0].tool_result;
  assert.deepEqual(result.content, [{ type: "text", text: "Order 7 shipped." }]);
  assert.deepEqual(sent[0].map((m) => m.role), ["system", "user"]);
  assert.equal(sent[0][1].content[0].text, "Refund 20 on order A-7");
  assert.equal(r.usage.inputTokens, 100);
  const [t] = parent.tools;
  assert.ok(t instanceof AgentTool);
  assert.equal(t.name, "researcher");
  assert.deepEqual(t.spec.inputSchema.required, ["input"]);
});

test("a sub-agent cannot wait for approval without a store, and says so", async () => {
  const r = await support(researcher([])).run("Refund order A-7");
  const result = r.messages[2].content[0].tool_result;
  assert.equal(result.status, "tool_failed");
  assert.match(result.content[0].text, /waits for a decision on refund/);
});

test("asTool needs a name and takes known options only", () => {
  const nameless = new Agent({ model: new FunctionModel(() => "hi") });
  assert.throws(() => nameless.asTool(), (e) => e instanceof ConfigError && /asTool: give the tool a name/.test(e.message));
  assert.throws(() => researcher([]).asTool({ timout: 5 }), /asTool: unknown option "timout"/);
  assert.throws(() => researcher([]).asTool({ timeout: -1 }), /timeout: expected a positive number/);
});

for (const backend of ["sqlite", "postgres"]) {
  test(`a sub-agent's approval is decided through its caller (${backend})`, async (t) => {
    const url = storeUrl(t, backend);
    if (!url) return;
    const refunds = [];
    const store = await Store.open(url);
    const thread = await store.createThread();
    const paused = await support(researcher(refunds)).run("Refund order A-7", { store, threadId: thread });
    assert.equal(paused.status, "requires_approval");
    assert.equal(paused.pending.length, 1);
    const [request] = paused.pending;
    assert.equal(request.name, "refund");
    assert.ok(request.run_id && request.run_id !== paused.id);
    assert.equal((await store.run(request.run_id)).status, "requires_approval");

    // A forged decision runs nothing.
    await assert.rejects(
      support(researcher(refunds)).resume(paused, [{ tool_call_id: "r1", digest: "sha256:00", decision: "approved" }], { store }),
      DecisionError,
    );
    assert.deepEqual(refunds, []);

    // Another process: a fresh store and fresh agents.
    const seen = [];
    const other = await Store.open(url);
    const done = await support(researcher(refunds), seen).resume(paused.toString(), [approve(request)], { store: other });
    assert.equal(done.status, "completed");
    assert.equal(done.text, "Your refund is done.");
    assert.deepEqual(refunds, [20]);
    assert.equal((await store.run(request.run_id)).status, "completed");
    const result = seen[0].at(-1).content[0].tool_result;
    assert.deepEqual(result.content, [{ type: "text", text: "Refunded 20 on A-7." }]);
  });
}

test("the sub-agent's tools get the caller's deps", async () => {
  const whoami = tool({
    name: "whoami",
    description: "Who asks.",
    parameters: { type: "object", properties: {} },
    execute: (_args, ctx) => ctx.deps.name,
  });
  const child = new Agent({
    model: new FunctionModel((messages) => (answered(messages) ? messages.at(-1).content[0].tool_result.content[0].text : call("w1", "whoami", {}))),
    name: "researcher",
    tools: [whoami],
  });
  const r = await support(child).run("who?", { deps: { name: "ada" } });
  assert.deepEqual(r.messages[2].content[0].tool_result.content, [{ type: "text", text: "ada" }]);
});

function billing(seen) {
  const model = new FunctionModel((messages) => {
    seen.push(messages);
    return seen.length === 1 ? "Billing here." : "Still billing.";
  });
  return new Agent({ model, name: "billing", instructions: "You handle billing.", description: "Refunds." });
}

function frontDesk(to, asked) {
  const model = new FunctionModel((messages, info) => {
    asked.push(info.tools.map((t) => [t.name, t.description]));
    return call("h1", "transfer_to_billing", {});
  });
  return new Agent({ model, name: "support", handoffs: [to] });
}

test("a handoff gives the run and the next turns to the other agent", async () => {
  const seen = [];
  const asked = [];
  const support = frontDesk(billing(seen), asked);
  const first = await support.run("A refund, please");
  assert.equal(first.text, "Billing here.");
  assert.equal(first.handoff, "billing");
  assert.deepEqual(asked, [[["transfer_to_billing", "Hand the conversation to the billing agent: Refunds."]]]);
  assert.deepEqual(seen[0][0], { role: "system", content: [{ type: "text", text: "You handle billing." }] });
  const tool = first.messages.find((m) => m.role === "tool");
  assert.deepEqual(tool.metadata.handoff, { from: "support", to: "billing" });
  const second = await support.run("And the invoice?", { turns: [first] });
  assert.equal(second.text, "Still billing.");
  assert.equal(second.handoff, null);
  assert.equal(asked.length, 1, "support was asked once");
});

for (const backend of ["sqlite", "postgres"]) {
  test(`a handoff on a store keeps the thread with the other agent (${backend})`, async (t) => {
    const url = storeUrl(t, backend);
    if (!url) return;
    const store = await Store.open(url);
    const thread = await store.createThread();
    const seen = [];
    const asked = [];
    const first = await frontDesk(billing(seen), asked).run("A refund, please", { store, threadId: thread });
    assert.equal(first.handoff, "billing");
    assert.equal((await store.run(first.id)).handoff, "billing");
    const second = await frontDesk(billing(seen), asked).run("And the invoice?", { store, threadId: thread });
    assert.equal(second.text, "Still billing.");
    assert.equal(asked.length, 1);
  });
}

test("handoffs are agents with names", () => {
  const model = new FunctionModel(() => "hi");
  assert.throws(() => new Agent({ model, handoffs: ["billing"] }), /handoffs\[0\]: expected an Agent/);
  assert.throws(() => new Agent({ model, handoffs: [new Agent({ model })] }), /handoffs\[0\]: the agent has no name/);
});
