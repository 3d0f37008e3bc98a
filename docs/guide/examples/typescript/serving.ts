// A client of `parlance serve` (the configuration above): one run of the
// "support" agent, then the same thread again. Plain HTTP and JSON; the
// answer is the same canonical response as a run in-process.
import { Response, type ResponseDocument } from "parlance-ai";

const BASE = process.env.PARLANCE_URL ?? "http://127.0.0.1:8080";

async function post(path: string, body: unknown): Promise<any> {
  const reply = await fetch(BASE + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (!reply.ok) throw new Error(`${path}: ${reply.status} ${await reply.text()}`);
  return reply.json();
}

const thread: string = (await post("/v1/threads", { metadata: { customer: "ada" } })).id;
const r = Response.fromJSON((await post("/v1/runs", { agent: "support", input: "Where is A-1001?", thread_id: thread })) as ResponseDocument);
console.log(r.status, r.text);
const again = await post("/v1/runs", { agent: "support", input: "Thanks!", thread_id: thread });
console.log(again.status, again.output);
