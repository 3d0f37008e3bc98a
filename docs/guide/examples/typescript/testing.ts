// Testing an agent with no provider, no key, no network.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { Agent, RunError, tool, type Message, type ModelAnswer, type ModelRequestInfo } from "parlance-ai";
import { FunctionModel, Recorder, Replay, ScriptedModel, TestModel } from "parlance-ai/testing";
import { z } from "zod";

const weather = tool({
  name: "weather",
  description: "Today's weather in a city.",
  parameters: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny in ${city}`,
});

// TestModel: calls every tool with arguments made from its schema, then answers.
const model = new TestModel(); // or new TestModel({ callTools: ["weather"], text: "Done.", seed: 1 })
const r = await new Agent({ model, tools: [weather] }).run("Weather?");
assert.equal(r.text, '{"weather":"Sunny in a"}');
assert.equal(model.received[0].tools?.[0]?.name, "weather");
console.log("TestModel:", r.text);

// FunctionModel: your function of the messages, the tools and the settings.
const CALL: ModelAnswer = { content: [{ type: "tool_call", tool_call: { id: "c1", name: "weather", arguments: { city: "Oslo" } } }] };
function answer(messages: Message[], { tools }: ModelRequestInfo): ModelAnswer {
  if (!messages.some((m) => m.role === "tool")) return CALL;
  return `offered: ${tools.map((t) => t.name).join(", ")}`;
}
console.log("FunctionModel:", (await new Agent({ model: new FunctionModel(answer), tools: [weather] }).run("Weather in Oslo?")).text);

// ScriptedModel: its answers in order; one request too many fails the run.
const scripted = new ScriptedModel(["Hello!", { content: [{ type: "text", text: "Again." }] }]);
const agent = new Agent({ model: scripted });
console.log("ScriptedModel:", (await agent.run("Hi")).text, (await agent.run("Hi again")).text, scripted.remaining);

// Recorder and Replay: record a model's exchanges once, replay them offline.
const dir = mkdtempSync(join(tmpdir(), "guide-"));
const cassette = join(dir, "weather.jsonl");
const real = new ScriptedModel([CALL, "It is sunny in Oslo."]); // a real model here: "openai:gpt-4o-mini"
const recorded = await new Agent({ model: new Recorder(real, cassette), tools: [weather] }).run("Weather in Oslo?");
const replayed = await new Agent({ model: new Replay(cassette), tools: [weather] }).run("Weather in Oslo?");
assert.deepEqual(replayed.messages, recorded.messages);
console.log("Replay:", replayed.text);
try {
  await new Agent({ model: new Replay(cassette), tools: [weather] }).run("And in Rome?");
} catch (e) {
  if (!(e instanceof RunError)) throw e;
  console.log("Changed:", e.message.slice(e.message.indexOf("exchange"))); // names the exchange and the first difference
}
rmSync(dir, { recursive: true });
