"use strict";
// Threads in SQLite or PostgreSQL, for runs on threads:
// `agent.run(input, { store, threadId })`. The store opens (and migrates)
// off the main thread; `new Store(url)` starts opening at once and every
// call waits for it, `await Store.open(url)` waits (and throws) up front.

const native = require("./native.cjs");
const { ConfigError, rethrow } = require("./errors.cjs");
const { describe } = require("./schema.cjs");

class Store {
  #url;
  #ready;

  /** `"sqlite://parlance.db"`, `"sqlite::memory:"`, `"postgres://..."`. */
  constructor(url) {
    if (typeof url !== "string" || url === "") {
      throw new ConfigError(`Store: expected a database URL ("sqlite://parlance.db"), got ${describe(url)}`);
    }
    this.#url = url;
    this.#ready = native.openStore(url).catch(rethrow);
    // Reported by the first call that waits for it, not as an unhandled rejection.
    this.#ready.catch(() => {});
  }

  /** Opens a store now; a store that cannot be opened throws StoreError here. */
  static async open(url) {
    const s = new Store(url);
    await s.#ready;
    return s;
  }

  /** The database URL. */
  get url() {
    return this.#url;
  }

  /** A new thread (`metadata`: any JSON object); its id. */
  async createThread(metadata) {
    const s = await this.#ready;
    return s.createThread(metadata === undefined ? undefined : JSON.stringify(metadata)).catch(rethrow);
  }

  /** The thread's messages, in order (canonical). */
  async messages(threadId) {
    const s = await this.#ready;
    return JSON.parse(await s.messages(threadId).catch(rethrow));
  }

  /** The thread's runs, oldest first (id, status, usage, error, output...). */
  async runs(threadId) {
    const s = await this.#ready;
    return JSON.parse(await s.runs(threadId).catch(rethrow));
  }

  /** Deletes a thread (refused while a run is active on it). */
  async deleteThread(threadId) {
    const s = await this.#ready;
    await s.deleteThread(threadId).catch(rethrow);
  }

  /** @internal The open native store. */
  _native() {
    return this.#ready;
  }
}

module.exports = { Store };
