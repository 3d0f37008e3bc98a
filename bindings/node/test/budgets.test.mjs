// Budgets (issue 31) through the packed tarball and the OpenAI mock on
// 127.0.0.1 (30 tokens an answer): a run at its limit answers once without tools, then throws
// budget_exhausted; "stop" asks nothing more; an owner's budget holds
// across threads of a store; bad budgets name the setting.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ConfigError, RunError, Store, tool } from "parlance-ai";
import { startMock, calls, text } from "./helpers/mock.mjs";
import { agentFor } from "./helpers/agents.mjs";

const getOrder = tool({
  name: "get_order",
  description: "Look up an order.",
  parameters: { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] },
  execute: async ({ order_id }) => `${order_id} shipped`,
});

const failure = async (p) => {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.fail("the run did not fail");
};

test("a run at its limit answers once without tools, then throws budget_exhausted", async (t) => {
  const mock = await startMock([
    calls(["c1", "get_order", { order_id: "A-1" }]),
    calls(["c2", "get_order", { order_id: "A-2" }]),
    text("A-1 and A-2 shipped; I stopped there."),
  ]);
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [getOrder], budget: { run: { toolCalls: 2 } } });
  const e = await failure(agent.run("Where are A-1 and A-2?"));
  assert.ok(e instanceof RunError, e);
  assert.equal(e.code, "budget_exhausted");
  assert.match(e.message, /the run's budget is exhausted: 2 of 2 tool calls/);
  assert.deepEqual(e.detail, { scope: "run", measure: "tool_calls", limit: 2, spent: 2 });
  const last = e.response.messages.at(-1);
  assert.equal(last.role, "assistant");
  assert.deepEqual(last.content, [{ type: "text", text: "A-1 and A-2 shipped; I stopped there." }]);
  assert.equal(mock.requests.length, 3);
  const closing = mock.requests[2].body;
  assert.ok(!closing.tools || closing.tools.length === 0, JSON.stringify(closing.tools));
  assert.match(closing.messages.at(-1).content, /No tool can be called any more/);
});

test("onExhausted: stop asks nothing more", async (t) => {
  const mock = await startMock([calls(["c1", "get_order", { order_id: "A-1" }])]);
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [getOrder], budget: { run: { tokens: 30 }, onExhausted: "stop" } });
  const e = await failure(agent.run("Go"));
  assert.match(e.message, /the run's budget is exhausted: 30 of 30 tokens/);
  assert.equal(mock.requests.length, 1);
});

test("an owner's daily budget holds across threads of a store", async (t) => {
  const mock = await startMock(() => text("Hi."));
  t.after(mock.close);
  const store = new Store("sqlite::memory:");
  const agent = agentFor(mock, { budget: { ownerDay: { tokens: 60 } } });
  const first = await store.createThread({}, { owner: "alice" });
  const second = await store.createThread(undefined, { owner: "alice" });
  const bobs = await store.createThread({}, { owner: "bob" });
  await agent.run("One", { store, threadId: first });
  await agent.run("Two", { store, threadId: second });
  const e = await failure(agent.run("Three", { store, threadId: second }));
  assert.equal(e.code, "budget_exhausted");
  assert.match(e.message, /the owner's budget for today \(UTC\) is exhausted: 60 of 60 tokens/);
  assert.equal(mock.requests.length, 2, "no model asked once the budget was spent");
  await agent.run("Bob's", { store, threadId: bobs });
  const spent = await store.spent(second);
  assert.equal(spent.thread.tokens, 30);
  assert.deepEqual(spent.ownerDay, spent.ownerMonth);
  assert.equal(spent.ownerDay.tokens, 60);
  assert.equal(spent.ownerDay.modelCalls, 2);
  assert.equal((await store.spent(bobs)).ownerDay.tokens, 30);
  assert.deepEqual((await store.runs(second)).map((r) => r.status), ["completed", "failed"]);
});

test("a budget that cannot be used names the setting", async (t) => {
  const mock = await startMock([]);
  t.after(mock.close);
  for (const [budget, message] of [
    [{ run: { cost: -1 } }, "budget.run.cost: expected a number of US dollars, 0 or more, got -1"],
    [{ thread: { tokens: 1.5 } }, "budget.thread.tokens: expected a whole number, 0 or more, got 1.5"],
    [{ day: {} }, "budget.day: unknown field (known: run, thread, owner_day, owner_month, on_exhausted)"],
    [{ onExhausted: "explain" }, 'budget.onExhausted: expected "answer" or "stop", got "explain"'],
  ]) {
    assert.throws(() => agentFor(mock, { budget }), (e) => e instanceof ConfigError && e.message === message);
  }
});
