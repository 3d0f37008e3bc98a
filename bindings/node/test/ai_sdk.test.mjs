// `parlance serve` speaks the Vercel AI SDK's UI message stream: the
// official `ai` package (npm) drives a configured agent the way `useChat`
// does (its `AbstractChat`, without React, over `DefaultChatTransport`): a
// tool call, a streamed answer, approvals approved and denied natively, a
// reconnect mid-answer that loses nothing, a stored thread read back as
// `UIMessage[]` that the SDK's own validator accepts, a bad token and a
// malformed body refused.
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  readUIMessageStream,
  validateUIMessages,
} from "ai";

import { calls, startMock, text } from "./helpers/mock.mjs";
import { TOKEN, newThread, serveSupport, toolServer, until } from "./helpers/protocols.mjs";

/** The chat's state in memory: `useChat`'s, without React. */
class MemoryState {
  constructor(messages = []) {
    this.messages = messages;
    this.status = "ready";
    this.error = undefined;
  }
  pushMessage = (m) => {
    this.messages = [...this.messages, m];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (i, m) => {
    this.messages = [...this.messages.slice(0, i), m, ...this.messages.slice(i + 1)];
  };
  snapshot = (thing) => structuredClone(thing);
}

class Chat extends AbstractChat {
  constructor({ messages, ...init }) {
    super({ ...init, state: new MemoryState(messages) });
  }
}

const lastAssistant = (chat) => chat.messages.findLast((m) => m.role === "assistant");
const textOf = (message) =>
  message.parts
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");

test("useChat's client runs an agent: a tool, a streamed answer, approvals approved and denied", async (t) => {
  const orders = await toolServer((args) => ({ order_id: args.order_id, status: "shipped" }));
  t.after(orders.close);
  const refunds = await toolServer((args) => ({ refund: `#${args.amount}` }));
  t.after(refunds.close);
  const mock = await startMock([
    calls(["c1", "get_order", { order_id: "A-17" }]),
    text("A-17 has shipped."),
    calls(["c2", "refund", { amount: 40 }]),
    text("Refunded 40."),
    calls(["c3", "refund", { amount: 900 }]),
    text("I could not refund 900."),
  ]);
  t.after(mock.close);
  const url = await serveSupport(t, "ai-sdk", mock, orders, refunds);
  if (url === undefined) return;
  const thread = await newThread(url);
  const chat = new Chat({
    id: thread,
    transport: new DefaultChatTransport({
      api: `${url}/v1/agents/support/chat`,
      headers: { authorization: `Bearer ${TOKEN}` },
    }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });

  await chat.sendMessage({ text: "Where is A-17?" });
  assert.equal(chat.status, "ready", chat.error?.message);
  let answer = lastAssistant(chat);
  const lookup = answer.parts.find((p) => p.type === "tool-get_order");
  assert.equal(lookup.state, "output-available");
  assert.deepEqual(lookup.input, { order_id: "A-17" });
  assert.deepEqual(lookup.output, { order_id: "A-17", status: "shipped" });
  assert.equal(textOf(answer), "A-17 has shipped.");
  assert.equal(answer.parts.filter((p) => p.type === "step-start").length, 2, "two model calls, two steps");
  assert.deepEqual(orders.got, [{ order_id: "A-17" }], "the tool ran on the server");
  assert.equal(answer.metadata.parlance.status, "completed");
  assert.equal(answer.metadata.parlance.thread_id, thread);

  // A call that waits for a person: approved in the client, it runs.
  await chat.sendMessage({ text: "Refund 40" });
  answer = lastAssistant(chat);
  let refund = answer.parts.find((p) => p.type === "tool-refund");
  assert.equal(refund.state, "approval-requested");
  assert.equal(answer.metadata.parlance.status, "requires_approval");
  assert.equal(refunds.got.length, 0, "nothing ran before the decision");
  await chat.addToolApprovalResponse({ id: refund.approval.id, approved: true });
  await until("the approved run's answer", () => chat.status === "ready" && textOf(lastAssistant(chat)) === "Refunded 40.");
  answer = lastAssistant(chat);
  refund = answer.parts.find((p) => p.type === "tool-refund");
  assert.equal(refund.state, "output-available");
  assert.deepEqual(refund.output, { refund: "#40" });
  assert.deepEqual(refunds.got, [{ amount: 40 }]);
  assert.equal(answer.metadata.parlance.status, "completed");

  // Denied, with a reason the model reads.
  await chat.sendMessage({ text: "Refund 900" });
  refund = lastAssistant(chat).parts.find((p) => p.type === "tool-refund" && p.toolCallId === "c3");
  await chat.addToolApprovalResponse({ id: refund.approval.id, approved: false, reason: "over the limit" });
  await until("the denied run's answer", () => chat.status === "ready" && textOf(lastAssistant(chat)) === "I could not refund 900.");
  refund = lastAssistant(chat).parts.find((p) => p.type === "tool-refund" && p.toolCallId === "c3");
  assert.equal(refund.state, "output-denied");
  assert.equal(refunds.got.length, 1, "the denied call never ran");
  const told = mock.requests.at(-1).body.messages.at(-1);
  assert.equal(told.role, "tool");
  assert.match(told.content, /over the limit/u);

  // The thread as UIMessage[]: what the SDK's own validator accepts, the
  // same parts as the chat built from the streams.
  const r = await fetch(`${url}/v1/threads/${thread}/ui-messages`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(r.status, 200);
  const stored = await validateUIMessages({ messages: await r.json() });
  assert.deepEqual(
    stored.map((m) => m.role),
    chat.messages.map((m) => m.role),
  );
  const strip = (m) => m.parts.filter((p) => p.type !== "step-start").map((p) => [p.type, p.state, p.text ?? p.output ?? null]);
  assert.deepEqual(stored.map(strip), chat.messages.map(strip));
  const resumed = new Chat({ id: thread, messages: stored });
  assert.equal(textOf(lastAssistant(resumed)), "I could not refund 900.");
});

test("a useChat client that loses its stream mid-answer gets it whole again; bad tokens and bodies are refused", async (t) => {
  const orders = await toolServer(() => ({}));
  t.after(orders.close);
  const mock = await startMock([text("One. Two. Three. Four. Five. Six.", 60)]);
  t.after(mock.close);
  const url = await serveSupport(t, "ai-sdk-reconnect", mock, orders, orders);
  if (url === undefined) return;
  const thread = await newThread(url);
  const transport = new DefaultChatTransport({
    api: `${url}/v1/agents/support/chat`,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const user = { id: "u1", role: "user", parts: [{ type: "text", text: "Count" }] };

  // Nothing runs: nothing to reconnect to.
  assert.equal(await transport.reconnectToStream({ chatId: thread }), null);

  const aborted = new AbortController();
  const stream = await transport.sendMessages({
    chatId: thread,
    messages: [user],
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: aborted.signal,
  });
  const reader = stream.getReader();
  const seen = [];
  while (!seen.some((c) => c.type === "text-delta")) {
    const { value, done } = await reader.read();
    assert.ok(!done, "the stream ended before any text");
    seen.push(value);
  }
  aborted.abort();
  assert.equal(seen[0].type, "start");
  const run = seen[0].messageId;

  // The SDK's resumeStream: the run replayed from its start, then live.
  const again = await transport.reconnectToStream({ chatId: thread });
  assert.ok(again, "the run still runs: there is a stream to resume");
  let message;
  for await (const m of readUIMessageStream({ stream: again })) message = m;
  assert.equal(message.id, run);
  assert.equal(textOf(message), "One. Two. Three. Four. Five. Six.");
  assert.equal(message.metadata.parlance.status, "completed");
  assert.equal(await transport.reconnectToStream({ chatId: thread }), null, "it ended");

  // A bad token: the SDK's own error, with the server's message.
  const stranger = new Chat({
    id: thread,
    transport: new DefaultChatTransport({ api: `${url}/v1/agents/support/chat`, headers: { authorization: "Bearer nope" } }),
  });
  await stranger.sendMessage({ text: "Hi" });
  assert.equal(stranger.status, "error");
  assert.match(stranger.error.message, /token/u);
  // Another caller's thread is not found.
  const bob = new Chat({
    id: thread,
    transport: new DefaultChatTransport({ api: `${url}/v1/agents/support/chat`, headers: { authorization: "Bearer tok-bob-0123456789" } }),
  });
  await bob.sendMessage({ text: "Hi" });
  assert.equal(bob.status, "error");
  assert.match(bob.error.message, /not_found/u);

  // A malformed body: the error names the field.
  const bad = await fetch(`${url}/v1/agents/support/chat`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ id: thread, messages: [{ role: "user", parts: [{ type: "file", url: "x" }] }] }),
  });
  assert.equal(bad.status, 400);
  const body = await bad.json();
  assert.match(body.error.message, /^messages\[0\]\.parts\[0\]\.type: "file" is not supported/u);
});
