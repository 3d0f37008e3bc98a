// A tool with bounds, an error the model reads, and the context of the call.
import { Agent, tool, ToolError } from "parlance-ai";
import { z } from "zod";

const refund = tool({
  name: "refund",
  description: "Refund an order.",
  parameters: z.object({
    order_id: z.string().describe("The order, like A-1001."),
    amount: z.number().int().min(1).max(500).describe("Euros to refund."),
  }),
  execute: async ({ order_id, amount }, ctx) => {
    if (order_id.startsWith("X")) throw new ToolError("orders starting with X cannot be refunded");
    return `refunded ${amount} EUR on ${order_id} for ${ctx.deps.user}`;
  },
});

const agent = new Agent({ model: "openai:gpt-4o-mini", instructions: "You handle refunds.", tools: [refund], toolTimeout: 10_000 });
const r = await agent.run("Refund 900 EUR on A-1001, then 40 EUR on X-7, then 40 EUR on A-1001", { deps: { user: "ada" } });

// What the model read back from each call: the engine refused the first
// before execute ran; the second threw ToolError; the third ran.
for (const m of r.messages) {
  for (const b of m.content) {
    if (b.type === "tool_result") {
      const text = b.tool_result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
      console.log(`${b.tool_result.status ?? "ok"}: ${text}`);
    }
  }
}
console.log(r.text);
