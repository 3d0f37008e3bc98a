// Context windows: a conversation past 80 % of the model's window (a small
// one here, 500 tokens) has its oldest turns summarized; the summary is
// sent in their place, and the run keeps a record of the cut.
import { Agent, type Turn } from "parlance-ai";

const said = (role: "user" | "assistant", text: string) => ({ role, content: [{ type: "text" as const, text }] });
const history: Turn[] = Array.from({ length: 6 }, (_, i) => ({
  messages: [said("user", `Question ${i}: ${"x".repeat(300)}`), said("assistant", `Answer ${i}.`)],
}));
const agent = new Agent({ model: "openai:gpt-4o-mini", context: { strategy: "compact", window: 500 } });
const r = await agent.run("Which plan did we settle on?", { turns: history });
const record = r.messages[1]!;
const compaction = record.metadata?.compaction as { replaces: number };
console.log(`summarized: the first ${compaction.replaces} of 12 messages`);
const text = record.content[0]!;
console.log("summary:", text.type === "text" ? text.text.split("\n").at(-1) : "");
console.log("answer:", r.output);
