// Reading and checking messages: one strict reader in every language.
import { FormatError, format } from "parlance-ai";

// The kind is recognised from the fields; the canonical form is written back.
console.log(format.validate('{"role": "user", "content": "Hi"}'));
console.log(JSON.stringify(format.canonical({ role: "user", content: "Hi" })));

// The older shapes of the seeds are read into today's.
const old = { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "get_order", args: { order_id: "A-1" } }] };
console.log(format.stringify(old, "message"));

// A problem is named by its JSON path.
try {
  format.validate({ role: "user", content: [{ type: "text", text: "Hi" }, { type: "foo" }] });
} catch (e) {
  if (!(e instanceof FormatError)) throw e;
  console.log(e.message);
}
