// The embedded local model: no key, no server, no network once it is
// fetched (`parlance model pull`, or pullLocalModel()).
import { Agent, localModelPath, pullLocalModel } from "parlance-ai";

console.log("model file:", localModelPath() ?? (await pullLocalModel()));
const agent = new Agent({ model: "local", instructions: "Answer in one short sentence.", modelSettings: { max_tokens: 32 } });
const r = await agent.run("What is the capital of France?");
console.log(r.status, r.messages.at(-1)?.provider, r.usage.outputTokens > 0);
console.log(r.text);
