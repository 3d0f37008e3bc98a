// A refund over 100 EUR waits for a person. The paused run is its JSON:
// keep it anywhere, resume it later with a fresh agent (another process,
// another language).
import { Agent, Response, approve, tool } from "parlance-ai";
import { z } from "zod";

const refund = tool({
  name: "refund",
  description: "Refund an order.",
  parameters: z.object({ order_id: z.string(), amount: z.number().int() }),
  needsApproval: ({ amount }) => amount > 100,
  execute: ({ order_id, amount }) => `refunded ${amount} EUR on ${order_id}`,
});

const build = () => new Agent({ model: "openai:gpt-4o-mini", instructions: "You handle refunds.", tools: [refund] });

const paused = await build().run("Refund 250 EUR on A-1001");
console.log(paused.status);
const stored = paused.toString(); // a database row, a queue message, a file...

// Later, elsewhere:
const waiting = Response.fromJSON(stored);
const call = waiting.pending[0]; // .tool_call_id, .name, .arguments, .digest
console.log("waiting:", call.name, JSON.stringify(call.arguments));
const done = await build().resume(stored, [approve(call)]);
// or: edit(call, { order_id: "A-1001", amount: 100 }),
//     reject(call, "over the customer's limit"), answer(call, "Refunded by hand.")
console.log(done.status, done.text);
