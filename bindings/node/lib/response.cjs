"use strict";
// A run's response over its canonical JSON text, as the Rust core wrote
// it: nothing is parsed until it is read, and `toString()` is that text,
// byte for byte (what Rust and Python write for the same response).

const native = require("./native.cjs");
const { guard } = require("./errors.cjs");

/** @typedef {import("./index").ResponseDocument} ResponseDocument */

class Response {
  /** @type {string} */
  #text;
  /** @type {ResponseDocument | undefined} */
  #doc;

  /**
   * @internal From the canonical text; use `Response.fromJSON` for yours.
   * @param {string} text
   */
  constructor(text) {
    this.#text = text;
  }

  /**
   * Reads a response from canonical JSON (text or a parsed value), strictly:
   * anything unknown or malformed is a FormatError naming its path.
   * @param {string | ResponseDocument} value
   * @returns {Response}
   */
  static fromJSON(value) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return new Response(guard(() => /** @type {string} */ (native.canonical("response", text).canonical)));
  }

  /** @returns {ResponseDocument} */
  get #d() {
    return (this.#doc ??= JSON.parse(this.#text));
  }

  /**
   * The run's id.
   * @returns {string | undefined}
   */
  get id() {
    return this.#d.id ?? undefined;
  }
  /**
   * The thread the run belongs to, if any.
   * @returns {string | undefined}
   */
  get threadId() {
    return this.#d.thread_id ?? undefined;
  }
  /** `completed`, `requires_approval` or `failed`. */
  get status() {
    return this.#d.status;
  }
  /** This run's messages (the input, the assistant's, the tools'), canonical. */
  get messages() {
    return this.#d.messages;
  }
  /** The final output: the answer's text, or the JSON value with an output schema. */
  get output() {
    return this.#d.output ?? null;
  }
  /** The answer as text (structured output written as JSON; empty unless completed). */
  get text() {
    const o = this.#d.output;
    if (o === null || o === undefined) return "";
    return typeof o === "string" ? o : JSON.stringify(o);
  }
  /**
   * Token counts summed over the run.
   * @returns {import("./index").Usage}
   */
  get usage() {
    /** @type {Partial<ResponseDocument["usage"]>} */
    const u = this.#d.usage ?? {};
    /** @type {import("./index").Usage} */
    const usage = {
      inputTokens: u.input_tokens ?? 0,
      outputTokens: u.output_tokens ?? 0,
      totalTokens: (u.input_tokens ?? 0) + (u.output_tokens ?? 0),
      cachedTokens: u.cached_tokens ?? 0,
    };
    if (u.cache_write_tokens != null) usage.cacheWriteTokens = u.cache_write_tokens;
    if (u.reasoning_tokens != null) usage.reasoningTokens = u.reasoning_tokens;
    return usage;
  }
  /**
   * What the run's model calls cost, in US dollars (the sum of its
   * messages' `cost`); undefined when a model is not in the price table.
   * @returns {number | undefined}
   */
  get cost() {
    return this.#d.cost ?? undefined;
  }
  /**
   * Why the model stopped, when it said.
   * @returns {import("./index").FinishReason | undefined}
   */
  get finishReason() {
    return this.#d.finish_reason ?? undefined;
  }
  /** The agent this run handed the conversation to, if it did (the next turns are its); `null` otherwise. */
  get handoff() {
    const messages = this.#d.messages ?? [];
    for (let i = messages.length - 1; i >= 0; i--) {
      const to = /** @type {{ handoff?: { to?: unknown } } | undefined} */ (messages[i].metadata)?.handoff?.to;
      if (typeof to === "string") return to;
    }
    return null;
  }
  /** The calls waiting for a decision (status `requires_approval`). */
  get pending() {
    return this.#d.pending ?? [];
  }
  /**
   * Why the run failed: `{code, message, cause}`.
   * @returns {import("./format").RunError | undefined}
   */
  get error() {
    return this.#d.error ?? undefined;
  }
  /**
   * The canonical object (what `JSON.stringify(response)` writes).
   * @returns {ResponseDocument}
   */
  toJSON() {
    return JSON.parse(this.#text);
  }
  /** The canonical JSON text, byte-identical to the Rust core's. */
  toString() {
    return this.#text;
  }
  [Symbol.for("nodejs.util.inspect.custom")]() {
    const t = this.text;
    return `Response { id: ${JSON.stringify(this.id ?? "")}, status: ${JSON.stringify(this.status)}, text: ${JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}…` : t)} }`;
  }
}

/**
 * What `usage` on `model` (`"provider:model"`) cost, in US dollars;
 * undefined when the price table does not know the model (never a guess).
 * `options.prices`: a JSON price table file consulted before the built-in
 * one (pydantic's genai-prices, shipped with Parlance).
 * @param {string} model
 * @param {import("./index").Usage | import("./format").Usage} usage
 * @param {{ prices?: string }} [options]
 * @returns {number | undefined}
 */
function cost(model, usage, options = {}) {
  /** @type {Record<string, unknown>} */
  const u = /** @type {any} */ (usage);
  /** @type {Record<string, unknown>} */
  const canonical =
    "inputTokens" in u
      ? {
          input_tokens: u.inputTokens,
          output_tokens: u.outputTokens,
          cached_tokens: u.cachedTokens ?? 0,
          ...(u.cacheWriteTokens != null ? { cache_write_tokens: u.cacheWriteTokens } : {}),
          ...(u.reasoningTokens != null ? { reasoning_tokens: u.reasoningTokens } : {}),
        }
      : u;
  const c = guard(() => /** @type {number | null} */ (native.cost(model, JSON.stringify(canonical), options.prices ?? null)));
  return c ?? undefined;
}

module.exports = { Response, cost };
