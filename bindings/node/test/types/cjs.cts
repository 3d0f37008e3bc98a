// The CommonJS entry point's types (require).
import parlance = require("parlance-ai");

const t = parlance.tool({ name: "ping", execute: () => "pong" });
const agent = new parlance.Agent({ model: new parlance.Model("openai:gpt-4o-mini", { baseURL: "http://127.0.0.1:1/v1", apiKey: "k" }), tools: [t] });
void agent.run("hi").then((r: parlance.Response) => r.text);

import testing = require("parlance-ai/testing");
const replayed = new parlance.Agent({ model: new testing.Replay("cassette.jsonl") });
const scripted: parlance.Model = new testing.ScriptedModel(["hi"]);
void replayed;
void scripted;
