// Providers by string or object, and conversion between wire formats.
import assert from "node:assert/strict";
import { test } from "node:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { Agent, Model, OpenAI, Anthropic, ConfigError, format, FormatError } from "parlance-ai";
import { startMock, text } from "./helpers/mock.mjs";

test("a provider object: base URL, key and headers of your own", async (t) => {
  const mock = await startMock([text("hi"), text("hi again")]);
  t.after(mock.close);
  const openai = new OpenAI({ baseURL: mock.url, apiKey: "sk-own", headers: { "x-team": "refunds" }, userAgent: "shop/1.0" });
  const byModel = new Agent({ model: openai.model("gpt-4o-mini") });
  assert.equal((await byModel.run("hello")).text, "hi");
  const byName = new Agent({ model: "openai:gpt-4o-mini", provider: openai });
  assert.equal((await byName.run("hello")).text, "hi again");
  for (const r of mock.requests) {
    assert.equal(r.headers.authorization, "Bearer sk-own");
    assert.equal(r.headers["x-team"], "refunds");
    assert.equal(r.headers["user-agent"], "shop/1.0");
    assert.equal(r.body.model, "gpt-4o-mini");
  }
  assert.equal(openai.model("gpt-4o").provider, "openai");
  assert.equal(openai.model("gpt-4o").modelId, "gpt-4o");
});

test("model strings and their errors", () => {
  const saved = process.env.ANTHROPIC_API_KEY;
  delete process.env.ANTHROPIC_API_KEY;
  try {
    assert.throws(() => new Model("anthropic:claude-sonnet-4-5"), /ANTHROPIC_API_KEY is not set/);
    assert.equal(new Anthropic({ apiKey: "k" }).model("claude-sonnet-4-5").provider, "anthropic");
  } finally {
    if (saved !== undefined) process.env.ANTHROPIC_API_KEY = saved;
  }
  assert.throws(() => new Model("nope:x", { apiKey: "k" }), (e) => e instanceof ConfigError && /nope/.test(e.message));
  assert.throws(() => new Model("openai:gpt-4o", { baseUrl: "x" }), /unknown setting "baseUrl"/);
  assert.throws(() => new Agent({ model: 42 }), ConfigError);
});

test("format.convert: a provider's request to another's, through the canonical format", () => {
  const openaiRequest = {
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "Sunny" },
    ],
  };
  const canonical = format.convert(openaiRequest, { from: "openai-chat", to: "canonical" });
  assert.equal(canonical.model, "gpt-4o-mini");
  assert.deepEqual(canonical.messages[2].content[0], { type: "tool_call", tool_call: { id: "call_1", name: "weather", arguments: { city: "Paris" } } });
  const anthropic = format.convert(openaiRequest, { from: "openai-chat", to: "anthropic", model: "claude-sonnet-4-5" });
  assert.equal(anthropic.model, "claude-sonnet-4-5");
  assert.equal(anthropic.system, "Be brief.");
  assert.equal(anthropic.messages.at(-1).content[0].tool_use_id, "call_1");
  assert.throws(() => format.convert(openaiRequest, { from: "openai-chat", to: "nosuch" }), /to: unknown format "nosuch"/);
  assert.throws(() => format.convert({ messages: [{ role: "robot", content: [] }] }, { from: "canonical", to: "anthropic", model: "m" }), FormatError);
  assert.throws(() => format.convert([], { from: "canonical", to: "anthropic" }), /model: required to write a request/);
});

test("format.convert: what is not carried is named (the same translation as parlance convert)", () => {
  const responses = { model: "gpt-5", input: [{ role: "user", content: "hi" }], include: ["reasoning.encrypted_content"], stream: true };
  const warnings = [];
  const chat = format.convert(responses, { from: "openai-responses", to: "openai-chat", onWarning: (w) => warnings.push(w) });
  assert.equal(chat.include, undefined);
  assert.ok(warnings.some((w) => /options\.extra\.openai-responses not sent to openai-chat.*include/.test(w)), warnings.join("\n"));
  assert.equal(format.convert(responses, { from: "openai-responses", to: "canonical" }).stream, true);
  const named = [];
  format.convert({ model: "m", messages: [{ role: "user", name: "ann", content: "hi" }] }, { from: "openai-chat", to: "canonical", onWarning: (w) => named.push(w) });
  assert.ok(named.some((w) => w.includes("messages[0].name")), named.join("\n"));
});

/** The first `!!binary` response body of a VCR cassette (base64 lines). */
function binaryBody(cassette) {
  const lines = readFileSync(join(process.env.PARLANCE_REPO, "testdata/providers", cassette), "utf8").split("\n");
  const start = lines.findIndex((l) => l.trim() === "string: !!binary |");
  const indent = lines[start + 1].length - lines[start + 1].trimStart().length;
  const chunk = [];
  for (const line of lines.slice(start + 1)) {
    if (line.length - line.trimStart().length < indent) break;
    chunk.push(line.trim());
  }
  return Buffer.from(chunk.join(""), "base64");
}

test("convert reads a binary Bedrock stream and every provider's dialect", () => {
  const frames = binaryBody("bedrock-converse/pydantic__test_bedrock_model_thinking_part_stream.yaml");
  const m = format.convert(new Uint8Array(frames), { from: "bedrock-converse", to: "canonical", kind: "stream" });
  assert.deepEqual(m.content.map((b) => b.type), ["thinking", "text"]);
  assert.ok(m.content[0].signature);
  assert.throws(
    () => format.convert(Buffer.from([0x64, 0x61, 0x74, 0x61, 0x3a, 0x20, 0xff]), { from: "anthropic", to: "canonical", kind: "stream" }),
    /not UTF-8 \(byte 6/,
  );
  const body = {
    model: "deepseek-reasoner",
    messages: [
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: null,
        reasoning_content: "Call the tool.",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "sunny" },
    ],
  };
  const back = format.convert(body, { from: "deepseek", to: "deepseek" });
  assert.equal(back.messages[1].reasoning_content, "Call the tool.");
  const warnings = [];
  const plain = format.convert(body, { from: "deepseek", to: "openai-chat", onWarning: (w) => warnings.push(w) });
  assert.equal(plain.messages[1].reasoning_content, undefined);
  assert.ok(warnings.some((w) => w.includes("thinking dropped")), warnings.join("\n"));
});
