// Approvals: the four decisions; a paused run stored as JSON and resumed by
// a fresh agent; refused decisions; a needsApproval function; a paused run
// written by Python and Rust (testdata/paused) resumed here, one written here.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { tool, approve, edit, reject, answer, DecisionError, Response } from "parlance-ai";
import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";
import { agentFor, results, textOf } from "./helpers/agents.mjs";

const ran = [];
const refund = tool({
  name: "refund",
  description: "Refund an order.",
  parameters: {
    type: "object",
    properties: { order_id: { type: "string" }, amount: { type: "integer", minimum: 1, maximum: 500 } },
    required: ["order_id", "amount"],
  },
  needsApproval: true,
  execute: ({ order_id, amount }) => {
    ran.push({ order_id, amount });
    return `refunded ${amount} EUR on ${order_id}`;
  },
});

const FOUR = calls(
  ["c1", "refund", { order_id: "A-1", amount: 10 }],
  ["c2", "refund", { order_id: "A-2", amount: 20 }],
  ["c3", "refund", { order_id: "A-3", amount: 30 }],
  ["c4", "refund", { order_id: "A-4", amount: 40 }],
);

test("the four decisions, on a paused run stored as JSON and resumed by a fresh agent", async (t) => {
  ran.length = 0;
  const mock = await startMock(afterTools(FOUR, () => text("Done.")));
  t.after(mock.close);
  const paused = await agentFor(mock, { tools: [refund] }).run("Refund them");
  assert.equal(paused.status, "requires_approval");
  assert.deepEqual(paused.pending.map((p) => p.tool_call_id), ["c1", "c2", "c3", "c4"]);
  assert.deepEqual(paused.pending[1].arguments, { order_id: "A-2", amount: 20 });
  assert.match(paused.pending[0].digest, /^sha256:/);
  assert.deepEqual(ran, [], "nothing runs before a decision");

  const stored = paused.toString();
  const r = await agentFor(mock, { tools: [refund] }).resume(stored, [
    approve("c1"),
    edit(paused.pending[1], { order_id: "A-2", amount: 15 }),
    reject("c3", "not this one"),
    answer("c4", "refunded by hand"),
  ]);
  assert.equal(r.status, "completed");
  assert.equal(r.text, "Done.");
  // The approved and the edited call ran, each once; they run at once, so
  // in either order (their results are in call order).
  assert.deepEqual(
    [...ran].sort((a, b) => a.order_id.localeCompare(b.order_id)),
    [{ order_id: "A-1", amount: 10 }, { order_id: "A-2", amount: 15 }],
  );
  const got = results(r);
  assert.deepEqual(
    ["c1", "c2", "c3", "c4"].map((id) => [got[id].status, textOf(got[id]), got[id].approval.decision]),
    [
      ["ok", "refunded 10 EUR on A-1", "approved"],
      ["ok", "refunded 15 EUR on A-2", "edited"],
      ["rejected", "The reviewer rejected this call: not this one", "rejected"],
      ["ok", "refunded by hand", "answered"],
    ],
  );
  assert.deepEqual(got.c2.approval.arguments, { order_id: "A-2", amount: 15 });
});

test("decisions may come one at a time; undecided calls stay pending", async (t) => {
  const mock = await startMock(afterTools(FOUR, () => text("Done.")));
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [refund] });
  const paused = await agent.run("Refund them");
  const partly = await agent.resume(paused, [approve("c1"), approve("c2")]);
  assert.equal(partly.status, "requires_approval");
  assert.deepEqual(partly.pending.map((p) => p.tool_call_id), ["c3", "c4"]);
  const done = await agent.resume(partly, [reject("c3"), reject("c4")]);
  assert.equal(done.status, "completed");
});

test("refused decisions throw DecisionError naming the decision, and nothing runs", async (t) => {
  ran.length = 0;
  const mock = await startMock(afterTools(FOUR, () => text("Done.")));
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [refund] });
  const paused = await agent.run("Refund them");
  const refused = async (decisions, path) => {
    const e = await agent.resume(paused, decisions).then(() => assert.fail("accepted"), (e) => e);
    assert.ok(e instanceof DecisionError, e);
    assert.equal(e.path, path, e.message);
    assert.ok(e.message.startsWith(`${path}: `), e.message);
    return e;
  };
  await refused([approve("nope")], "decisions[0].tool_call_id");
  await refused([approve("c1"), approve("c1")], "decisions[1].tool_call_id");
  await refused([{ ...approve("c1"), digest: "sha256:00" }], "decisions[0].digest");
  await refused([edit("c2", { order_id: "A-2", amount: 900 })], "decisions[0].arguments");
  assert.deepEqual(ran, []);
  const bad = await agent.resume(paused, [{ tool_call_id: "c1", decision: "maybe", digest: "x" }]).catch((e) => e);
  assert.equal(bad.name, "FormatError");
  assert.match(bad.message, /^decisions\[0\]\.decision: /);
});

test("needsApproval as a function of the arguments", async (t) => {
  const pay = tool({
    name: "pay",
    parameters: { type: "object", properties: { amount: { type: "integer" } }, required: ["amount"] },
    needsApproval: ({ amount }) => amount > 100,
    execute: ({ amount }) => `paid ${amount}`,
  });
  const mock = await startMock(afterTools(calls(["c1", "pay", { amount: 50 }], ["c2", "pay", { amount: 500 }]), () => text("ok")));
  t.after(mock.close);
  const paused = await agentFor(mock, { tools: [pay] }).run("pay");
  assert.equal(paused.status, "requires_approval");
  assert.deepEqual(paused.pending.map((p) => p.tool_call_id), ["c2"]);
  assert.equal(textOf(results(paused).c1), "paid 50");
});

const paused = (name) => join(process.env.PARLANCE_REPO, "testdata/paused", name);

test("a run paused by Node is the checked-in fixture Rust and Python resume", async (t) => {
  const mock = await startMock(afterTools(calls(["call_1", "refund", { order_id: "A-1001", amount: 20 }]), () => text("x")));
  t.after(mock.close);
  const r = await agentFor(mock, { tools: [refund] }).run("Refund 20 EUR on A-1001", { runId: "run_paused_by_node" });
  assert.equal(r.status, "requires_approval");
  // Indented as Rust's and Python's fixtures are (serde_json's pretty form).
  const written = `${JSON.stringify(JSON.parse(r.toString()), null, 2)}\n`;
  if (process.env.PARLANCE_UPDATE_FIXTURES) writeFileSync(paused("paused-by-node.json"), written);
  assert.equal(readFileSync(paused("paused-by-node.json"), "utf8"), written, "paused-by-node.json drifted: run with PARLANCE_UPDATE_FIXTURES=1 and commit");
});

const DECISIONS = JSON.parse(readFileSync(paused("decisions.json"), "utf8"));

/** The decision of testdata/paused/decisions.json, made with Node's helpers. */
function decided(d, callId) {
  switch (d.decision) {
    case "approved": return approve(callId);
    case "edited": return edit(callId, d.arguments);
    case "rejected": return reject(callId, d.reason);
    default: return answer(callId, d.content);
  }
}

for (const file of ["paused-by-rust.json", "paused-by-python.json"]) {
  for (const c of DECISIONS) {
    test(`a run in ${file} resumes in Node: ${c.decision.decision}`, async (t) => {
      ran.length = 0;
      const stored = readFileSync(paused(file), "utf8");
      const mock = await startMock(() => text("Done."));
      t.after(mock.close);
      const r = await agentFor(mock, { tools: [refund] }).resume(stored, [decided(c.decision, "call_1")]);
      assert.equal(r.status, "completed");
      assert.equal(r.id, JSON.parse(stored).id);
      const got = results(r).call_1;
      assert.equal(got.status, c.status);
      assert.equal(textOf(got), c.text);
      assert.deepEqual(ran, c.ran);
      assert.equal(mock.requests[0].body.messages[0].content, "Refund 20 EUR on A-1001");
    });
  }
}

test("a run paused by Python resumes in Node", async (t) => {
  ran.length = 0;
  const stored = readFileSync(join(process.env.PARLANCE_REPO, "testdata/paused/paused-by-python.json"), "utf8");
  const mock = await startMock(() => text("Refunded."));
  t.after(mock.close);
  const paused = Response.fromJSON(stored);
  assert.equal(paused.id, "run_paused_by_python");
  const r = await agentFor(mock, { tools: [refund] }).resume(paused, [approve("call_1")]);
  assert.equal(r.status, "completed");
  assert.equal(r.id, "run_paused_by_python");
  assert.deepEqual(ran, [{ order_id: "A-1001", amount: 20 }]);
  assert.equal(textOf(results(r).call_1), "refunded 20 EUR on A-1001");
  // The request the model got carries the whole history, Python's part included.
  assert.equal(mock.requests[0].body.messages[0].content, "Refund 20 EUR on A-1001");
});

test("a run paused by Rust resumes in Node", async (t) => {
  ran.length = 0;
  const stored = readFileSync(join(process.env.PARLANCE_REPO, "testdata/paused/paused-by-rust.json"), "utf8");
  const mock = await startMock(() => text("Refunded."));
  t.after(mock.close);
  const r = await agentFor(mock, { tools: [refund] }).resume(stored, [approve("call_1")]);
  assert.equal(r.id, "run_paused_by_rust");
  assert.deepEqual(ran, [{ order_id: "A-1001", amount: 20 }]);
});
