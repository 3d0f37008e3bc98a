// A list of models is a fallback: a 429 and a 503 move on to the next
// model, a 400 does not; a 429 with retry-after keeps a model out until
// then; bad lists and bad kinds are errors naming the setting.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Agent, Model, RunError, ConfigError, Store } from "parlance-ai";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startMock, text, httpError } from "./helpers/mock.mjs";

// No retries of the model's own: the fallback moves on at once.
const model = (mock, name) => new Model(`openai:${name}`, { baseURL: mock.url, apiKey: "sk-test", maxRetries: 0 });

test("a 429 and a 503 fall back; the answer names the model that wrote it", async (t) => {
  const limited = await startMock([httpError(429, "Rate limit reached")]);
  const down = await startMock([httpError(503, "Service unavailable")]);
  const spare = await startMock([text("Hello from the spare.")]);
  t.after(limited.close);
  t.after(down.close);
  t.after(spare.close);
  const agent = new Agent({ model: [model(limited, "first"), model(down, "second"), model(spare, "third")] });
  const r = await agent.run("Hi");
  assert.equal(r.text, "Hello from the spare.");
  const answer = r.messages.at(-1);
  assert.equal(answer.model, "third");
  assert.deepEqual(
    answer.metadata.parlance_fallback.map((s) => [s.model, s.reason]),
    [
      ["openai:first", "rate_limited"],
      ["openai:second", "overloaded"],
    ],
  );
  assert.equal(limited.requests.length, 1);
  assert.equal(down.requests.length, 1);
  assert.equal(agent.settings.provider, "fallback");
});

test("a streamed run falls back too", async (t) => {
  const down = await startMock([httpError(503, "Service unavailable")]);
  const spare = await startMock([text("Streamed from the spare.")]);
  t.after(down.close);
  t.after(spare.close);
  const agent = new Agent({ model: [model(down, "first"), model(spare, "second")] });
  const r = await agent.stream("Hi").response();
  assert.equal(r.text, "Streamed from the spare.");
  assert.equal(spare.requests[0].body.stream, true);
});

test("a 400 does not fall back, and the error names the model", async (t) => {
  const refuses = await startMock([httpError(400, "messages: bad")]);
  const spare = await startMock([text("never")]);
  t.after(refuses.close);
  t.after(spare.close);
  const agent = new Agent({ model: [model(refuses, "first"), model(spare, "second")] });
  const e = await agent.run("Hi").catch((e) => e);
  assert.ok(e instanceof RunError, e);
  assert.equal(e.code, "model_error");
  assert.match(e.message, /model\[0\] openai:first: messages: bad/);
  assert.equal(spare.requests.length, 0);
});

test("a 429 with retry-after is skipped until then; fallbackOn chooses the kinds", async (t) => {
  const limited = await startMock([httpError(429, "slow down", { "retry-after": "30" })]);
  const spare = await startMock([text("one"), text("two")]);
  t.after(limited.close);
  t.after(spare.close);
  const agent = new Agent({ model: [model(limited, "first"), model(spare, "second")] });
  await agent.run("Hi");
  const r = await agent.run("Again");
  assert.equal(r.text, "two");
  assert.equal(limited.requests.length, 1);
  assert.equal(r.messages.at(-1).metadata.parlance_fallback[0].reason, "cooling_down");

  const down = await startMock([httpError(503, "Service unavailable")]);
  t.after(down.close);
  const only429 = new Agent({ model: [model(down, "first"), model(spare, "second")], fallbackOn: ["rate_limited"] });
  const e = await only429.run("Hi").catch((e) => e);
  assert.ok(e instanceof RunError, e);
  assert.equal(spare.requests.length, 2, "a 503 does not move on when only rate_limited does");
});

test("bad lists and kinds are errors naming the setting", () => {
  assert.throws(() => new Agent({ model: [] }), (e) => e instanceof ConfigError && e.message === "model: expected at least one model, got an empty list");
  const m = new Model("openai:gpt-4o-mini", { apiKey: "sk-test" });
  assert.throws(
    () => new Agent({ model: [m, "nowhere:x"] }),
    (e) => e instanceof ConfigError && e.message.startsWith("model[1]: ") && e.message.includes("nowhere"),
  );
  assert.throws(() => new Agent({ model: [m, 3] }), (e) => e instanceof ConfigError && e.message.startsWith("model[1]: expected a model string"));
  assert.throws(
    () => new Agent({ model: [m, m], fallbackOn: ["server", "rate_limit"] }),
    (e) => e instanceof ConfigError && e.message.startsWith('fallbackOn[1]: unknown error kind "rate_limit"'),
  );
  assert.throws(
    () => new Agent({ model: [m, m], fallbackOn: ["invalid_request"] }),
    (e) => e instanceof ConfigError && e.message.startsWith('fallbackOn[0]: "invalid_request" never falls back'),
  );
  assert.throws(
    () => new Agent({ model: m, fallbackOn: ["server"] }),
    (e) => e instanceof ConfigError && e.message.startsWith("fallbackOn: applies to a list of models"),
  );
});

test("cooldowns shared through a store reach another agent", async (t) => {
  const limited = await startMock([httpError(429, "slow down", { "retry-after": "120" }), text("asked again")]);
  const spare = await startMock([text("From the spare."), text("Spare again.")]);
  t.after(limited.close);
  t.after(spare.close);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "parlance-cooldowns-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // One store file: two agents stand for two processes of it.
  const store = await Store.open(`sqlite://${path.join(dir, "shared.db")}`);
  const models = () => [model(limited, "m"), model(spare, "m")];
  const first = new Agent({ model: models(), sharedCooldowns: store });
  const second = new Agent({ model: models(), sharedCooldowns: store });
  assert.equal((await first.run("Hi")).text, "From the spare.");
  const r = await second.run("Hi");
  assert.equal(r.messages.at(-1).metadata.parlance_fallback[0].reason, "cooling_down");
  assert.equal(limited.requests.length, 1);
  assert.equal(spare.requests.length, 2);
  // Without the store, another agent knows nothing of it.
  assert.equal((await new Agent({ model: models() }).run("Hi")).text, "asked again");
  assert.throws(
    () => new Agent({ model: model(spare, "m"), sharedCooldowns: store }),
    (e) => e instanceof ConfigError && /sharedCooldowns: applies to a list of models/.test(e.message),
  );
  assert.throws(
    () => new Agent({ model: models(), sharedCooldowns: "sqlite://x.db" }),
    (e) => e instanceof ConfigError && /sharedCooldowns: expected a Store/.test(e.message),
  );
  assert.throws(
    () => new Agent({ model: models(), sharedCooldowns: new Store("sqlite::memory:") }),
    (e) => e instanceof ConfigError && /the store is not open yet/.test(e.message),
  );
});
