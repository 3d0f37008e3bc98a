// A run as events: text as it is written, tool calls as they end.
import { setTimeout as sleep } from "node:timers/promises";

import { Agent, tool } from "parlance-ai";
import { z } from "zod";

const getOrder = tool({
  name: "get_order",
  description: "Look up one order by its id.",
  parameters: z.object({ order_id: z.string() }),
  execute: async ({ order_id }) => {
    await sleep(10); // a database, an HTTP call...
    return { order_id, status: "shipped" };
  },
});

const agent = new Agent({ model: "openai:gpt-4o-mini", instructions: "You answer about orders.", tools: [getOrder] });
for await (const event of agent.stream("Where is A-1001?")) {
  if (event.type === "text_delta") process.stdout.write(event.text);
  else if (event.type === "tool_call_finished") console.log(`[${event.name}: ${event.status}]`);
  else if (event.type === "run_completed") console.log(`\n${event.response.status}, ${event.response.usage.outputTokens} tokens out`);
}
