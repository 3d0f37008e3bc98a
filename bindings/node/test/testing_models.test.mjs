// Models written in JavaScript and the test models of parlance-ai/testing,
// through the packed package: a JS model answers (sync or async) and what
// it throws fails the run naming it; its signal aborts with the run; a
// cassette recorded from a provider (the OpenAI mock on 127.0.0.1)
// replays offline with the same result; the cassette under
// testdata/cassettes (recorded in Rust, replayed in Python too) replays
// here; a request that differs is refused with the difference named;
// TestModel calls a tool with arguments its schema accepts.
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";

import { Agent, Model, ConfigError, RunError, tool } from "parlance-ai";
import { TestModel, ScriptedModel, FunctionModel, Recorder, Replay } from "parlance-ai/testing";
import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";
import { modelFor, sleep } from "./helpers/agents.mjs";

const SHARED = join(process.env.PARLANCE_REPO, "testdata/cassettes/weather.jsonl");

const weather = tool({
  name: "weather",
  description: "Today's weather in a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  execute: ({ city }) => `Sunny and 21 °C in ${city}`,
});

/** The agent of the shared cassette, as every language builds it. */
const weatherAgent = (model) => new Agent({ model, instructions: "You answer questions about the weather.", tools: [weather] });

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), "parlance-cassettes-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

class Echo extends Model {
  provider = "mine";
  modelId = "echo-1";
  async request(messages, { tools, settings, signal }) {
    await sleep(1);
    assert.ok(signal instanceof AbortSignal);
    const last = messages.at(-1).content[0].text;
    return { content: [{ type: "text", text: `${last} (${tools.length} tools, ${settings.max_tokens})` }] };
  }
}

test("a model written in JavaScript answers, async or sync, in runs and streams", async () => {
  const agent = new Agent({ model: new Echo(), tools: [weather], modelSettings: { max_tokens: 50 } });
  const r = await agent.run("ping");
  assert.equal(r.text, "ping (1 tools, 50)");
  const last = r.messages.at(-1);
  assert.equal(last.role, "assistant");
  assert.equal(last.provider, "mine");
  assert.equal(last.model, "echo-1");
  assert.equal(last.finish_reason, "stop");
  const deltas = [];
  for await (const e of agent.stream("pong")) if (e.type === "text_delta") deltas.push(e.text);
  assert.equal(deltas.join(""), "pong (1 tools, 50)");

  // A sync request, the defaults it reports, and a plain object.
  class Plain extends Model {
    request() {
      return "plain text";
    }
  }
  const plain = new Plain();
  assert.equal(plain.provider, "javascript");
  assert.equal(plain.modelId, "Plain");
  const p = await new Agent({ model: plain }).run("hi");
  assert.equal(p.text, "plain text");
  assert.equal(p.messages.at(-1).model, "Plain");
  const o = await new Agent({ model: { modelId: "obj-1", request: (messages) => `${messages.length} messages` } }).run("hi");
  assert.equal(o.text, "1 messages");
  assert.equal(o.messages.at(-1).provider, "javascript");
  assert.equal(o.messages.at(-1).model, "obj-1");
  // super({ provider, modelId }).
  class Named extends Model {
    constructor() {
      super({ provider: "acme", modelId: "acme-2" });
    }
    request() {
      return "named";
    }
  }
  assert.equal(new Named().modelId, "acme-2");
  assert.equal((await new Agent({ model: new Named() }).run("hi")).messages.at(-1).provider, "acme");
});

test("a JavaScript model that calls a tool, then reads its result", async () => {
  class Caller extends Model {
    request(messages) {
      const last = messages.at(-1);
      if (last.role !== "tool") {
        return { content: [{ type: "tool_call", tool_call: { id: "c1", name: "weather", arguments: { city: "Oslo" } } }] };
      }
      return `read: ${last.content[0].tool_result.content[0].text}`;
    }
  }
  const r = await new Agent({ model: new Caller(), tools: [weather] }).run("Weather in Oslo?");
  assert.equal(r.text, "read: Sunny and 21 °C in Oslo");
  assert.equal(r.messages[1].finish_reason, "tool_calls");
});

test("what a JavaScript model throws fails the run with a model error naming it", async () => {
  class Broken extends Model {
    async request() {
      throw new TypeError("the backend is down");
    }
  }
  let e = await new Agent({ model: new Broken() }).run("hi").catch((e) => e);
  assert.ok(e instanceof RunError, e);
  assert.equal(e.code, "model_error");
  assert.match(e.message, /Broken\.request threw TypeError: the backend is down/);

  class SyncThrow extends Model {
    request() {
      throw new Error("no");
    }
  }
  e = await new Agent({ model: new SyncThrow() }).run("hi").catch((e) => e);
  assert.equal(e.code, "model_error");
  assert.match(e.message, /SyncThrow\.request threw Error: no/);

  class Wrong extends Model {
    request() {
      return { content: [{ type: "txt" }] };
    }
  }
  e = await new Agent({ model: new Wrong() }).run("hi").catch((e) => e);
  assert.equal(e.code, "model_error");
  assert.match(e.message, /Wrong\.request returned a message that is not canonical: content\[0\]\.type/);

  class Nothing extends Model {
    request() {}
  }
  e = await new Agent({ model: new Nothing() }).run("hi").catch((e) => e);
  assert.match(e.message, /Nothing\.request returned nothing \(expected a message object or a string\)/);

  class Cyclic extends Model {
    request() {
      const m = { content: [] };
      m.self = m;
      return m;
    }
  }
  e = await new Agent({ model: new Cyclic() }).run("hi").catch((e) => e);
  assert.match(e.message, /Cyclic\.request threw TypeError: its message cannot be written as JSON/);

  // A class with no request method is refused when the agent is built.
  class NoRequest extends Model {}
  assert.throws(() => new Agent({ model: new NoRequest() }), (e) => e instanceof ConfigError && /NoRequest has no request method/.test(e.message));
  assert.throws(() => new Agent({ model: { request: 1 } }), (e) => e instanceof ConfigError && /a Model, an object with a request/.test(e.message));
  class BadId extends Model {
    modelId = 7;
    request() {
      return "x";
    }
  }
  assert.throws(() => new Agent({ model: new BadId() }), (e) => e instanceof ConfigError && /BadId\.modelId must be a string, got/.test(e.message));
  assert.throws(() => new Model({ model: "x" }), (e) => e instanceof ConfigError && /unknown option "model"/.test(e.message));
});

test("a JavaScript model's signal aborts when its run is aborted", async () => {
  let saw;
  let started;
  const startedP = new Promise((resolve) => (started = resolve));
  class Hang extends Model {
    request(_messages, { signal }) {
      started();
      return new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          saw = signal.reason?.name;
          reject(signal.reason);
        });
      });
    }
  }
  const controller = new AbortController();
  const run = new Agent({ model: new Hang() }).run("go", { signal: controller.signal });
  await startedP;
  controller.abort();
  await assert.rejects(run, (e) => e.name === "AbortError");
  await sleep(50);
  assert.equal(saw, "AbortError");
});

test("TestModel calls the tool with arguments its schema accepts, then answers", async () => {
  const seen = [];
  const schema = z.object({ name: z.string().min(2), guests: z.number().int().min(1).max(8), when: z.enum(["lunch", "dinner"]) });
  const book = tool({
    name: "book",
    description: "Book a table.",
    parameters: schema,
    execute: (args) => {
      seen.push(args);
      return "booked";
    },
  });
  const model = new TestModel();
  assert.equal(model.callTools, "all");
  const r = await new Agent({ model, tools: [book] }).run("Book for two");
  assert.deepEqual(seen, [{ name: "aa", guests: 1, when: "lunch" }]);
  assert.ok(schema.safeParse(seen[0]).success, "valid for the tool's own schema");
  assert.equal(r.text, '{"book":"booked"}');
  assert.equal(model.received.length, 2);
  assert.equal(model.received[0].tools[0].name, "book");
  assert.equal(model.lastRequest.messages.at(-1).role, "tool");

  // None called, a text of one's own.
  const none = await new Agent({ model: new TestModel({ callTools: [], text: "Done." }), tools: [book] }).run("Hi");
  assert.equal(none.text, "Done.");
  assert.equal(seen.length, 1);
  // With an output schema: a value of it.
  const rated = await new Agent({
    model: new TestModel(),
    outputSchema: z.object({ stars: z.number().int().min(1).max(5), comment: z.string() }),
  }).run("Rate it");
  assert.deepEqual(rated.output, { stars: 1, comment: "a" });
  assert.throws(() => new TestModel({ callTools: "some" }), (e) => e instanceof ConfigError && /callTools/.test(e.message));
  assert.throws(() => new TestModel({ calls: [] }), (e) => e instanceof ConfigError && /unknown option "calls"/.test(e.message));
  // A tool it names that the request does not offer: the run says which.
  const e = await new Agent({ model: new TestModel({ callTools: ["nope"] }), tools: [book] }).run("Hi").catch((e) => e);
  assert.ok(e instanceof RunError, e);
  assert.match(e.message, /"nope", which the request does not offer \(offered: book\)/);
});

test("ScriptedModel answers its script in order and keeps the requests", async () => {
  const model = new ScriptedModel(["Hello!", { content: [{ type: "text", text: "Again." }] }]);
  const agent = new Agent({ model });
  assert.equal((await agent.run("Hi")).text, "Hello!");
  assert.equal(model.remaining, 1);
  assert.equal((await agent.run("Hi again")).text, "Again.");
  assert.equal(model.remaining, 0);
  assert.deepEqual(
    model.received.map((r) => r.messages.at(-1).content[0].text),
    ["Hi", "Hi again"],
  );
  const e = await agent.run("More?").catch((e) => e);
  assert.equal(e.code, "model_error");
  assert.match(e.message, /no more answers/);
  assert.throws(() => new ScriptedModel([{ content: [{ type: "txt" }] }]), (e) => e instanceof ConfigError && /messages\[0\]/.test(e.message));
  assert.throws(() => new ScriptedModel("Hello"), (e) => e instanceof ConfigError && /expected an array/.test(e.message));
});

test("FunctionModel answers with a function, sync or async", async () => {
  const answer = (messages, { tools }) => {
    if (!messages.some((m) => m.role === "tool")) {
      return { content: [{ type: "tool_call", tool_call: { id: "c1", name: "weather", arguments: { city: "Oslo" } } }] };
    }
    return `${tools[0].name}: ${messages.at(-1).content[0].tool_result.content[0].text}`;
  };
  const model = new FunctionModel(answer);
  assert.equal(model.provider, "function");
  assert.equal(model.modelId, "answer");
  const r = await new Agent({ model, tools: [weather] }).run("Weather in Oslo?");
  assert.equal(r.text, "weather: Sunny and 21 °C in Oslo");
  const later = new FunctionModel(async (_messages, { settings }) => {
    await sleep(1);
    return `async, ${JSON.stringify(settings)}`;
  });
  assert.equal((await new Agent({ model: later }).run("hi")).text, "async, {}");
  const failing = new FunctionModel(() => {
    throw new RangeError("out of range");
  });
  const e = await new Agent({ model: failing }).run("hi").catch((e) => e);
  assert.match(e.message, /FunctionModel\.request threw RangeError: out of range/);
  assert.throws(() => new FunctionModel("answer"), (e) => e instanceof ConfigError && /expected a function/.test(e.message));
});

test("a run recorded from a provider replays offline with the same result", async (t) => {
  const mock = await startMock(
    afterTools(calls(["call_1", "weather", { city: "Paris" }]), () => text("It is sunny and 21 °C in Paris.")),
  );
  t.after(mock.close);
  const cassette = join(tempDir(t), "weather.jsonl");
  const recorder = new Recorder(modelFor(mock), cassette);
  assert.equal(recorder.path, cassette);
  const recorded = await weatherAgent(recorder).run("What's the weather in Paris?");
  assert.equal(recorded.text, "It is sunny and 21 °C in Paris.");
  assert.equal(mock.requests.length, 2);
  const lines = readFileSync(cassette, "utf8").trim().split("\n");
  assert.equal(lines.length, 2);

  const replay = new Replay(cassette);
  assert.equal(replay.remaining, 2);
  const replayed = await weatherAgent(replay).run("What's the weather in Paris?");
  assert.equal(mock.requests.length, 2, "offline");
  assert.equal(replay.remaining, 0);
  assert.deepEqual(replayed.messages, recorded.messages);
  // The requests are the ones Rust and Python send for the same agent: one
  // cassette for three languages (the answers' ids and usage differ).
  const mine = lines.map((l) => JSON.parse(l).request);
  const shared = readFileSync(SHARED, "utf8").trim().split("\n").map((l) => JSON.parse(l).request);
  assert.deepEqual(mine[0], shared[0]);
  assert.deepEqual(mine[1].messages[3], shared[1].messages[3]);
});

test("the cassette recorded in Rust replays here, streamed too; a changed request is named", async () => {
  const r = await weatherAgent(new Replay(SHARED)).run("What's the weather in Paris?");
  assert.equal(r.text, "It is sunny and 21 °C in Paris.");
  const [, call] = r.messages;
  assert.deepEqual(call.content[0].tool_call.arguments, { city: "Paris" });
  assert.equal(call.provider, "openai");
  const deltas = [];
  for await (const e of weatherAgent(new Replay(SHARED)).stream("What's the weather in Paris?")) {
    if (e.type === "text_delta") deltas.push(e.text);
  }
  assert.equal(deltas.join(""), "It is sunny and 21 °C in Paris.");
  assert.ok(deltas.length > 1);

  const replay = new Replay(SHARED);
  const e = await weatherAgent(replay).run("What's the weather in Rome?").catch((e) => e);
  assert.ok(e instanceof RunError, e);
  assert.equal(e.code, "model_error");
  assert.ok(
    e.message.includes(
      "exchange 1 of 2: the request is not the recorded one: messages[1].content[0].text: " +
        "recorded \"What's the weather in Paris?\", got \"What's the weather in Rome?\"",
    ),
    e.message,
  );
  assert.equal(replay.remaining, 1);
});

test("Replay of a file that is not a cassette, and Recorder's bad input, are ConfigErrors", (t) => {
  const bad = join(tempDir(t), "bad.jsonl");
  writeFileSync(bad, '{"request": {"messages": []}}\n');
  assert.throws(() => new Replay(bad), (e) => e instanceof ConfigError && /bad\.jsonl line 1: response: required field missing/.test(e.message));
  assert.throws(() => new Replay(join(tempDir(t), "missing.jsonl")), (e) => e instanceof ConfigError && /missing\.jsonl/.test(e.message));
  assert.throws(() => new Replay(3), (e) => e instanceof ConfigError && /path: expected a string/.test(e.message));
  assert.throws(() => new Recorder(42, bad), (e) => e instanceof ConfigError && /Recorder: model/.test(e.message));
  assert.throws(() => new Recorder(new Echo(), bad, { apend: true }), (e) => e instanceof ConfigError && /unknown option "apend"/.test(e.message));
});

test("a Recorder of a JavaScript model, appended to, replays", async (t) => {
  const cassette = join(tempDir(t), "echo.jsonl");
  const recorded = await new Agent({ model: new Recorder(new Echo(), cassette) }).run("hi");
  await new Agent({ model: new Recorder(new Echo(), cassette, { append: true }) }).run("again");
  const lines = readFileSync(cassette, "utf8").trim().split("\n");
  assert.equal(lines.length, 2);
  assert.equal(JSON.parse(lines[0]).request.model, "echo-1");
  const replay = new Replay(cassette);
  const agent = new Agent({ model: replay });
  assert.deepEqual((await agent.run("hi")).messages, recorded.messages);
  assert.equal((await agent.run("again")).text, "again (0 tools, undefined)");
});

test("parlance-ai/testing loads with require, as the same classes", () => {
  const require = createRequire(import.meta.url);
  const cjs = require("parlance-ai/testing");
  assert.equal(cjs.TestModel, TestModel);
  assert.equal(cjs.Replay, Replay);
  assert.ok(new TestModel() instanceof require("parlance-ai").Model);
});
