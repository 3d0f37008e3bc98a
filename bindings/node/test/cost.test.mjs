// Cost from TypeScript/JavaScript: each assistant message's `cost` and the
// response's sum, from the built-in price table (genai-prices); `cost()`
// prices a usage (camelCase or canonical); a model the table does not know
// has none; a bad price table file is an error naming the file and the
// JSON path.
import assert from "node:assert/strict";
import { test } from "node:test";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Agent, ConfigError, cost } from "parlance-ai";
import { FunctionModel } from "parlance-ai/testing";

// The second call of testdata/providers/anthropic/pydantic__test_anthropic_cache_real_api.yaml:
// 3 uncached input tokens, 1111 read from the cache, 418 written to it, 33 out.
const USAGE = { input_tokens: 3 + 1111 + 418, output_tokens: 33, cached_tokens: 1111, cache_write_tokens: 418 };
// claude-sonnet-4-5: $3 input, $0.30 cache read, $3.75 cache write, $15 output per million.
const COST = 0.0024048;

const answering = (model) =>
  new FunctionModel(() => ({ content: [{ type: "text", text: "Hi." }], usage: USAGE, provider: "anthropic", model }));

test("the usage of a recorded call costs the hand-computed figure", () => {
  assert.equal(cost("anthropic:claude-sonnet-4-5", USAGE), COST);
  assert.equal(cost("anthropic:claude-sonnet-4-5-20250929", USAGE), COST);
});

test("each message has its cost and the response the sum", async () => {
  const r = await new Agent({ model: answering("claude-sonnet-4-5") }).run("Hello");
  assert.deepEqual(
    r.messages.filter((m) => m.role === "assistant").map((m) => m.cost),
    [COST],
  );
  assert.equal(r.cost, COST);
  assert.equal(r.toJSON().cost, COST);
  assert.equal(cost("anthropic:claude-sonnet-4-5", r.usage), COST);
});

test("a model the table does not know has no cost", async () => {
  const r = await new Agent({ model: answering("no-such-model") }).run("Hello");
  assert.equal(r.cost, undefined);
  assert.equal("cost" in r.messages.at(-1), false);
  assert.equal(cost("anthropic:no-such-model", USAGE), undefined);
});

test("a table of one's own comes first; a bad one names the file and the path", () => {
  const dir = mkdtempSync(join(tmpdir(), "parlance-prices-"));
  try {
    const prices = join(dir, "prices.json");
    writeFileSync(prices, '{"providers": [{"id": "acme", "models": [{"id": "m1", "input": "1", "cached": "0"}]}]}');
    assert.throws(
      () => cost("acme:m1", USAGE, { prices }),
      (e) => e instanceof ConfigError && e.message.includes("prices.json: $.providers[0].models[0].cached: unknown field"),
    );
    writeFileSync(prices, '{"providers": [{"id": "acme", "models": [{"id": "m1", "input": "1", "output": "2"}]}]}');
    assert.equal(cost("acme:m1", { input_tokens: 1_000_000, output_tokens: 500_000 }, { prices }), 2);
    assert.equal(cost("anthropic:claude-sonnet-4-5", USAGE, { prices }), COST);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => cost("claude-sonnet-4-5", USAGE), (e) => e instanceof ConfigError && /expected provider:model/.test(e.message));
});

test("an agent's own price table prices its messages, then the built-in one", async () => {
  const dir = mkdtempSync(join(tmpdir(), "parlance-prices-"));
  try {
    const prices = join(dir, "prices.json");
    writeFileSync(prices, '{"providers": [{"id": "acme", "models": [{"id": "m1", "input": "1", "output": "2"}]}]}');
    const acme = new FunctionModel(() => ({
      content: [{ type: "text", text: "Hi." }],
      usage: { input_tokens: 1_000_000, output_tokens: 500_000 },
      provider: "acme",
      model: "m1",
    }));
    assert.equal((await new Agent({ model: acme, prices }).run("Hello")).cost, 2);
    assert.equal((await new Agent({ model: acme }).run("Hello")).cost, undefined);
    assert.equal((await new Agent({ model: answering("claude-sonnet-4-5"), prices }).run("Hello")).cost, COST);
    assert.throws(
      () => new Agent({ model: acme, prices: join(dir, "nope.json") }),
      (e) => e instanceof ConfigError && /prices: .*nope\.json/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
