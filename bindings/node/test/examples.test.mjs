// The examples (examples/*.mjs, type-checked by scripts/lint) run as a user
// runs them, `node examples/NAME.mjs`, with the installed package, against
// the local mock of the OpenAI API (OPENAI_BASE_URL): each one's output,
// and what it sent.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

import { startMock, calls, text, afterTools } from "./helpers/mock.mjs";

const examples = fileURLToPath(new URL("../examples/", import.meta.url));

/** Runs an example with node (not in this process: the mock answers meanwhile). */
function run(name, mock) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`${examples}${name}.mjs`], {
      env: { ...process.env, OPENAI_BASE_URL: mock.url, OPENAI_API_KEY: "sk-test" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The tool messages' text of the last request. */
function toolReplies(mock) {
  return mock.requests.at(-1).body.messages.filter((m) => m.role === "tool").map((m) => m.content);
}

test("every example has a test here", () => {
  const files = readdirSync(examples).filter((f) => f.endsWith(".mjs")).sort();
  assert.deepEqual(files, ["approvals.mjs", "quickstart.mjs", "streaming.mjs", "structured_output.mjs"]);
});

test("quickstart: the engine refuses 900 EUR before execute runs", async (t) => {
  const mock = await startMock(afterTools(calls(["c1", "refund", { order_id: "A-1001", amount: 900 }]), () => text("Over the limit.")));
  t.after(mock.close);
  const out = await run("quickstart", mock);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout.split("\n")[0], "Over the limit.");
  assert.match(out.stdout, /^completed \{ inputTokens: 40, outputTokens: 20/m);
  assert.deepEqual(toolReplies(mock), ["Invalid arguments for refund:\namount: must be at most 500, got 900"]);
  const schema = mock.requests[0].body.tools[0].function.parameters;
  assert.deepEqual(schema.properties.amount, { type: "integer", minimum: 1, maximum: 500, description: "Euros." });
});

test("approvals: paused, stored as JSON, resumed by another agent with a reviewer's decisions", async (t) => {
  const mock = await startMock(
    afterTools(
      calls(["c1", "refund", { order_id: "A-1001", amount: 250 }], ["c2", "refund", { order_id: "A-1002", amount: 400 }]),
      () => text("One refunded."),
    ),
  );
  t.after(mock.close);
  const out = await run("approvals", mock);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout, "waiting: c1, c2\ncompleted One refunded.\n");
  assert.deepEqual(toolReplies(mock), ["refunded 250 EUR on A-1001", "The reviewer rejected this call: over 300 EUR"]);
});

test("streaming: text as it comes, tool calls as they end, the usage last", async (t) => {
  const mock = await startMock(
    afterTools(calls(["c1", "get_order", { order_id: "A-1001" }], ["c2", "get_order", { order_id: "A-1002" }]), () => text("Both shipped.")),
  );
  t.after(mock.close);
  const out = await run("streaming", mock);
  assert.equal(out.code, 0, out.stderr);
  const lines = out.stdout.trimEnd().split("\n");
  assert.equal(lines.filter((l) => /^\[get_order ok in \d+\.\d ms\]$/.test(l)).length, 2, out.stdout);
  assert.ok(lines.includes("Both shipped."), out.stdout);
  assert.deepEqual(JSON.parse(lines.at(-1)), { inputTokens: 40, outputTokens: 20, totalTokens: 60, cachedTokens: 0 });
  assert.deepEqual(toolReplies(mock), ['{"order_id":"A-1001","status":"shipped"}', '{"order_id":"A-1002","status":"shipped"}']);
});

test("structured_output: the answer checked against the schema, parsed by zod", async (t) => {
  const mock = await startMock(() => text('{"order_id": "A-1001", "status": "shipped", "total_eur": 42.5}'));
  t.after(mock.close);
  const out = await run("structured_output", mock);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout, "A-1001 shipped 42.5\n");
  assert.equal(mock.requests[0].body.response_format.json_schema.name, "Order");

  const lost = await startMock(() => text('{"order_id": "A-1001", "status": "lost", "total_eur": 42.5}'));
  t.after(lost.close);
  const failed = await run("structured_output", lost);
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /RunError: run failed \(invalid_output\)/);
});
