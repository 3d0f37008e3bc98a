// A typed answer: the schema goes to the model, the Rust core checks the
// answer, and `r.output` is the value (parse it with the same schema for
// its type).
import { Agent } from "parlance-ai";
import { z } from "zod";

const Order = z.object({
  order_id: z.string(),
  status: z.enum(["processing", "shipped", "delivered"]),
  total_eur: z.number(),
});

const agent = new Agent({ model: "openai:gpt-4o-mini", instructions: "Extract the order.", outputSchema: { name: "Order", schema: Order } });
const r = await agent.run("Order A-1001 shipped, 42.50 EUR.");
const order = Order.parse(r.output);
console.log(order.order_id, order.status, order.total_eur);
