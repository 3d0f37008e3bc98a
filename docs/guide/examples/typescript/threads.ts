// A conversation kept by the store (SQLite here; PostgreSQL with a
// postgres:// URL): each run's steps committed as they complete, the
// history loaded for the next run.
import { Agent, Store } from "parlance-ai";

const store = new Store("sqlite://guide-threads.db");
const thread = await store.createThread({ customer: "ada" });
const agent = new Agent({ model: "openai:gpt-4o-mini", instructions: "Be brief." });
// At start-up: runs of this agent that a process left when it died are
// carried on from their last committed step (none here).
await store.resumeDeadRuns([agent]);
await agent.run("I am Ada.", { store, threadId: thread });
const r = await agent.run("Who am I?", { store, threadId: thread }); // the history comes from the store
console.log(r.text);
console.log(`${(await store.messages(thread)).length} messages, ${(await store.runs(thread)).length} runs on ${thread}`);
