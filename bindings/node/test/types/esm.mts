// Type-checked by types.test.mjs (tsc, strict): the README's program, tools
// from zod and from JSON Schema with their inferred argument types, and the
// format's generated types. Each @ts-expect-error must be an error: an
// inference that fell back to `any` would make it unused, and fail.
import { Agent, tool, ToolError, approve, edit, reject, answer, Response, format, RunError, Store, OpenAI, StoreError } from "parlance-ai";
import type { Message, Block, ApprovalRequest, ResponseDocument, RunEvent } from "parlance-ai";
import { z } from "zod";

const refund = tool({
  name: "refund",
  description: "Refund an order.",
  parameters: z.object({ orderId: z.string(), amount: z.number().int().min(1).max(500) }),
  execute: async ({ orderId, amount }) => {
    if (orderId.startsWith("X")) throw new ToolError("orders starting with X cannot be refunded");
    // @ts-expect-error amount is a number
    amount.toUpperCase();
    return `refunded ${amount.toFixed(0)} EUR`;
  },
});

const lookup = tool({
  name: "lookup",
  parameters: {
    type: "object",
    properties: { id: { type: "string" }, verbose: { type: "boolean" }, tags: { type: "array", items: { type: "string" } } },
    required: ["id"],
  },
  needsApproval: ({ id }) => id.startsWith("VIP"),
  execute: ({ id, verbose, tags }, ctx) => {
    const v: boolean | undefined = verbose;
    const t: string[] | undefined = tags;
    // @ts-expect-error id is a string
    const n: number = id;
    ctx.abortSignal.throwIfAborted();
    return { id, v, t, n, call: ctx.callId, left: ctx.deadline - Date.now() };
  },
});

// execute gets what the zod schema's parse gives; needsApproval the JSON.
const book = tool({
  name: "book",
  parameters: z.object({ day: z.string().pipe(z.coerce.date()), chairs: z.number().default(2) }),
  needsApproval: ({ day }) => day.startsWith("2026"),
  execute: ({ day, chairs }) => {
    const d: Date = day;
    const c: number = chairs;
    // @ts-expect-error day is a Date once parsed
    day.startsWith("2026");
    return `${d.toISOString()} ${c}`;
  },
});
void book;

const agent = new Agent({
  model: "openai:gpt-4o-mini",
  instructions: "You handle refunds.",
  tools: [refund, lookup],
  onToolException: "returnGeneric",
});
// @ts-expect-error not a policy
new Agent({ model: "openai:gpt-4o-mini", onToolException: "ignore" });

async function main(): Promise<void> {
  const r: Response = await agent.run("Refund 900 EUR on A-1001");
  console.log(r.text, r.usage.inputTokens, r.status);
  const m: Message = r.messages[0];
  const b: Block = m.content[0];
  if (b.type === "tool_call") console.log(b.tool_call.name, b.tool_call.arguments);
  if (r.status === "requires_approval") {
    const p: ApprovalRequest = r.pending[0];
    await agent.resume(r, [approve(p), edit("c2", { id: "x" }), reject("c3", "no"), answer("c4", "done by hand")]);
  }
  const doc: ResponseDocument = r.toJSON();
  Response.fromJSON(doc);
  for await (const e of agent.stream("hi", { turns: [r], deps: { db: 1 } })) {
    const ev: RunEvent = e;
    if (ev.type === "text_delta") console.log(ev.text);
    if (ev.type === "run_completed") console.log(ev.response.text);
  }
  try {
    await agent.run([{ role: "user", content: [{ type: "text", text: "hi" }] }]);
  } catch (e) {
    if (e instanceof RunError) console.log(e.code, e.cause, e.response?.status);
  }
  const store = new Store("sqlite://parlance.db");
  const thread: string = await store.createThread({ customer: "ada" });
  const onThread = new Agent({ model: "gpt-4o-mini", provider: new OpenAI({ baseURL: "http://127.0.0.1:1/v1", apiKey: "k" }) });
  await onThread.run("hi", { store, threadId: thread });
  await onThread.retry(thread, { store }).catch((e: unknown) => e instanceof StoreError && e.kind === "busy");
  const converted = format.convert({ messages: [] }, { from: "canonical", to: "anthropic", model: "claude-sonnet-4-5" });
  console.log(converted);
  format.validate(doc, "response");
  // @ts-expect-error not a kind
  format.validate(doc, "nope");
}
void main;

// Models written in TypeScript, and parlance-ai/testing.
import { Model } from "parlance-ai";
import type { ModelRequestInfo } from "parlance-ai";
import { TestModel, ScriptedModel, FunctionModel, Recorder, Replay } from "parlance-ai/testing";
import type { RequestDocument } from "parlance-ai/testing";

class Echo extends Model {
  override readonly provider = "mine";
  async request(messages: Message[], { tools, settings, signal }: ModelRequestInfo) {
    signal.throwIfAborted();
    const names: string[] = tools.map((t) => t.name);
    return `${messages.length} ${names.join()} ${String(settings.max_tokens)}`;
  }
}
const fromObject = new Agent({ model: { request: () => ({ content: [{ type: "text" as const, text: "hi" }] }) } });
// @ts-expect-error request must return a message or a string
const badObject = new Agent({ model: { request: () => 42 } });
async function testing() {
  const tm = new TestModel({ callTools: ["refund"], seed: 1 });
  await new Agent({ model: tm, tools: [refund] }).run("hi");
  const first: RequestDocument | undefined = tm.lastRequest;
  console.log(first?.messages.length, tm.received.length, tm.callTools);
  // @ts-expect-error callTools is "all" or names
  new TestModel({ callTools: "some" });
  const scripted = new ScriptedModel(["Hello", { content: [{ type: "text", text: "Again" }] }]);
  const left: number = scripted.remaining;
  const fm = new FunctionModel(async (messages, { tools }) => `${messages.length} ${tools.length}`);
  const rec = new Recorder(new Echo(), "cassette.jsonl", { append: true });
  const path: string = rec.path;
  const replay = new Replay(path);
  await new Agent({ model: replay }).run("hi");
  console.log(left, fm.modelId, replay.remaining, fromObject, badObject);
}
void testing;
