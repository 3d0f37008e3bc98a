// The package as a user meets it: installed from its tarball, imported,
// an agent with a tool run against a local mock of the OpenAI API.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createRequire } from "node:module";

import { Agent, Model, tool, ToolError, ConfigError, Response } from "parlance-ai";
import { z } from "zod";
import { startMock, calls, text } from "./helpers/mock.mjs";

test("an agent with a zod tool runs against the mock: the README's program", async (t) => {
  const mock = await startMock([
    calls(["call_1", "refund", { orderId: "A-1001", amount: 40 }]),
    text("Refunded 40 EUR."),
  ]);
  t.after(mock.close);
  const refund = tool({
    name: "refund",
    description: "Refund an order.",
    parameters: z.object({ orderId: z.string(), amount: z.number().int().min(1).max(500) }),
    execute: async ({ orderId, amount }) => {
      if (orderId.startsWith("X")) throw new ToolError("orders starting with X cannot be refunded");
      return `refunded ${amount} EUR`;
    },
  });
  const agent = new Agent({
    model: new Model("openai:gpt-4o-mini", { baseURL: mock.url, apiKey: "sk-test" }),
    instructions: "You handle refunds.",
    tools: [refund],
    onToolException: "returnGeneric",
  });
  const r = await agent.run("Refund 40 EUR on A-1001");
  assert.equal(r.text, "Refunded 40 EUR.");
  assert.equal(r.status, "completed");
  assert.deepEqual(r.usage, { inputTokens: 40, outputTokens: 20, totalTokens: 60, cachedTokens: 0 });
  assert.equal(r.messages.length, 4);
  assert.equal(mock.requests.length, 2);
  assert.equal(mock.requests[0].headers.authorization, "Bearer sk-test");
  const sent = mock.requests[0].body;
  assert.equal(sent.messages[0].content, "You handle refunds.");
  assert.deepEqual(sent.tools[0].function.parameters, {
    type: "object",
    properties: { orderId: { type: "string" }, amount: { type: "integer", minimum: 1, maximum: 500 } },
    required: ["orderId", "amount"],
  });
  const result = mock.requests[1].body.messages.at(-1);
  assert.deepEqual(result, { role: "tool", tool_call_id: "call_1", content: "refunded 40 EUR" });
  assert.ok(r instanceof Response);
  // The same document (JavaScript spells some numbers its own way: 9e-6 as 0.000009).
  assert.deepEqual(JSON.parse(JSON.stringify(r)), JSON.parse(r.toString()));
});

test("the CommonJS entry point gives the very same classes", () => {
  const require = createRequire(import.meta.url);
  const cjs = require("parlance-ai");
  assert.equal(cjs.Agent, Agent);
  assert.equal(cjs.ToolError, ToolError);
});

test("a model string without its key is a ConfigError before any request", () => {
  const saved = process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_API_KEY;
  try {
    assert.throws(() => new Agent({ model: "openai:gpt-4o-mini" }), (e) => {
      assert.ok(e instanceof ConfigError, e);
      assert.match(e.message, /OPENAI_API_KEY is not set/);
      return true;
    });
  } finally {
    if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
  }
});
