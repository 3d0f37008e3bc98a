// One store URL for every process: a SQLite file on one machine, one
// PostgreSQL database for many servers (PARLANCE_STORE_URL, as `parlance
// serve` reads it). Opening the store creates and migrates its schema.
import { Store } from "parlance-ai";

const url = process.env.PARLANCE_STORE_URL ?? "sqlite://parlance.db";
const store = await Store.open(url);
const thread = await store.createThread({ customer: "ada" });
console.log(url.split(":")[0], JSON.stringify((await store.thread(thread)).metadata), (await store.messages(thread)).length);
await store.deleteThread(thread);
