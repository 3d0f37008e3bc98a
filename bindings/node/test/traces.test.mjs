// Traces from TypeScript: exportTraces sends the GenAI spans of a run to an
// OTLP collector (a receiver on 127.0.0.1 here, speaking OTLP/HTTP JSON):
// one trace, invoke_agent the parent of the chat and execute_tool spans,
// the failed call's span in error, the service name given; the runtime's
// logs still reach the logger once a subscriber is installed; a second
// export and bad settings are refused. (node --test runs each file in a
// process of its own: the export is this process's only one.)
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { Agent, ConfigError, exportTraces, setLogger, tool } from "parlance-ai";
import { FunctionModel } from "parlance-ai/testing";
import { startMock, text } from "./helpers/mock.mjs";
import { agentFor, sleep } from "./helpers/agents.mjs";

async function collector(t) {
  const bodies = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces") bodies.push(JSON.parse(Buffer.concat(chunks).toString()));
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  const spans = () => bodies.flatMap((b) => b.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)));
  const services = () =>
    bodies.flatMap((b) => b.resourceSpans.flatMap((rs) => rs.resource.attributes.filter((a) => a.key === "service.name").map((a) => a.value.stringValue)));
  return { url: `http://127.0.0.1:${server.address().port}`, spans, services };
}

const attribute = (span, key) => {
  const a = (span.attributes ?? []).find((x) => x.key === key);
  return a === undefined ? undefined : Object.values(a.value)[0];
};

test("settings that cannot work are refused", () => {
  const refused = (f, re) => assert.throws(f, (e) => e instanceof ConfigError && re.test(e.message));
  refused(() => exportTraces({ endpoint: "localhost:4318" }), /traces: endpoint: expected an http:\/\/ or https:\/\/ URL, got "localhost:4318"/);
  refused(() => exportTraces({ endpoint: "http://127.0.0.1:4318", protocol: "grpc" }), /traces: protocol: expected http\/protobuf or http\/json, got "grpc"/);
  refused(() => exportTraces({ endpoint: "http://127.0.0.1:4318", service_name: "x" }), /traces: unknown setting "service_name" \(known: endpoint, headers, serviceName, protocol\)/);
  refused(() => exportTraces("http://127.0.0.1:4318"), /exportTraces: expected options/);
});

test("a run is one span tree at the collector, and logs still reach the logger", async (t) => {
  const c = await collector(t);
  const lookup = tool({ name: "lookup", parameters: { type: "object", properties: { order_id: { type: "string" } } }, execute: () => "shipped" });
  const refund = tool({
    name: "refund",
    parameters: { type: "object", properties: { order_id: { type: "string" } } },
    execute: () => {
      throw new Error("the payment service is down");
    },
  });
  const answer = (messages) =>
    messages.at(-1).role !== "tool"
      ? {
          content: [
            { type: "tool_call", tool_call: { id: "c1", name: "lookup", arguments: { order_id: "A-1" } } },
            { type: "tool_call", tool_call: { id: "c2", name: "refund", arguments: { order_id: "A-1" } } },
          ],
        }
      : "Done.";
  const traces = exportTraces({ endpoint: c.url, serviceName: "shop-js", protocol: "http/json" });
  assert.throws(() => exportTraces({ endpoint: c.url }), (e) => e instanceof ConfigError && /already exports its traces/.test(e.message));
  const r = await new Agent({ model: new FunctionModel(answer), name: "support", tools: [lookup, refund] }).run("Refund A-1");
  assert.equal(r.text, "Done.");
  await traces.flush();

  assert.deepEqual([...new Set(c.services())], ["shop-js"]);
  const spans = c.spans();
  assert.deepEqual([...new Set(spans.map((s) => s.name))].sort(), ["chat answer", "execute_tool lookup", "execute_tool refund", "invoke_agent support"]);
  assert.equal(spans.filter((s) => s.name === "chat answer").length, 2);
  const root = spans.find((s) => s.name === "invoke_agent support");
  assert.ok(!root.parentSpanId);
  for (const s of spans) {
    assert.equal(s.traceId, root.traceId);
    if (s !== root) assert.equal(s.parentSpanId, root.spanId, s.name);
  }
  const failed = spans.find((s) => s.name === "execute_tool refund");
  assert.equal(attribute(failed, "error.type"), "tool_failed");
  assert.ok([2, "STATUS_CODE_ERROR"].includes(failed.status.code));
  assert.ok(spans.every((s) => attribute(s, "gen_ai.input.messages") === undefined), "no content by default");

  // With the subscriber installed, the runtime's logs still reach the logger.
  const mock = await startMock([text("ok")]);
  t.after(mock.close);
  const earlier = {
    messages: [
      { role: "user", content: [{ type: "text", text: "Weather?" }] },
      { role: "assistant", provider: "anthropic", content: [{ type: "thinking", thinking: "Look it up.", signature: "sig", provider: "anthropic" }, { type: "text", text: "Sunny." }] },
    ],
  };
  const records = [];
  setLogger((x) => records.push(x), { level: "warn" });
  try {
    await agentFor(mock).run("And tomorrow?", { turns: [earlier] });
    await sleep(50);
  } finally {
    setLogger(null);
  }
  const drops = records.filter((x) => x.message.includes("thinking dropped (from anthropic"));
  assert.equal(drops.length, 1, JSON.stringify(records));
  assert.match(drops[0].target, /^parlance_providers/);
  await traces.shutdown();
});
