// Agents pointed at a mock of the OpenAI API, and reading their results.
import { Agent, Model } from "parlance-ai";

export function modelFor(mock) {
  return new Model("openai:gpt-4o-mini", { baseURL: mock.url, apiKey: "sk-test" });
}

export function agentFor(mock, options = {}) {
  return new Agent({ model: modelFor(mock), ...options });
}

/** The tool results of a response (or of a request's messages), by call id. */
export function results(r) {
  const out = {};
  for (const m of r.messages) {
    for (const b of m.content) {
      // `status` is left out when it is ok (the canonical form).
      if (b.type === "tool_result") out[b.tool_result.tool_call_id] = { status: "ok", ...b.tool_result };
    }
  }
  return out;
}

/** The text of a tool result. */
export function textOf(result) {
  return result.content.map((b) => (b.type === "text" ? b.text : JSON.stringify(b.json))).join("");
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
