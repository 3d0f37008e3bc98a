// The shared tool-argument vectors (testdata/tools/arguments.json; Rust and
// Python run the same file): a model's arguments against a tool's schema
// give exactly these problems, as the model reads them, and reach `execute`
// only when there are none — the extra-argument rule included, for JSON
// Schema and for zod alike.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { tool } from "parlance-ai";
import { z } from "zod";
import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";
import { agentFor, results, textOf } from "./helpers/agents.mjs";

const vectors = JSON.parse(readFileSync(join(process.env.PARLANCE_REPO, "testdata/tools/arguments.json"), "utf8"));

test("the vectors file is there", () => assert.ok(vectors.length >= 10));

for (const v of vectors) {
  test(`argument vector: ${v.name}`, async (t) => {
    const received = [];
    const mock = await startMock(afterTools(calls(["c1", "t", v.arguments]), () => text("ok")));
    t.after(mock.close);
    const fn = tool({ name: "t", parameters: v.schema, execute: (args) => { received.push(args); return "ran"; } });
    const r = await agentFor(mock, { tools: [fn], maxInvalidArguments: 5 }).run("go");
    const got = results(r).c1;
    if (v.problems.length > 0) {
      assert.equal(got.status, "invalid_arguments");
      assert.equal(textOf(got), `Invalid arguments for t:\n${v.problems.join("\n")}`);
      assert.deepEqual(received, []);
    } else {
      assert.equal(got.status, "ok", textOf(got));
      assert.deepEqual(received, [v.arguments]);
    }
  });
}

test("a zod object refuses an undeclared argument; a loose one takes it", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "strict", { orderId: "A-1", note: "x" }], ["c2", "loose", { orderId: "A-1", note: "x" }]), () => text("ok")));
  t.after(mock.close);
  const ran = [];
  const strict = tool({ name: "strict", parameters: z.object({ orderId: z.string() }), execute: (a) => { ran.push(a); return "ran"; } });
  const loose = tool({ name: "loose", parameters: z.looseObject({ orderId: z.string() }), execute: (a) => { ran.push(a); return "ran"; } });
  const got = results(await agentFor(mock, { tools: [strict, loose] }).run("go"));
  assert.equal(got.c1.status, "invalid_arguments");
  assert.equal(textOf(got.c1), "Invalid arguments for strict:\nnote: unexpected property");
  assert.equal(got.c2.status, "ok");
  assert.deepEqual(ran.map((a) => a.note), ["x"]);
});
