// How a tool call ends, for sync and async tools alike: the outcome table,
// timeouts through the AbortSignal, results in call order, tools that wait
// on the caller's promises, a blocking sync tool next to async ones.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Agent, RunError, tool, ToolError } from "parlance-ai";
import { FunctionModel } from "parlance-ai/testing";
import { z } from "zod";
import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";
import { agentFor, results, textOf, sleep } from "./helpers/agents.mjs";

const schema = z.object({ orderId: z.string(), amount: z.number().int().min(1).max(500) });

function outcomeTools(kind) {
  const wrap = (f) => (kind === "async" ? async (args, ctx) => { await sleep(1); return f(args, ctx); } : f);
  return [
    tool({ name: "value", parameters: schema, execute: wrap(({ amount }) => `refunded ${amount} EUR`) }),
    tool({ name: "object", parameters: schema, execute: wrap(({ orderId }) => ({ orderId, ok: true })) }),
    tool({ name: "refuses", parameters: schema, execute: wrap(() => { throw new ToolError("orders starting with X cannot be refunded"); }) }),
    tool({ name: "crashes", parameters: schema, execute: wrap(() => { throw new TypeError("cannot read amount"); }) }),
    tool({ name: "nothing", parameters: schema, execute: wrap(() => undefined) }),
    tool({
      name: "slow",
      parameters: schema,
      timeout: 200,
      execute: (args, ctx) =>
        new Promise((resolve, reject) => {
          const t = setTimeout(() => resolve("too late"), 5_000);
          ctx.abortSignal.addEventListener("abort", () => {
            clearTimeout(t);
            aborted.push(ctx.abortSignal.reason?.name);
            reject(ctx.abortSignal.reason);
          });
        }),
    }),
  ];
}
const aborted = [];

for (const kind of ["sync", "async"]) {
  test(`the outcome table, ${kind} tools`, async (t) => {
    aborted.length = 0;
    const args = { orderId: "A-1", amount: 40 };
    const mock = await startMock(
      afterTools(
        calls(
          ["c1", "value", args],
          ["c2", "object", args],
          ["c3", "refuses", args],
          ["c4", "crashes", args],
          ["c5", "nothing", args],
          ["c6", "slow", args],
          ["c7", "value", { orderId: "A-1", amount: 900 }],
          ["c8", "nosuch", args],
          ["c9", "value", "{not json"],
        ),
        () => text("Done."),
      ),
    );
    t.after(mock.close);
    const agent = agentFor(mock, { tools: outcomeTools(kind), maxInvalidArguments: 5 });
    const r = await agent.run("go");
    const got = results(r);
    const row = (id) => [got[id].status, textOf(got[id])];
    assert.deepEqual(row("c1"), ["ok", "refunded 40 EUR"]);
    assert.deepEqual(got.c2.content, [{ type: "json", json: { orderId: "A-1", ok: true } }]);
    assert.deepEqual(row("c3"), ["error", "orders starting with X cannot be refunded"]);
    assert.deepEqual(row("c4"), ["tool_failed", "crashes failed: TypeError: cannot read amount"]);
    assert.deepEqual(got.c5.content, []);
    assert.equal(got.c5.status, "ok");
    // JavaScript cannot be stopped from outside: the model is told the
    // truth (the tool here did stop, on its signal, but the engine cannot know).
    assert.deepEqual(row("c6"), ["timeout", "slow timed out after 0.2s; it was told to stop but may still be running, and its result will be discarded"]);
    assert.deepEqual(got.c6.artifact, { timeout: { after_ms: 200, stopped: false } });
    assert.deepEqual(aborted, ["AbortError"], "the tool's AbortSignal was aborted");
    assert.deepEqual(row("c7"), ["invalid_arguments", "Invalid arguments for value:\namount: must be at most 500, got 900"]);
    assert.equal(got.c8.status, "error");
    assert.match(textOf(got.c8), /^unknown tool "nosuch"; available tools: /);
    assert.equal(got.c9.status, "invalid_arguments");
    assert.match(textOf(got.c9), /^Invalid arguments for value:\n\(arguments\): not valid JSON: /);
    // What the model read is what the response holds.
    const sent = mock.requests[1].body.messages.filter((m) => m.role === "tool").map((m) => m.content);
    assert.equal(sent[3], "crashes failed: TypeError: cannot read amount");
  });
}

test("the default timeout is 60 s, and a tool that ignores its signal goes on after its timeout", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "deadline", {}], ["c2", "stubborn", {}]), () => text("ok")));
  t.after(mock.close);
  let left;
  const effects = [];
  let signal;
  const deadline = tool({ name: "deadline", execute: (_args, ctx) => { left = ctx.deadline - Date.now(); return "seen"; } });
  const stubborn = tool({
    name: "stubborn",
    timeout: 100,
    execute: async (_args, ctx) => {
      signal = ctx.signal;
      assert.equal(ctx.signal, ctx.abortSignal, "one signal, two names");
      await sleep(300);
      effects.push("written anyway");
      return "late";
    },
  });
  const r = await agentFor(mock, { tools: [deadline, stubborn] }).run("go");
  // The engine's deadline for a call with no timeout of its own: 60 s.
  assert.ok(left > 59_000 && left <= 60_000, `deadline ${left} ms away`);
  const got = results(r);
  assert.equal(got.c2.status, "timeout");
  assert.match(textOf(got.c2), /may still be running/);
  assert.equal(signal.aborted, true);
  assert.deepEqual(effects, [], "the run ended before the tool did");
  await sleep(400);
  assert.deepEqual(effects, ["written anyway"], "its side effect still happened, as the model was told");
});

test("results come back in call order whatever order the calls finish in", async (t) => {
  const n = 12;
  const delays = Array.from({ length: n }, () => Math.floor(Math.random() * 60));
  const finished = [];
  const mock = await startMock(
    afterTools(calls(...delays.map((d, i) => [`c${i}`, "wait", { i, d }])), () => text("ok")),
  );
  t.after(mock.close);
  const wait = tool({
    name: "wait",
    parameters: { type: "object", properties: { i: { type: "integer" }, d: { type: "integer" } }, required: ["i", "d"] },
    execute: async ({ i, d }) => {
      await sleep(d);
      finished.push(i);
      return `call ${i} after ${d} ms`;
    },
  });
  const r = await agentFor(mock, { tools: [wait] }).run("go");
  const toolMessage = r.messages.find((m) => m.role === "tool");
  assert.deepEqual(
    toolMessage.content.map((b) => b.tool_result.tool_call_id),
    delays.map((_, i) => `c${i}`),
  );
  assert.deepEqual(toolMessage.content.map((b) => b.tool_result.content[0].text), delays.map((d, i) => `call ${i} after ${d} ms`));
  assert.equal(finished.length, n);
});

test("an async tool awaits a promise the caller created", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "approval", {}]), () => text("ok")));
  t.after(mock.close);
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const waited = tool({
    name: "approval",
    execute: async (_args, ctx) => `the caller said ${await ctx.deps.gate}`,
  });
  const run = agentFor(mock, { tools: [waited] }).run("go", { deps: { gate } });
  await sleep(100);
  assert.equal(mock.requests.length, 1, "the run waits for the caller's promise");
  release("yes");
  const r = await run;
  assert.equal(textOf(results(r).c1), "the caller said yes");
});

test("a sync tool that blocks does not stop async tools from finishing", async (t) => {
  const mock = await startMock(
    afterTools(calls(["c1", "fetchish", { n: 1 }], ["c2", "block", { n: 2 }], ["c3", "fetchish", { n: 3 }]), () => text("ok")),
  );
  t.after(mock.close);
  const started = [];
  const fetchish = tool({
    name: "fetchish",
    // The arguments are declared: an undeclared one would be refused.
    parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
    execute: async ({ n }) => {
      started.push(n);
      await sleep(30);
      return `fetched ${n}`;
    },
  });
  const block = tool({
    name: "block",
    // The arguments are declared: an undeclared one would be refused.
    parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
    execute: ({ n }) => {
      const until = Date.now() + 300;
      while (Date.now() < until); // JavaScript is single-threaded: this holds the main thread
      return `blocked ${n}`;
    },
  });
  const r = await agentFor(mock, { tools: [fetchish, block] }).run("go");
  const got = results(r);
  assert.deepEqual(
    ["c1", "c2", "c3"].map((id) => [got[id].status, textOf(got[id])]),
    [["ok", "fetched 1"], ["ok", "blocked 2"], ["ok", "fetched 3"]],
  );
});

test("a tool short of the process's resources (EMFILE) stops the run unread by the model", async () => {
  const asked = [];
  const model = new FunctionModel((messages) => {
    asked.push(messages.length);
    return { content: [{ type: "tool_call", tool_call: { id: "c1", name: "lookup", arguments: {} } }] };
  });
  const lookup = tool({
    name: "lookup",
    description: "Look up.",
    parameters: { type: "object", properties: {} },
    execute: () => {
      const e = new Error("connect EMFILE 127.0.0.1:9 - Local (undefined:undefined)");
      e.code = "EMFILE";
      throw e;
    },
  });
  await assert.rejects(new Agent({ model, tools: [lookup] }).run("Where is A-1?"), (e) => {
    assert.ok(e instanceof RunError, String(e));
    assert.equal(e.code, "server_resources");
    assert.match(e.message, /the server ran out of resources: EMFILE: connect EMFILE/);
    const result = e.response.messages.at(-1).content[0].tool_result;
    assert.equal(result.status, "interrupted");
    return true;
  });
  assert.deepEqual(asked, [1], "the model was not asked again");
});
