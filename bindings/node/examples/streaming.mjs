// A run as events: text as it comes, tool calls as they start and end.
//
//     OPENAI_API_KEY=... node streaming.mjs
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
for await (const event of agent.stream("Where are A-1001 and A-1002?")) {
  if (event.type === "text_delta") process.stdout.write(event.text);
  else if (event.type === "tool_call_finished") console.log(`[${event.name} ${event.status} in ${event.elapsedMs.toFixed(1)} ms]`);
  else if (event.type === "run_completed") console.log(`\n${JSON.stringify(event.response.usage)}`);
}
