// A tool that waits for a human: the paused response is the whole state
// (store its JSON anywhere), and any process resumes it with decisions.
//
//     OPENAI_API_KEY=... node approvals.mjs
import { Agent, Response, approve, reject, tool } from "parlance-ai";
import { z } from "zod";

const refund = tool({
  name: "refund",
  description: "Refund an order (over 100 EUR a person approves first).",
  parameters: z.object({ order_id: z.string(), amount: z.number().int() }),
  needsApproval: ({ amount }) => amount > 100,
  execute: ({ order_id, amount }) => `refunded ${amount} EUR on ${order_id}`,
});

function build() {
  return new Agent({ model: "openai:gpt-4o-mini", instructions: "You handle refunds.", tools: [refund] });
}

/**
 * A reviewer's decisions: small refunds pass, big ones are refused.
 * @param {Response} paused
 */
function review(paused) {
  return paused.pending.map((p) => {
    const { amount } = /** @type {{ amount: number }} */ (p.arguments);
    return amount <= 300 ? approve(p) : reject(p, "over 300 EUR");
  });
}

let r = await build().run("Refund 250 EUR on A-1001 and 400 EUR on A-1002");
if (r.status === "requires_approval") {
  const stored = r.toString(); // a database row, a queue message...
  console.log(`waiting: ${r.pending.map((p) => p.tool_call_id).join(", ")}`);
  r = await build().resume(stored, review(Response.fromJSON(stored)));
}
console.log(r.status, r.text);
