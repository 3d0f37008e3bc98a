// Toolsets written in TypeScript, through the packed package: a function
// the agent asks before each model call for its tools, given the run's
// deps (sync and async); tools that come and go between calls; a name the
// agent also offers is prefixed; a throw, or a value that is not a tool,
// fails the run naming the toolset.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Agent, ConfigError, RunError, Toolset, tool } from "parlance-ai";
import { FunctionModel } from "parlance-ai/testing";

const params = { type: "object", properties: { order_id: { type: "string" } }, required: ["order_id"] };
const lookup = tool({ name: "lookup", description: "Looks an order up.", parameters: params, execute: ({ order_id }) => `${order_id}: shipped` });
const refund = tool({ name: "refund", description: "Refunds an order.", parameters: params, execute: ({ order_id }) => `${order_id}: refunded` });
const call = (id, name, order_id) => ({ type: "tool_call", tool_call: { id, name, arguments: { order_id } } });
const texts = (r) => r.messages.flatMap((m) => m.content.filter((b) => b.type === "tool_result").map((b) => b.tool_result.content[0].text));

test("tools are asked for before each model call, with the run's deps", async () => {
  const asked = [];
  const offered = [];
  const toolsFor = (deps) => {
    asked.push(deps);
    return asked.length > 1 && deps.canRefund ? [lookup, refund] : [lookup];
  };
  const model = new FunctionModel((messages, { tools }) => {
    offered.push(tools.map((t) => t.name));
    if (offered.length === 1) return { content: [call("c1", "lookup", "A-1")] };
    if (offered.length === 2) return { content: [call("c2", "refund", "A-1")] };
    return "Refunded.";
  });
  const r = await new Agent({ model, toolsets: [new Toolset(toolsFor)] }).run("Refund A-1", { deps: { canRefund: true } });
  assert.equal(r.text, "Refunded.");
  assert.deepEqual(offered, [["lookup"], ["lookup", "refund"], ["lookup", "refund"]]);
  assert.deepEqual(asked, [{ canRefund: true }, { canRefund: true }, { canRefund: true }]);
  assert.deepEqual(texts(r), ["A-1: shipped", "A-1: refunded"]);
});

test("an async toolset, and a name the agent also offers is prefixed", async () => {
  const other = tool({ name: "lookup", description: "The warehouse's lookup.", parameters: params, execute: () => "in the warehouse" });
  const warehouse = async () => {
    await new Promise((r) => setTimeout(r, 1));
    return [other];
  };
  const offered = [];
  const model = new FunctionModel((messages, { tools }) => {
    offered.push(tools.map((t) => t.name));
    return offered.length === 1 ? { content: [call("c1", "warehouse_lookup", "A-2"), call("c2", "lookup", "A-2")] } : "ok";
  });
  const agent = new Agent({ model, tools: [lookup], toolsets: [new Toolset(warehouse)] });
  const r = await agent.run("Where is A-2?");
  assert.equal(r.text, "ok");
  assert.deepEqual(offered[0], ["lookup", "warehouse_lookup"]);
  assert.deepEqual(texts(r), ["in the warehouse", "A-2: shipped"]);
});

test("a failing toolset fails the run, naming it", async () => {
  const model = new FunctionModel(() => "hi");
  await assert.rejects(
    new Agent({ model, toolsets: [new Toolset(() => { throw new RangeError("no flags"); }, { name: "flags" })] }).run("hi"),
    (e) => e instanceof RunError && /tools_unavailable/.test(e.message) && /toolset "flags": its function threw RangeError: no flags/.test(e.message),
  );
  await assert.rejects(
    new Agent({ model, toolsets: [new Toolset(() => ["lookup"], { name: "flags" })] }).run("hi"),
    (e) => e instanceof RunError && /toolset "flags": its function threw TypeError: \[0\]: expected a tool made by tool/.test(e.message),
  );
  assert.throws(() => new Toolset([lookup]), (e) => e instanceof ConfigError && /Toolset: expected a function returning tools/.test(e.message));
});
