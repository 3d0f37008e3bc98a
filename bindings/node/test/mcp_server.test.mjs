// `parlance serve` speaks MCP to the official TypeScript SDK (npm
// `@modelcontextprotocol/sdk` 1.32, protocol 2025-11-25: forms are asked
// during the call, as `elicitation/create` requests): the agents are tools,
// a call that waits for a person is a form the client answers (here:
// answered, the person's result standing in for the tool's), a declined
// form rejects the call, and a client without forms is told where to decide.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { calls, startMock, text } from "./helpers/mock.mjs";
import { TOKEN, serveSupport, toolServer } from "./helpers/protocols.mjs";

async function connect(url, { forms } = {}) {
  const client = new Client({ name: "parlance-test", version: "1.0.0" }, forms ? { capabilities: { elicitation: {} } } : {});
  const shown = [];
  if (forms) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      shown.push(request.params);
      return forms.shift();
    });
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  return { client, shown };
}

test("the MCP TypeScript SDK calls an agent; a waiting call is a form answered during the call", async (t) => {
  const refunds = await toolServer((args) => ({ refund: `#${args.amount}` }));
  t.after(refunds.close);
  const mock = await startMock((body) => {
    const last = body.messages.at(-1);
    if (last.role === "user") return calls([`c${body.messages.length}`, "refund", { amount: 7 }]);
    return text(`The refund: ${last.content}`);
  });
  t.after(mock.close);
  const url = await serveSupport(t, "mcp-server", mock, refunds, refunds);
  if (url === undefined) return;

  const { client, shown } = await connect(url, {
    forms: [
      { action: "accept", content: { decision: "answered", answer: "refund #7 issued by hand" } },
      { action: "decline" },
    ],
  });
  t.after(() => client.close());
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ["support"],
  );
  assert.deepEqual(tools[0].inputSchema.required, ["input"]);

  let r = await client.callTool({ name: "support", arguments: { input: "Refund 7" } });
  assert.equal(r.isError ?? false, false, JSON.stringify(r));
  assert.equal(r.content[0].text, "The refund: refund #7 issued by hand");
  assert.equal(r.structuredContent.status, "completed");
  assert.equal(shown.length, 1);
  assert.equal(shown[0].mode ?? "form", "form");
  assert.match(shown[0].message, /^refund\(\{"amount":7\}\) waits for your decision\.$/u);
  assert.deepEqual(shown[0].requestedSchema.properties.decision.enum, ["approved", "rejected", "edited", "answered"]);
  assert.equal(refunds.got.length, 0, "answered: the tool did not run");

  // Declined: the call is rejected, the model is told.
  r = await client.callTool({ name: "support", arguments: { input: "Refund 7 again", thread_id: r.structuredContent.thread_id } });
  assert.match(r.content[0].text, /declined/u);
  assert.equal(refunds.got.length, 0);

  // A client that answers no forms is told where to decide.
  const plain = await connect(url);
  t.after(() => plain.client.close());
  r = await plain.client.callTool({ name: "support", arguments: { input: "Refund 7" } });
  assert.equal(r.structuredContent.status, "requires_approval");
  assert.match(r.content[0].text, /POST \/v1\/runs\/run_\w+\/decisions/u);
});
