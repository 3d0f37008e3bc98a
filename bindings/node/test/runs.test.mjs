// Runs: streamed events, earlier turns, the response's JSON (byte-identical
// to Rust's), 100 concurrent runs against one mock, bad input.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { tool, Response, RunError, FormatError, format, setLogger } from "parlance-ai";
import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";
import { agentFor, results, sleep } from "./helpers/agents.mjs";

const weather = tool({
  name: "weather",
  description: "Today's weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: async ({ city }) => `Sunny in ${city}`,
});

test("a streamed run: deltas, tool events, messages, and the response last", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "weather", { city: "Paris" }]), () => text("It is sunny in Paris today.")));
  t.after(mock.close);
  const events = [];
  for await (const e of agentFor(mock, { tools: [weather] }).stream("Weather in Paris?")) events.push(e);
  const types = events.map((e) => e.type);
  assert.equal(types.at(-1), "run_completed");
  assert.ok(types.indexOf("tool_call_started") < types.indexOf("tool_call_finished"));
  const finished = events.find((e) => e.type === "tool_call_finished");
  assert.equal(finished.callId, "c1");
  assert.equal(finished.name, "weather");
  assert.equal(finished.status, "ok");
  assert.equal(typeof finished.elapsedMs, "number");
  const deltas = events.filter((e) => e.type === "text_delta").map((e) => e.text);
  assert.ok(deltas.length > 1);
  assert.equal(deltas.join(""), "It is sunny in Paris today.");
  assert.equal(events.filter((e) => e.type === "message").length, 3);
  const r = events.at(-1).response;
  assert.ok(r instanceof Response);
  assert.equal(r.text, "It is sunny in Paris today.");
  assert.ok(mock.requests.every((q) => q.body.stream === true));
});

test("stream(...).response() skips to the end; a failed streamed run throws RunError", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "weather", { city: "Paris" }]), () => text("Sunny.")));
  t.after(mock.close);
  const r = await agentFor(mock, { tools: [weather] }).stream("Weather?").response();
  assert.equal(r.text, "Sunny.");
  const broken = await startMock([]);
  t.after(broken.close);
  const e = await agentFor(broken, { modelSettings: {} }).stream("hi").response().catch((e) => e);
  assert.ok(e instanceof RunError, e);
  assert.equal(e.code, "model_error");
});

test("earlier turns reach the model before the input, in order", async (t) => {
  const mock = await startMock([text("Hello Ada."), text("You are Ada.")]);
  t.after(mock.close);
  const agent = agentFor(mock, { instructions: "Be brief." });
  const first = await agent.run("I am Ada.");
  const second = await agent.run("Who am I?", { turns: [first] });
  assert.equal(second.text, "You are Ada.");
  const sent = mock.requests[1].body.messages.map((m) => [m.role, m.content]);
  assert.deepEqual(sent, [
    ["system", "Be brief."],
    ["user", "I am Ada."],
    ["assistant", "Hello Ada."],
    ["user", "Who am I?"],
  ]);
  // A turn written as plain JSON works the same.
  const third = await startMock([text("Still Ada.")]);
  t.after(third.close);
  await agentFor(third).run("And now?", { turns: [first.toJSON(), second.toJSON()], runId: "run_x" });
  assert.equal(third.requests[0].body.messages.length, 5);
});

test("every turn shape of the shared vectors is read by a run, as in Rust", async (t) => {
  // testdata/format/legacy.json's turns: whole responses, a failed one
  // without messages (not seen by the model), a stored run record.
  const cases = JSON.parse(readFileSync(join(process.env.PARLANCE_REPO, "testdata/format/legacy.json"), "utf8"));
  const turns = cases.filter((c) => c.kind === "turn");
  assert.ok(turns.length >= 4);
  const mock = await startMock([text("ok")]);
  t.after(mock.close);
  const r = await agentFor(mock).run("Next", { turns: turns.map((c) => c.input) });
  assert.equal(r.text, "ok");
  const seen = turns.flatMap((c) => c.expected.messages.map((m) => m.role));
  const sent = mock.requests[0].body.messages;
  assert.deepEqual(sent.map((m) => m.role), [...seen, "user"]);
  assert.equal(sent.at(-1).content, "Next");
});

test("the response's JSON is the Rust core's, byte for byte", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "weather", { city: "Zürich" }]), () => text("Sunny — 21 °C.")));
  t.after(mock.close);
  const r = await agentFor(mock, { tools: [weather] }).run("Weather?", { runId: "run_bytes" });
  const rust = format.stringify(JSON.parse(r.toString()), "response");
  assert.equal(r.toString(), rust);
  // JSON.stringify writes JavaScript's spelling of numbers (a cost of 9e-6 as 0.000009): the same document.
  assert.deepEqual(JSON.parse(JSON.stringify(r)), JSON.parse(rust));
  assert.equal(Response.fromJSON(r.toString()).toString(), rust);
  assert.equal(Response.fromJSON(r.toJSON()).toString(), rust);
  assert.equal(r.id, "run_bytes");
});

test("100 concurrent runs against one mock, each with a tool call", async (t) => {
  // The run's number travels in the user message and back in the tool's arguments.
  const mock = await startMock((body) =>
    body.messages.at(-1).role === "tool"
      ? text("done")
      : calls([`c${body.messages.at(-1).content.match(/\d+/)[0]}`, "echo", { n: Number(body.messages.at(-1).content.match(/\d+/)[0]) }]),
  );
  t.after(mock.close);
  const seen = new Set();
  const echo = tool({
    name: "echo",
    // The arguments are declared: an undeclared one would be refused.
    parameters: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
    execute: async ({ n }) => {
      await sleep(Math.random() * 20);
      seen.add(n);
      return `echo ${n}`;
    },
  });
  const agent = agentFor(mock, { tools: [echo] });
  const runs = await Promise.all(Array.from({ length: 100 }, (_, n) => agent.run(`run ${n}`)));
  assert.equal(seen.size, 100);
  runs.forEach((r, n) => {
    assert.equal(r.status, "completed");
    assert.equal(results(r)[`c${n}`].content[0].text, `echo ${n}`);
  });
  assert.equal(mock.requests.length, 200);
});

test("bad input is a FormatError naming where", async (t) => {
  const mock = await startMock([]);
  t.after(mock.close);
  const agent = agentFor(mock);
  await assert.rejects(agent.run({ role: "robot", content: [] }), (e) => {
    assert.ok(e instanceof FormatError, e);
    assert.equal(e.message, 'input.role: unknown role "robot" (expected one of: system, user, assistant, tool)');
    assert.equal(e.path, "input.role");
    return true;
  });
  await assert.rejects(agent.run("hi", { turns: [[{ role: "user" }]] }), /^FormatError: turns\[0\]\[0\]\.content: required field missing/);
  assert.equal(mock.requests.length, 0);
});

test("an output schema (zod): the answer is validated JSON in output; a bad one fails the run", async (t) => {
  const { z } = await import("zod");
  const mock = await startMock([text('{"city":"Paris","celsius":21}'), text('{"city":"Paris"}'), text('{"city":"Lyon"}')]);
  t.after(mock.close);
  const agent = agentFor(mock, { outputSchema: { name: "weather", schema: z.object({ city: z.string(), celsius: z.number() }) } });
  const r = await agent.run("Weather?");
  assert.deepEqual(r.output, { city: "Paris", celsius: 21 });
  assert.equal(r.text, '{"city":"Paris","celsius":21}');
  assert.equal(mock.requests[0].body.response_format.json_schema.name, "weather");
  const e = await agent.run("Weather?").catch((e) => e);
  assert.ok(e instanceof RunError, e);
  assert.equal(e.code, "invalid_output");
  assert.match(e.message, /\(after 1 retry\): celsius/);
  // The misfit went back to the model once, with the problem.
  assert.match(mock.requests[2].body.messages.at(-1).content, /^the final answer does not match the output schema: celsius/);
});

test("an AbortSignal cancels a run: the promise rejects with its reason, the tool's signal aborts", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "hang", {}]), () => text("never")));
  t.after(mock.close);
  let toolSaw;
  const hang = tool({
    name: "hang",
    execute: (_args, ctx) =>
      new Promise((_resolve, reject) => {
        ctx.abortSignal.addEventListener("abort", () => {
          toolSaw = ctx.abortSignal.reason.name;
          reject(ctx.abortSignal.reason);
        });
      }),
  });
  const controller = new AbortController();
  const run = agentFor(mock, { tools: [hang] }).run("go", { signal: controller.signal });
  await sleep(150);
  controller.abort();
  await assert.rejects(run, (e) => e.name === "AbortError");
  await sleep(20);
  assert.equal(toolSaw, "AbortError");
  assert.equal(mock.requests.length, 1, "the run stopped: no second model call");
  await assert.rejects(agentFor(mock).run("go", { signal: AbortSignal.abort() }), (e) => e.name === "AbortError");
});

test("a dropped thinking block is a log record, and by default a process warning", async (t) => {
  const mock = await startMock([text("ok"), text("ok"), text("ok")]);
  t.after(mock.close);
  const earlier = {
    messages: [
      { role: "user", content: [{ type: "text", text: "Weather?" }] },
      {
        role: "assistant",
        provider: "anthropic",
        content: [
          { type: "thinking", thinking: "Look it up.", signature: "sig", provider: "anthropic" },
          { type: "text", text: "Sunny." },
        ],
      },
    ],
  };
  const records = [];
  setLogger((r) => records.push(r), { level: "warn" });
  try {
    const agent = agentFor(mock);
    await agent.run("And tomorrow?", { turns: [earlier] });
    await agent.run("And the day after?", { turns: [earlier] });
    await sleep(50);
  } finally {
    setLogger(null);
  }
  const drops = records.filter((r) => r.message.includes("thinking dropped (from anthropic"));
  assert.equal(drops.length, 1, JSON.stringify(records));
  assert.equal(drops[0].level, "warn");
  assert.match(drops[0].target, /^parlance_providers/);
  // The default: a process warning of type ParlanceWarning.
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on("warning", onWarning);
  try {
    await agentFor(mock).run("Once more?", { turns: [earlier] });
    await sleep(50);
  } finally {
    process.off("warning", onWarning);
  }
  const parlance = warnings.filter((w) => w.name === "ParlanceWarning" && w.message.includes("thinking dropped"));
  assert.equal(parlance.length, 1, warnings.map((w) => `${w.name}: ${w.message}`).join("\n"));
});

test("an output that fails its schema twice then fits completes (outputRetries)", async (t) => {
  const { z } = await import("zod");
  const mock = await startMock([text('{"order_id":"A-1"}'), text("A-1, 20 EUR"), text('{"order_id":"A-1","amount":20}')]);
  t.after(mock.close);
  const schema = z.object({ order_id: z.string(), amount: z.number() });
  const r = await agentFor(mock, { outputSchema: { name: "refund", schema }, outputRetries: 2 }).run("Refund A-1");
  assert.deepEqual(r.output, { order_id: "A-1", amount: 20 });
  assert.equal(mock.requests.length, 3);
  const lastUser = (i) => mock.requests[i].body.messages.filter((m) => m.role === "user").at(-1).content;
  assert.match(lastUser(1), /^the final answer does not match the output schema: .*amount/);
  assert.match(lastUser(2), /^the final answer is not JSON: /);
  assert.deepEqual(
    r.messages.filter((m) => m.role === "user").map((m) => m.metadata?.output_retry ?? null),
    [null, 1, 2],
  );
});

test("what a zod refinement refuses goes back to the model; past the budget the run fails", async (t) => {
  const { z } = await import("zod");
  const schema = z.object({ order_id: z.string(), amount: z.number().refine((a) => a <= 100, { message: "is over the 100 EUR limit" }) });
  const mock = await startMock([text('{"order_id":"A-1","amount":250}'), text('{"order_id":"A-1","amount":80}')]);
  t.after(mock.close);
  const r = await agentFor(mock, { outputSchema: { name: "refund", schema } }).run("Refund A-1");
  assert.deepEqual(r.output, { order_id: "A-1", amount: 80 });
  const sent = mock.requests[1].body.messages.filter((m) => m.role === "user").at(-1).content;
  assert.match(sent, /^the final answer was refused by the output validator: .*amount.*is over the 100 EUR limit/);

  const over = await startMock([text('{"order_id":"A-1","amount":250}'), text('{"order_id":"A-1","amount":300}')]);
  t.after(over.close);
  const e = await agentFor(over, { outputSchema: { name: "refund", schema } }).run("Refund A-1").catch((x) => x);
  assert.ok(e instanceof RunError && e.code === "invalid_output", String(e));
  assert.match(e.message, /refused by the output validator \(after 1 retry\)/);
  assert.throws(
    () => agentFor(over, { outputSchema: { name: "refund", schema }, outputRetries: -1 }),
    (x) => x.name === "ConfigError" && /outputRetries: expected a whole number of at least 0, got -1/.test(x.message),
  );
});
