// The embedded local model ("local", llama.cpp in the native module)
// from TypeScript, offline: a tool call whose arguments the grammar keeps
// to the tool's schema, run by the engine, then an answer; a structured
// output. Needs the default model in the cache (pullLocalModel() or
// `parlance model pull`); with PARLANCE_REQUIRE_MODEL=1 (scripts/test) a
// missing model fails instead of skipping.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";

import { Agent, localModelPath, tool } from "parlance-ai";

const path = localModelPath();
assert.ok(path !== null, "the native module was built without the local model");
const skip = existsSync(path) ? false : `no local model at ${path}`;
if (skip && process.env.PARLANCE_REQUIRE_MODEL) {
  throw new Error(`PARLANCE_REQUIRE_MODEL is set but ${path} is missing (pullLocalModel())`);
}

const lookupOrder = tool({
  name: "lookup_order",
  description: "Looks an order up by its id.",
  parameters: {
    type: "object",
    properties: { order_id: { type: "string", pattern: "^A-[0-9]{4}$" } },
    required: ["order_id"],
    additionalProperties: false,
  },
  execute: ({ order_id }) => ({ order_id, status: "shipped" }),
});

test("the local model calls a tool with schema-valid arguments, then answers", { skip }, async () => {
  const agent = new Agent({ model: "local", instructions: "You help customers with their orders.", tools: [lookupOrder] });
  const r = await agent.run("Where is my order A-1001?");
  assert.equal(r.status, "completed");
  const call = r.messages[1].content.find((b) => b.type === "tool_call").tool_call;
  assert.equal(call.name, "lookup_order");
  assert.match(call.arguments.order_id, /^A-[0-9]{4}$/);
  assert.equal(r.messages[2].content[0].tool_result.status ?? "ok", "ok", "the engine validated and ran it");
  assert.ok(typeof r.output === "string" && r.output.length > 0, "an answer after the result");
  assert.ok(r.usage.inputTokens > 0 && r.usage.outputTokens > 0);
  assert.equal(r.messages.at(-1).provider, "local");
});

test("a structured output from the local model", { skip }, async () => {
  const schema = {
    type: "object",
    properties: { city: { type: "string", minLength: 1 }, country: { type: "string" } },
    required: ["city", "country"],
    additionalProperties: false,
  };
  const r = await new Agent({ model: "local", outputSchema: { name: "place", schema } }).run("What is the capital of France?");
  assert.equal(r.status, "completed");
  assert.ok(typeof r.output.city === "string" && r.output.city.length > 0);
});
