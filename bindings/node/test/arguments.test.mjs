// Wrong arguments never reach `execute`: after the engine's validation the
// zod schema's own parse runs; what it refuses (`.refine`, `.superRefine`)
// goes back to the model as invalid arguments in the engine's form and
// counts against the budget; what it gives (`.default`, `.transform`,
// `z.coerce`) is what `execute` receives. A returned ToolError is an error,
// like a thrown one.
import assert from "node:assert/strict";
import { test } from "node:test";

import { tool, ToolError, RunError, approve, edit } from "parlance-ai";
import { z } from "zod";
import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";
import { agentFor, results, textOf } from "./helpers/agents.mjs";

const window = z
  .object({ start: z.number().int(), end: z.number().int() })
  .refine((w) => w.end >= w.start, { message: "end must not be before start" });

const booking = z.object({
  room: z.string().transform((r) => r.toUpperCase()),
  window,
  guests: z.array(
    z.object({ name: z.string() }).superRefine((g, ctx) => {
      if (g.name.trim() === "") ctx.addIssue({ code: "custom", path: ["name"], message: "must not be blank" });
    }),
  ),
  chairs: z.number().int().default(2),
  day: z.string().pipe(z.coerce.date()).optional(),
});

function bookTool(seen) {
  return tool({
    name: "book",
    parameters: booking,
    execute: async (args) => {
      seen.push(args);
      return "booked";
    },
  });
}

const good = { room: "a1", window: { start: 9, end: 10 }, guests: [{ name: "Ada" }] };

test("what zod refuses is invalid arguments in the engine's form; execute gets what parse gives", async (t) => {
  const seen = [];
  const mock = await startMock(
    afterTools(
      calls(
        ["c1", "book", good],
        ["c2", "book", { ...good, window: { start: 10, end: 9 } }],
        ["c3", "book", { ...good, guests: [{ name: "Ada" }, { name: " " }] }],
      ),
      () => text("Done."),
    ),
  );
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [bookTool(seen)], maxInvalidArguments: 5, onToolException: "fail" });
  const r = await agent.run("book");
  assert.equal(r.status, "completed");
  const got = results(r);
  const row = (id) => [got[id].status, textOf(got[id])];
  assert.deepEqual(row("c1"), ["ok", "booked"]);
  assert.deepEqual(row("c2"), ["invalid_arguments", "Invalid arguments for book:\nwindow: end must not be before start"]);
  assert.deepEqual(row("c3"), ["invalid_arguments", "Invalid arguments for book:\nguests[1].name: must not be blank"]);
  assert.deepEqual(seen, [booking.parse(good)], "only the valid call ran, with what parse gives");
  assert.deepEqual(seen[0], { room: "A1", window: { start: 9, end: 10 }, guests: [{ name: "Ada" }], chairs: 2 });
  const sent = mock.requests[1].body.messages.filter((m) => m.role === "tool").map((m) => m.content);
  assert.deepEqual(sent, ["booked", textOf(got.c2), textOf(got.c3)]);
});

test("what zod refuses counts against the invalid-argument budget", async (t) => {
  const seen = [];
  const bad = { ...good, window: { start: 10, end: 9 } };
  const mock = await startMock(afterTools(calls(["c1", "book", bad], ["c2", "book", bad]), () => text("never")));
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [bookTool(seen)], maxInvalidArguments: 1 });
  await assert.rejects(agent.run("book"), (e) => {
    assert.ok(e instanceof RunError);
    assert.equal(e.code, "invalid_arguments_budget");
    assert.equal(e.message, "run failed (invalid_arguments_budget): the model sent invalid arguments 2 times, more than the 1 allowed");
    return true;
  });
  assert.equal(mock.requests.length, 1);
  assert.deepEqual(seen, []);
});

test("z.coerce runs: execute gets the coerced value", async (t) => {
  const seen = [];
  const mock = await startMock(afterTools(calls(["c1", "book", { ...good, day: "2026-03-01" }]), () => text("Done.")));
  t.after(mock.close);
  await agentFor(mock, { tools: [bookTool(seen)] }).run("book");
  assert.ok(seen[0].day instanceof Date, "a Date, not the string");
  assert.equal(seen[0].day.toISOString(), "2026-03-01T00:00:00.000Z");
});

for (const kind of ["sync", "async"]) {
  test(`a returned ToolError is an error for the model, ${kind}`, async (t) => {
    const refuse = ({ orderId }) => new ToolError(`no order ${orderId}`);
    const lookup = tool({
      name: "lookup",
      parameters: z.object({ orderId: z.string() }),
      execute: kind === "async" ? async (args) => refuse(args) : refuse,
    });
    const mock = await startMock(afterTools(calls(["c1", "lookup", { orderId: "A-9" }]), () => text("Sorry.")));
    t.after(mock.close);
    const r = await agentFor(mock, { tools: [lookup], onToolException: "fail" }).run("find");
    assert.equal(r.status, "completed");
    const got = results(r);
    assert.deepEqual([got.c1.status, textOf(got.c1)], ["error", "no order A-9"]);
    const sent = mock.requests[1].body.messages.filter((m) => m.role === "tool").map((m) => m.content);
    assert.deepEqual(sent, ["no order A-9"]);
  });
}

test("zod checks a call when it runs, after its approval (an edited one too)", async (t) => {
  const seen = [];
  const seat = tool({
    name: "seat",
    parameters: z.object({ chairs: z.number().int().refine((n) => n % 2 === 0, { message: "must be even" }) }),
    needsApproval: true,
    execute: ({ chairs }) => {
      seen.push(chairs);
      return `seated ${chairs}`;
    },
  });
  const mock = await startMock(afterTools(calls(["c1", "seat", { chairs: 3 }], ["c2", "seat", { chairs: 4 }]), () => text("Done.")));
  t.after(mock.close);
  const agent = agentFor(mock, { tools: [seat] });
  const paused = await agent.run("seat");
  assert.equal(paused.status, "requires_approval", "the check has not run yet: both wait");
  const r = await agent.resume(paused, [approve("c1"), edit("c2", { chairs: 5 })]);
  const got = results(r);
  assert.deepEqual([got.c1.status, textOf(got.c1)], ["invalid_arguments", "Invalid arguments for seat:\nchairs: must be even"]);
  assert.deepEqual([got.c2.status, textOf(got.c2)], ["invalid_arguments", "Invalid arguments for seat:\nchairs: must be even"]);
  assert.deepEqual(seen, []);
});
