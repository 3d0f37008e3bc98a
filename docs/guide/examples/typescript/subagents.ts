// Agents that call agents: the researcher, used as a tool by the support
// agent. Support's model sends it a task; it runs the task as a run of its
// own; support's model reads only its answer, and what it spent rolls up.
import { Agent } from "parlance-ai";

const researcher = new Agent({
  model: "openai:gpt-4o-mini",
  name: "researcher",
  instructions: "You look orders up: say where the order is and when it shipped.",
});
const support = new Agent({
  model: "openai:gpt-4o-mini",
  name: "support",
  instructions: "You answer customers. Ask the researcher to look orders up.",
  tools: [researcher.asTool({ description: "Looks orders up: send it the order and the question." })],
});

const r = await support.run("Where is order A-1001?");
console.log(r.text);
const toolMessage = r.messages.find((m) => m.role === "tool")!;
const block = toolMessage.content[0]!;
const read = block.type === "tool_result" ? block.tool_result.content[0] : undefined;
console.log("support's model read:", read?.type === "text" ? read.text : "");
console.log(`input tokens: ${r.usage.inputTokens}, the researcher's ${toolMessage.usage?.input_tokens}`);
