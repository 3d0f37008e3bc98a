// The first agent: a tool whose schema comes from zod, an agent, one run.
// OPENAI_API_KEY=sk-... npx tsx get_started.ts
import { Agent, tool } from "parlance-ai";
import { z } from "zod";

const getOrder = tool({
  name: "get_order",
  description: "Look up one order by its id.",
  parameters: z.object({ order_id: z.string().describe("The order, like A-1001.") }),
  execute: ({ order_id }) => ({ order_id, status: "shipped" }),
});

const agent = new Agent({ model: "openai:gpt-4o-mini", instructions: "You answer about orders.", tools: [getOrder] });
const r = await agent.run("Where is order A-1001?");
console.log(r.text);
console.log(r.status, r.usage.inputTokens, r.usage.outputTokens);
