"use strict";
// Threads in SQLite or PostgreSQL, for runs on threads:
// `agent.run(input, { store, threadId })`. The store opens (and migrates)
// off the main thread; `new Store(url)` starts opening at once and every
// call waits for it, `await Store.open(url)` waits (and throws) up front.

const native = require("./native.cjs");
const { ConfigError, guard, rethrow } = require("./errors.cjs");
const { describe } = require("./schema.cjs");

class Store {
  /** @type {string} */
  #url;
  /** @type {Promise<any>} the open native store */
  #ready;
  /** @type {any} the native store once open */
  #open;

  /**
   * `"sqlite://parlance.db"`, `"sqlite::memory:"`, `"postgres://..."`. Options:
   * `lease` (ms a run holds its thread without renewing, default 30000),
   * `redact` (secrets scrubbed from everything stored from now on).
   * @param {string} url
   * @param {import("./index").StoreOptions} [options]
   */
  constructor(url, options = {}) {
    if (typeof url !== "string" || url === "") {
      throw new ConfigError(`Store: expected a database URL ("sqlite://parlance.db"), got ${describe(url)}`);
    }
    if (options === null || typeof options !== "object") {
      throw new ConfigError(`Store: expected options {lease?, redact?}, got ${describe(options)}`);
    }
    this.#url = url;
    this.#ready = guard(() => native.openStore(url, JSON.stringify(options))).catch(rethrow);
    this.#ready.then((s) => {
      this.#open = s;
    }, () => {});
    // Reported by the first call that waits for it, not as an unhandled rejection.
    this.#ready.catch(() => {});
  }

  /**
   * Opens a store now; a store that cannot be opened throws StoreError here.
   * @param {string} url
   * @param {import("./index").StoreOptions} [options]
   * @returns {Promise<Store>}
   */
  static async open(url, options) {
    const s = new Store(url, options);
    await s.#ready;
    return s;
  }

  /** The database URL. */
  get url() {
    return this.#url;
  }

  /**
   * One query of the native store (see parlance_bindings' store queries): its answer, parsed.
   * @param {string} op
   * @param {{ [field: string]: unknown }} [fields]
   * @returns {Promise<any>}
   */
  async #q(op, fields = {}) {
    const s = await this.#ready;
    const text = await guard(() => s.query(JSON.stringify({ op, ...fields }))).catch(rethrow);
    return JSON.parse(text);
  }

  /**
   * A new thread (`metadata`: any JSON object; `owner`: whose it is, for
   * their budgets); its id.
   * @param {{ [key: string]: import("./index").JsonValue }} [metadata]
   * @param {{ owner?: string }} [options]
   * @returns {Promise<string>}
   */
  async createThread(metadata, { owner } = {}) {
    return (await this.#q("create_thread", { metadata, owner })).id;
  }

  /**
   * What the store counted for budgets: the thread's, and its owner's today
   * and this month (UTC). Only runs of agents with a thread or owner budget
   * are counted.
   * @param {string} threadId
   * @returns {Promise<import("./index").ThreadSpent>}
   */
  async spent(threadId) {
    return this.#q("spent", { threadId });
  }

  /**
   * The thread: `id`, `owner`, `metadata`, `created_at`, `updated_at` (ms since the epoch).
   * @param {string} threadId
   * @returns {Promise<import("./index").ThreadRecord>}
   */
  async thread(threadId) {
    return this.#q("thread", { threadId });
  }

  /**
   * A page of threads, oldest first: `{items, next}`; pass `next` as `after` for the next page.
   * @param {{ after?: string, limit?: number }} [options]
   * @returns {Promise<import("./index").Page<import("./index").ThreadRecord>>}
   */
  async threads({ after, limit } = {}) {
    return this.#q("threads", { after, limit });
  }

  /**
   * The thread's messages, in order (canonical).
   * @param {string} threadId
   * @returns {Promise<import("./index").Message[]>}
   */
  async messages(threadId) {
    return this.#q("messages", { threadId });
  }

  /**
   * `limit` stored messages from position `start`: `{seq, run_id, message}`.
   * @param {string} threadId
   * @param {{ start?: number, limit?: number }} [options]
   * @returns {Promise<import("./index").StoredMessage[]>}
   */
  async messagePage(threadId, { start, limit } = {}) {
    return this.#q("message_page", { threadId, start, limit });
  }

  /**
   * The thread's runs, oldest first (id, status, usage, error, output...).
   * @param {string} threadId
   * @returns {Promise<import("./index").RunRecord[]>}
   */
  async runs(threadId) {
    return this.#q("runs", { threadId });
  }

  /**
   * One run's record.
   * @param {string} runId
   * @returns {Promise<import("./index").RunRecord>}
   */
  async run(runId) {
    return this.#q("run", { runId });
  }

  /**
   * What tools kept for operators (never sent to the model): `{seq, tool_call_id, artifact}`.
   * @param {string} threadId
   * @returns {Promise<import("./index").ArtifactRecord[]>}
   */
  async artifacts(threadId) {
    return this.#q("artifacts", { threadId });
  }

  /**
   * Runs waiting for decisions, the most recently paused first.
   * @param {{ limit?: number }} [options]
   * @returns {Promise<import("./index").RunRecord[]>}
   */
  async waitingRuns({ limit } = {}) {
    return this.#q("waiting", { limit });
  }

  /**
   * Deletes a thread (refused while a run is active on it; `force`: also when a run waits there).
   * @param {string} threadId
   * @param {{ force?: boolean }} [options]
   * @returns {Promise<void>}
   */
  async deleteThread(threadId, { force } = {}) {
    await this.#q("delete_thread", { threadId, force });
  }

  /**
   * Runs whose process died (`running`, their lease run out), oldest first:
   * `{runId, threadId, agent, settings}` (`agent`: the name of the agent
   * that made it, null for an unnamed one). Each can be carried on with
   * `agent.carryOn(runId, { store })`.
   * @returns {Promise<import("./index").DeadRun[]>}
   */
  async deadRuns() {
    return this.#q("dead_runs");
  }

  /**
   * Carries on every dead run that one of `agents` made (the agent of the
   * run's name; for an unnamed agent, one whose settings are the same),
   * concurrently, from its last committed step, and waits for their ends.
   * Call it at start-up and from time to time (every third of the lease
   * finds a dead run soon after its lease runs out). A run none of `agents`
   * made is left alone.
   * @param {readonly import("./index").Agent[]} agents
   * @param {{ maxAttempts?: number }} [options]
   * @returns {Promise<import("./index").ResumedRun[]>}
   */
  async resumeDeadRuns(agents, { maxAttempts } = {}) {
    if (!Array.isArray(agents)) throw new ConfigError(`agents: expected a list of agents, got ${describe(agents)}`);
    const settings = agents.map((a) => a.settings);
    /** @type {Promise<import("./index").ResumedRun>[]} */
    const jobs = [];
    for (const run of await this.deadRuns()) {
      const i = settings.findIndex((s) =>
        run.agent !== null ? s.name === run.agent : JSON.stringify(s) === JSON.stringify(run.settings),
      );
      if (i < 0) continue;
      const done = (/** @type {string} */ status, /** @type {string | null} */ reason) => ({
        runId: run.runId,
        threadId: run.threadId,
        status: /** @type {import("./index").ResumedRun["status"]} */ (status),
        reason,
      });
      jobs.push(
        agents[i].carryOn(run.runId, { store: this, maxAttempts }).then(
          (/** @type {import("./index").Response} */ r) => done(r.status, null),
          (/** @type {any} */ e) => {
            if (e?.name === "RunError") return done("failed", String(e.message));
            if (e?.name === "StoreError") return done("not_resumed", String(e.message));
            throw e;
          },
        ),
      );
    }
    return Promise.all(jobs);
  }

  /**
   * @internal The native store if it is open already (for what cannot wait for it).
   * @returns {any}
   */
  _nativeNow() {
    return this.#open;
  }

  /**
   * @internal The open native store.
   * @returns {Promise<any>}
   */
  _native() {
    return this.#ready;
  }
}

module.exports = { Store };
