// Context policies (issue 31) through the packed tarball and the OpenAI
// mock on 127.0.0.1: a thread past its window is compacted, stored, and the
// next run sends the summary; drop_oldest and fail; the errors.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Model, RunError, ConfigError, Store } from "parlance-ai";
import { startMock, text } from "./helpers/mock.mjs";
import { agentFor } from "./helpers/agents.mjs";

const LONG = "x".repeat(400); // ~100 tokens by the estimate
const contents = (req) => req.body.messages.map((m) => m.content);

test("a thread past its window is compacted, stored, and the next run sends the summary", async (t) => {
  const mock = await startMock([
    text("A-17 shipped."),
    text("The user asked about A-17; it shipped."),
    text("B-2 is on its way."),
    text("You're welcome."),
  ]);
  t.after(mock.close);
  const store = new Store("sqlite::memory:");
  const thread = await store.createThread();
  const agent = agentFor(mock, { instructions: "Help.", context: { strategy: "compact", window: 100 } });
  await agent.run(`Where is A-17? ${LONG}`, { store, threadId: thread });

  const events = [];
  for await (const ev of agent.stream(`And B-2? ${LONG}`, { store, threadId: thread })) events.push(ev);
  const at = events.findIndex((e) => e.type === "context_compacted");
  assert.ok(at >= 0, JSON.stringify(events.map((e) => e.type)));
  const c = events[at];
  assert.equal(c.strategy, "compact");
  assert.equal(c.replaces, 2);
  assert.ok(c.tokensBefore > 80 && c.tokensBefore > c.tokensAfter, JSON.stringify(c));
  assert.equal(events[at + 1].type, "message");
  assert.equal(events[at + 1].message.metadata.compaction.replaces, 2);

  assert.equal(mock.requests.length, 3);
  const transcript = mock.requests[1].body.messages[1].content;
  assert.ok(transcript.includes("Where is A-17?") && transcript.includes("A-17 shipped."), transcript);
  const main = contents(mock.requests[2]);
  assert.equal(main.length, 3);
  assert.equal(main[0], "Help.");
  assert.ok(main[1].endsWith("The user asked about A-17; it shipped."), main[1]);
  assert.ok(main[2].startsWith("And B-2?"));

  const kept = await store.messages(thread);
  assert.deepEqual(kept.map((m) => m.role), ["user", "assistant", "user", "user", "assistant"]);
  assert.equal(kept[3].metadata.compaction.strategy, "compact");
  await agent.run("Thanks!", { store, threadId: thread });
  assert.equal(mock.requests.length, 4, "no new summary");
  const third = contents(mock.requests[3]);
  assert.ok(third[1].endsWith("it shipped."));
  assert.deepEqual(third.slice(3), ["B-2 is on its way.", "Thanks!"]);
});

test("the policy's own model writes the summary", async (t) => {
  const mock = await startMock([text("SUMMARY"), text("ok")]);
  t.after(mock.close);
  const writer = new Model("openai:gpt-4o", { baseURL: mock.url, apiKey: "sk-test" });
  const turns = [{ messages: [{ role: "user", content: LONG }, { role: "assistant", content: "ok" }] }];
  const agent = agentFor(mock, { context: { strategy: "compact", window: 100, model: writer, instructions: "One line." } });
  await agent.run(`more ${LONG}`, { turns });
  assert.equal(mock.requests[0].body.model, "gpt-4o");
  assert.equal(mock.requests[0].body.messages[0].content, "One line.");
  assert.equal(mock.requests[1].body.model, "gpt-4o-mini");
});

test("drop_oldest leaves turns out; fail ends the run before any request", async (t) => {
  const mock = await startMock([text("fine")]);
  t.after(mock.close);
  const turns = [{ messages: [{ role: "user", content: LONG }, { role: "assistant", content: "ok" }] }];
  const r = await agentFor(mock, { context: { strategy: "drop_oldest", window: 100 } }).run(`more ${LONG}`, { turns });
  assert.equal(r.status, "completed");
  assert.deepEqual(contents(mock.requests[0]).map((c) => c.slice(0, 4)), ["more"]);
  assert.equal(r.messages[1].metadata.compaction.strategy, "drop_oldest");

  const e = await agentFor(mock, { context: { strategy: "fail", window: 100 } })
    .run(`more ${LONG}`, { turns })
    .catch((e) => e);
  assert.ok(e instanceof RunError, e);
  assert.equal(e.code, "context_too_long");
  assert.ok(e.message.includes("window of gpt-4o-mini"), e.message);
  assert.equal(mock.requests.length, 1);
});

test("a bad policy is refused naming the field", async (t) => {
  const mock = await startMock([]);
  t.after(mock.close);
  const bad = (context) => assert.throws(() => agentFor(mock, { context }), ConfigError);
  bad("compact");
  assert.throws(() => agentFor(mock, { context: { strategy: "compact", keep: 0.9 } }), {
    message: /context\.keep: expected a share of the window above 0 and below the trigger/,
  });
  assert.throws(() => agentFor(mock, { context: { strategy: "shrink" } }), {
    message: /context\.strategy: expected one of fail, drop_oldest, compact, got "shrink"/,
  });
  assert.throws(() => agentFor(mock, { context: { strategy: "fail", windows: 5 } }), {
    message: /context\.windows: unknown field/,
  });
  assert.throws(() => agentFor(mock, { context: { strategy: "drop_oldest", model: "openai:gpt-4o" } }), {
    message: /context\.model: only a compact strategy writes summaries, not drop_oldest/,
  });
  assert.throws(() => agentFor(mock, { context: { strategy: "compact", model: 42 } }), {
    message: /context\.model: expected a model string/,
  });
});
