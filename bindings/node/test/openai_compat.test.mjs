// `parlance serve` speaks OpenAI's Chat Completions: the official `openai`
// package (npm) runs a configured agent by its name, its tool running on
// the server, answered and streamed in the API's own shapes, on a stored
// thread with a header; its errors are the SDK's own.
import assert from "node:assert/strict";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import OpenAI from "openai";

import { afterTools, calls, startMock, text } from "./helpers/mock.mjs";
import { toolServer } from "./helpers/protocols.mjs";
import { startServe } from "./helpers/serve.mjs";

test("the official openai client runs an agent by name, streamed too, on a thread by header", async (t) => {
  const tool = await toolServer((args) => ({ order_id: args.order_id, status: "shipped" }));
  t.after(tool.close);
  const mock = await startMock(afterTools(calls(["c1", "get_order", { order_id: "A-17" }]), () => text("A-17 has shipped.")));
  t.after(mock.close);
  const dir = join(process.cwd(), "openai-compat");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  const url = await startServe(t, join(process.env.PARLANCE_REPO, "docs", "guide", "examples", "parlance.toml"), {
    OPENAI_BASE_URL: mock.url,
    OPENAI_API_KEY: "sk-test",
    PARLANCE_STORE_URL: `sqlite://${join(dir, "serve.db")}`,
    PARLANCE__TOOLS__GET_ORDER__URL: `${tool.url}/orders`,
  });
  if (url === undefined) return;
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused-on-loopback", maxRetries: 0 });

  const r = await client.chat.completions.create({ model: "support", messages: [{ role: "user", content: "Where is A-17?" }] });
  assert.equal(r.object, "chat.completion");
  assert.equal(r.choices[0].message.content, "A-17 has shipped.");
  assert.equal(r.choices[0].finish_reason, "stop");
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.equal(r.parlance.status, "completed");
  assert.deepEqual(tool.got, [{ order_id: "A-17" }], "the tool ran on the server");

  const stream = await client.chat.completions.create({
    model: "support",
    messages: [{ role: "user", content: "Where is A-17?" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let streamed = "";
  let usage;
  for await (const chunk of stream) {
    streamed += chunk.choices[0]?.delta?.content ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(streamed, "A-17 has shipped.");
  assert.ok(usage.total_tokens > 0);

  const thread = await client.post("/threads", { body: {} });
  const onThread = { headers: { "x-parlance-thread": thread.id } };
  await client.chat.completions.create({ model: "support", messages: [{ role: "user", content: "Where is A-17?" }] }, onThread);
  const again = await client.chat.completions.create({ model: "support", messages: [{ role: "user", content: "Where is A-17?" }] }, onThread);
  assert.equal(again.parlance.thread_id, thread.id);
  const userTurns = mock.requests.at(-1).body.messages.filter((m) => m.role === "user").length;
  assert.equal(userTurns, 2, "the second request's history came from the thread");

  // The Responses API: previous_response_id goes on in the run's thread.
  const first = await client.responses.create({ model: "support", input: "Where is A-17?" });
  assert.equal(first.output_text, "A-17 has shipped.");
  const before = mock.requests.length;
  const second = await client.responses.create({ model: "support", input: "Where is A-17?", previous_response_id: first.id });
  assert.equal(second.output_text, "A-17 has shipped.");
  assert.equal(second.previous_response_id, first.id);
  const history = mock.requests[before].body.messages.filter((m) => m.role === "user").length;
  assert.equal(history, 2, "the thread's history went to the model");
  const events = [];
  for await (const e of await client.responses.create({ model: "support", input: "Where is A-17?", stream: true })) events.push(e.type);
  assert.equal(events[0], "response.created");
  assert.equal(events.at(-1), "response.completed");

  await assert.rejects(
    client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "Hi" }] }),
    (e) => e instanceof OpenAI.NotFoundError && /the agents of this server: support/.test(e.message),
  );
  await assert.rejects(
    client.chat.completions.create({
      model: "support",
      messages: [{ role: "user", content: "Hi" }],
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
    }),
    (e) => e instanceof OpenAI.BadRequestError && /a request's tools would never be called/.test(e.message),
  );
});
