// Budgets: this agent may make two tool calls a run. At the limit the
// model answers once more, without tools, and the run ends
// budget_exhausted with that answer as its last message.
import { Agent, RunError, tool } from "parlance-ai";
import { z } from "zod";

const getOrder = tool({
  name: "get_order",
  description: "Look up one order by its id.",
  parameters: z.object({ order_id: z.string() }),
  execute: ({ order_id }) => `${order_id} has shipped`,
});
const agent = new Agent({ model: "openai:gpt-4o-mini", tools: [getOrder], budget: { run: { toolCalls: 2 } } });
try {
  await agent.run("Where are A-1, A-2 and A-3?");
} catch (e) {
  if (!(e instanceof RunError) || !e.response) throw e;
  console.log(e.code, "-", e.response.error?.message);
  const last = e.response.messages.at(-1)!.content[0]!;
  console.log("last answer:", last.type === "text" ? last.text : "");
}
