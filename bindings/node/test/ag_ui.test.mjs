// `parlance serve` speaks AG-UI: the official `@ag-ui/client` (npm) runs a
// configured agent with its `HttpAgent`, as CopilotKit does: a tool call
// and a streamed answer assembled into the agent's messages; a call that
// waits for approval finishes the run with an interrupt carrying the edit
// form's schema, and the next run's `resume` decides it (edited, then
// cancelled); a client that lost its stream connects again (the agent's
// `connect`) and ends with the whole answer, nothing doubled; a bad token
// and a malformed body are the client's errors.
import assert from "node:assert/strict";
import { test } from "node:test";

import { HttpAgent, runHttpRequest, transformHttpEventStream } from "@ag-ui/client";

import { calls, startMock, text } from "./helpers/mock.mjs";
import { TOKEN, newThread, serveSupport, toolServer } from "./helpers/protocols.mjs";

/** Runs `agent` once, keeping every event it received. */
async function run(agent, params = {}) {
  const events = [];
  const result = await agent.runAgent(params, { onEvent: ({ event }) => void events.push(event) });
  return { events, result };
}

test("AG-UI's HttpAgent runs an agent: tools, text, interrupts answered with resume", async (t) => {
  const orders = await toolServer((args) => ({ order_id: args.order_id, status: "shipped" }));
  t.after(orders.close);
  const refunds = await toolServer((args) => ({ refund: `#${args.amount}` }));
  t.after(refunds.close);
  const mock = await startMock([
    calls(["c1", "get_order", { order_id: "A-17" }]),
    text("A-17 has shipped."),
    calls(["c2", "refund", { amount: 40 }]),
    text("Refunded 30."),
    calls(["c3", "refund", { amount: 900 }]),
    text("I did not refund 900."),
  ]);
  t.after(mock.close);
  const url = await serveSupport(t, "ag-ui", mock, orders, refunds);
  if (url === undefined) return;
  const thread = await newThread(url);
  const agent = new HttpAgent({
    url: `${url}/v1/agents/support/ag-ui`,
    threadId: thread,
    headers: { authorization: `Bearer ${TOKEN}` },
  });

  agent.addMessage({ id: "u1", role: "user", content: "Where is A-17?" });
  let { events } = await run(agent);
  const types = events.map((e) => e.type);
  assert.equal(types[0], "RUN_STARTED");
  assert.equal(types.at(-1), "RUN_FINISHED");
  for (const t of ["STATE_SNAPSHOT", "STEP_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "STEP_FINISHED"]) {
    assert.ok(types.includes(t), `${t} in ${types}`);
  }
  assert.equal(events[0].threadId, thread);
  assert.ok(events[0].metadata.parlance.run_id.startsWith("run_"));
  const finished = events.at(-1);
  assert.deepEqual(finished.outcome, { type: "success" });
  assert.equal(finished.result, "A-17 has shipped.");
  assert.deepEqual(orders.got, [{ order_id: "A-17" }], "the tool ran on the server");
  // The client assembled the conversation from the events.
  const roles = agent.messages.map((m) => m.role);
  assert.deepEqual(roles, ["user", "assistant", "tool", "assistant"]);
  assert.equal(agent.messages[1].toolCalls[0].function.name, "get_order");
  assert.deepEqual(JSON.parse(agent.messages[1].toolCalls[0].function.arguments), { order_id: "A-17" });
  assert.match(agent.messages[2].content, /shipped/u);
  assert.equal(agent.messages[3].content, "A-17 has shipped.");

  // A call that waits for people: the run finishes with an interrupt.
  agent.addMessage({ id: "u2", role: "user", content: "Refund 40" });
  ({ events } = await run(agent));
  const outcome = events.at(-1).outcome;
  assert.equal(outcome.type, "interrupt");
  const [interrupt] = outcome.interrupts;
  assert.equal(interrupt.toolCallId, "c2");
  assert.equal(interrupt.reason, "tool_approval");
  assert.deepEqual(interrupt.responseSchema.properties.arguments.properties.amount, { type: "number" });
  assert.equal(refunds.got.length, 0, "nothing ran before the decision");

  // Edited in the form, sent back as the next run's resume.
  ({ events } = await run(agent, {
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { decision: "edited", arguments: { amount: 30 } } }],
  }));
  assert.deepEqual(events.at(-1).outcome, { type: "success" });
  assert.deepEqual(refunds.got, [{ amount: 30 }], "the call ran with the edited arguments");
  assert.equal(agent.messages.at(-1).content, "Refunded 30.");

  // Cancelled: the call does not run, the model is told.
  agent.addMessage({ id: "u3", role: "user", content: "Refund 900" });
  ({ events } = await run(agent));
  const second = events.at(-1).outcome.interrupts[0];
  await assert.rejects(run(agent), /not addressed by resume/u, "the client holds the thread until the interrupt is answered");
  ({ events } = await run(agent, { resume: [{ interruptId: second.id, status: "cancelled" }] }));
  assert.equal(events.at(-1).result, "I did not refund 900.");
  assert.equal(refunds.got.length, 1, "the cancelled call never ran");
  const told = mock.requests.at(-1).body.messages.at(-1);
  assert.equal(told.role, "tool");
  assert.match(told.content, /cancelled/u);
});

test("AG-UI: a forged interrupt id, a bad token, client tools and another caller's thread are refused", async (t) => {
  const orders = await toolServer(() => ({}));
  t.after(orders.close);
  const mock = await startMock([calls(["c1", "refund", { amount: 5 }])]);
  t.after(mock.close);
  const url = await serveSupport(t, "ag-ui-refusals", mock, orders, orders);
  if (url === undefined) return;
  const thread = await newThread(url);
  const agent = (token) =>
    new HttpAgent({ url: `${url}/v1/agents/support/ag-ui`, threadId: thread, headers: { authorization: `Bearer ${token}` } });

  const stranger = agent("nope");
  stranger.addMessage({ id: "u1", role: "user", content: "Hi" });
  await assert.rejects(run(stranger), (e) => e.status === 401 && /token/u.test(JSON.stringify(e.payload)));

  const bob = agent("tok-bob-0123456789");
  bob.addMessage({ id: "u1", role: "user", content: "Hi" });
  await assert.rejects(run(bob), (e) => e.status === 404);

  const ann = agent(TOKEN);
  ann.addMessage({ id: "u1", role: "user", content: "Refund 5" });
  const tools = [{ name: "confirm", description: "Ask the user", parameters: { type: "object" } }];
  await assert.rejects(run(ann, { tools }), (e) => e.status === 400 && /^tools: not accepted/u.test(e.payload.error.message));

  const { events } = await run(ann);
  assert.equal(events.at(-1).outcome.type, "interrupt");
  const forged = await fetch(`${url}/v1/agents/support/ag-ui`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ threadId: thread, runId: "r9", messages: [], resume: [{ interruptId: "hmac-sha256:forged", status: "resolved" }] }),
  });
  assert.equal(forged.status, 400);
  const body = await forged.json();
  assert.equal(body.error.code, "invalid_decision");
  assert.match(body.error.message, /^resume\[0\]\.interruptId: "hmac-sha256:forged" is not an interrupt the run waits for/u);
});

/** `HttpAgent` with AG-UI's `connect` (which 1.0 leaves to each agent):
 * the server's `/connect` of the same URL, through the client's own HTTP
 * and event parsing. */
class ReconnectingAgent extends HttpAgent {
  connect(input) {
    this.abortController = new AbortController();
    return transformHttpEventStream(runHttpRequest(() => this.fetch(`${this.url}/connect`, this.requestInit(input))));
  }
}

test("AG-UI: a client that lost its stream connects again and gets the whole answer once", async (t) => {
  const orders = await toolServer(() => ({}));
  t.after(orders.close);
  const answer = "One two three four five six seven eight nine ten.";
  const mock = await startMock([text(answer, 60)]);
  t.after(mock.close);
  const url = await serveSupport(t, "ag-ui-connect", mock, orders, orders);
  if (url === undefined) return;
  const thread = await newThread(url);
  const agent = new ReconnectingAgent({
    url: `${url}/v1/agents/support/ag-ui`,
    threadId: thread,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  agent.addMessage({ id: "u1", role: "user", content: "Count to ten." });
  // The connection drops after the first words.
  await agent.runAgent(
    {},
    {
      onEvent: ({ event }) => {
        if (event.type === "TEXT_MESSAGE_CONTENT") agent.abortRun();
      },
    },
  );
  const partial = agent.messages.filter((m) => m.role === "assistant");
  assert.ok(partial.length <= 1 && (partial[0]?.content ?? "") !== answer, "the stream was cut mid-answer");

  const events = [];
  await agent.connectAgent({}, { onEvent: ({ event }) => void events.push(event) });
  const types = events.map((e) => e.type);
  assert.equal(types[0], "RUN_STARTED");
  assert.ok(types.includes("MESSAGES_SNAPSHOT"), types.join());
  assert.equal(types.at(-1), "RUN_FINISHED");
  assert.equal(events.at(-1).result, answer);
  const assistants = agent.messages.filter((m) => m.role === "assistant");
  assert.equal(assistants.length, 1, JSON.stringify(agent.messages));
  assert.equal(assistants[0].content, answer);
  assert.deepEqual(
    agent.messages.map((m) => m.role),
    ["user", "assistant"],
  );

  // Connecting once the run ended: the snapshot and the end, nothing more.
  const again = [];
  await agent.connectAgent({}, { onEvent: ({ event }) => void again.push(event) });
  assert.deepEqual(
    again.map((e) => e.type),
    ["RUN_STARTED", "STATE_SNAPSHOT", "MESSAGES_SNAPSHOT", "RUN_FINISHED"],
  );
  assert.deepEqual(
    agent.messages.map((m) => [m.role, m.content]),
    [
      ["user", "Count to ten."],
      ["assistant", answer],
    ],
  );
});

