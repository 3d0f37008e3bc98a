// A typed answer: the agent's outputSchema gives the model a JSON Schema,
// the Rust core checks the answer against it, and `r.output` is the value.
//
//     OPENAI_API_KEY=... node structured_output.mjs
import { Agent } from "parlance-ai";
import { z } from "zod";

const Order = z.object({
  order_id: z.string(),
  status: z.enum(["processing", "shipped", "delivered"]),
  total_eur: z.number(),
});

const agent = new Agent({
  model: "openai:gpt-4o-mini",
  instructions: "Extract the order.",
  outputSchema: { name: "Order", schema: Order },
});
const r = await agent.run("Order A-1001 shipped, 42.50 EUR.");
const order = Order.parse(r.output);
console.log(order.order_id, order.status, order.total_eur);
