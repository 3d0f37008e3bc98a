// The quick start: a tool whose arguments the Rust engine checks before it
// runs (the schema comes from zod), an agent, one run.
//
//     OPENAI_API_KEY=... node quickstart.mjs
import { Agent, tool, ToolError } from "parlance-ai";
import { z } from "zod";

const refund = tool({
  name: "refund",
  description: "Refund an order.",
  parameters: z.object({
    order_id: z.string().describe("The order, like A-1001."),
    amount: z.number().int().min(1).max(500).describe("Euros."),
  }),
  execute: ({ order_id, amount }) => {
    if (order_id.startsWith("X")) throw new ToolError("orders starting with X cannot be refunded");
    return `refunded ${amount} EUR`;
  },
});

const agent = new Agent({
  model: "openai:gpt-4o-mini",
  instructions: "You handle refunds.",
  tools: [refund],
  onToolException: "returnGeneric",
});
// The model asks for 900 EUR: the engine refuses the call before `execute`
// runs, and the model reads why ("amount: must be at most 500, got 900").
const r = await agent.run("Refund 900 EUR on A-1001");
console.log(r.text);
console.log(r.status, r.usage);
