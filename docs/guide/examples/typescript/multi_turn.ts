// Two turns: the first response goes back, unchanged, in `turns`.
import { Agent } from "parlance-ai";

const agent = new Agent({ model: "openai:gpt-4o-mini", instructions: "Be brief." });
const first = await agent.run("I am Ada.");
const second = await agent.run("Who am I?", { turns: [first] }); // the model sees both turns
console.log(second.text);
console.log(`${first.messages.length} messages in the first turn, ${second.messages.length} in the second`);
