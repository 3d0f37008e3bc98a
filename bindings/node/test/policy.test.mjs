// Each onToolException value, checked on the requests the model received
// (captured by the mock): what the model reads of an unexpected failure.
import assert from "node:assert/strict";
import { test } from "node:test";

import { tool, ToolError, RunError, ConfigError } from "parlance-ai";
import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";
import { agentFor, results, textOf } from "./helpers/agents.mjs";

class LedgerError extends Error {
  constructor(message) {
    super(message);
    this.name = "LedgerError";
  }
}

const boom = tool({
  name: "boom",
  description: "Books a refund.",
  execute: () => {
    throw new LedgerError("ledger db password=hunter2 rejected");
  },
});
const fine = tool({ name: "fine", execute: async () => "fine" });
const refuses = tool({ name: "refuses", execute: () => { throw new ToolError("not today"); } });

function script() {
  return afterTools(calls(["c1", "boom", {}], ["c2", "fine", {}], ["c3", "refuses", {}]), () => text("Sorry."));
}

const sentText = (mock) => JSON.stringify(mock.requests.map((r) => r.body));

test("returnToModel: the model reads the error's name and message", async (t) => {
  const mock = await startMock(script());
  t.after(mock.close);
  const r = await agentFor(mock, { tools: [boom, fine, refuses], onToolException: "returnToModel" }).run("go");
  assert.equal(r.status, "completed");
  const sent = mock.requests[1].body.messages.filter((m) => m.role === "tool");
  assert.deepEqual(sent.map((m) => m.content), ["boom failed: LedgerError: ledger db password=hunter2 rejected", "fine", "not today"]);
  assert.equal(results(r).c1.status, "tool_failed");
});

for (const spelling of ["returnGeneric", "return_generic"]) {
  test(`${spelling}: the model reads only that the tool failed; the detail stays in the artifact`, async (t) => {
    const mock = await startMock(script());
    t.after(mock.close);
    const r = await agentFor(mock, { tools: [boom, fine, refuses], onToolException: spelling }).run("go");
    const sent = mock.requests[1].body.messages.filter((m) => m.role === "tool");
    assert.deepEqual(sent.map((m) => m.content), ["boom failed.", "fine", "not today"]);
    assert.ok(!sentText(mock).includes("hunter2"), "the detail never reaches a model");
    assert.ok(!sentText(mock).includes("LedgerError"));
    assert.deepEqual(results(r).c1.artifact, { error_type: "LedgerError", message: "ledger db password=hunter2 rejected" });
    assert.equal(textOf(results(r).c3), "not today", "a ToolError always goes back to the model");
  });
}

test("fail: the run throws RunError whose cause is the tool's own error", async (t) => {
  const mock = await startMock(script());
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [boom, fine, refuses], onToolException: "fail" });
  const err = await agent.run("go").then(
    () => assert.fail("the run should fail"),
    (e) => e,
  );
  assert.ok(err instanceof RunError, err);
  assert.equal(err.code, "tool_failed");
  assert.ok(err.cause instanceof LedgerError, "the thrown error is the cause");
  assert.equal(err.cause.message, "ledger db password=hunter2 rejected");
  assert.deepEqual(err.detail, { tool: "boom", error_type: "LedgerError", message: "ledger db password=hunter2 rejected" });
  assert.equal(err.response.status, "failed");
  assert.equal(mock.requests.length, 1, "no model call after the failure");
  // The history stays consistent: every call has its result.
  assert.deepEqual(Object.keys(results(err.response)).sort(), ["c1", "c2", "c3"]);
});

test("an unknown policy is a ConfigError naming the values", () => {
  assert.throws(
    () => agentFor({ url: "http://127.0.0.1:9/v1" }, { onToolException: "ignore" }),
    (e) => e instanceof ConfigError && e.message.includes('"returnToModel", "returnGeneric", "fail"'),
  );
});
