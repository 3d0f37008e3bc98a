// A provider as an object (your key, base URL, headers), and a history
// converted from one provider's wire format to another's.
import { Agent, OpenAI, format } from "parlance-ai";

// Any OpenAI-compatible server: a base URL and a key of your own.
const provider = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL ?? "https://api.openai.com/v1", apiKey: process.env.OPENAI_API_KEY });
const agent = new Agent({ model: provider.model("gpt-4o-mini"), instructions: "Be brief." });
console.log((await agent.run("Hello!")).text);

// Anthropic's signed thinking cannot go to OpenAI: it is dropped, and said.
const anthropicRequest = {
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  messages: [
    { role: "user", content: "Hi" },
    { role: "assistant", content: [
      { type: "thinking", thinking: "Greet back.", signature: "EqQBCg" },
      { type: "text", text: "Hello!" },
    ] },
    { role: "user", content: "And again?" },
  ],
};
const dropped: string[] = [];
const openaiRequest = format.convert(anthropicRequest, {
  from: "anthropic", to: "openai-chat", model: "gpt-4o-mini", onWarning: (w) => dropped.push(w),
}) as { messages: { role: string }[] };
console.log(JSON.stringify(openaiRequest.messages.map((m) => m.role)));
for (const w of dropped) console.log("dropped:", w);
