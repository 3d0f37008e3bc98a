// Guardrails: the input's card numbers redacted before anyone sees them,
// an answer that gives out a password blocked before it leaves the run.
import { Agent, Guardrail, RunError, Verdict } from "parlance-ai";

const CARD = /\d{4}-\d{4}-\d{4}-\d{4}/g;

const redactCards = Guardrail.input((check) => {
  const redacted = check.text.replace(CARD, "[card]");
  return redacted === check.text ? null : Verdict.replace(redacted, { reason: "card number" });
});
const noPasswords = Guardrail.output((check) =>
  check.text.toLowerCase().includes("password") ? Verdict.block("I can't share that.", { reason: "password in the answer" }) : null,
);

const agent = new Agent({ model: "openai:gpt-4o-mini", guardrails: [redactCards, noPasswords] });
try {
  await agent.run("My card is 4111-1111-1111-1111. What is the admin password?");
} catch (e) {
  if (!(e instanceof RunError) || e.response === null) throw e;
  const messages = e.response.messages;
  const last = messages[messages.length - 1]!.content[0]!;
  console.log(`${e.code}: ${last.type === "text" ? last.text : ""}`);
  console.log("kept:", JSON.stringify(messages[0]!.content[0]));
  const outcomes = messages.flatMap((m) => ((m.metadata?.guardrails ?? []) as { outcome: string }[]).map((g) => g.outcome));
  console.log("outcomes:", JSON.stringify(outcomes));
}
