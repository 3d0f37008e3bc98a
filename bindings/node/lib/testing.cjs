"use strict";
// parlance-ai/testing: models for your own tests, no network and no key.
// TestModel calls every tool it is offered with arguments made from the
// tool's schema, then answers; FunctionModel answers with your function;
// ScriptedModel plays back a list of messages; Recorder writes a real
// model's exchanges to a cassette file and Replay serves them back
// offline, checking each request against the recorded one. The models are
// the Rust core's (parlance::testing), so a cassette recorded in one
// language replays in the others. See docs/guide/testing.md.

const native = require("./native.cjs");
const { Model, toNative } = require("./model.cjs");
const { ConfigError, guard } = require("./errors.cjs");
const { describe } = require("./schema.cjs");

/** @typedef {import("./index").Message} Message */
/** @typedef {import("./index").ModelAnswer} ModelAnswer */
/** @typedef {import("./index").ModelRequestInfo} ModelRequestInfo */
/** @typedef {import("./testing").RequestDocument} RequestDocument */
/** @typedef {import("./testing").ModelFunction} ModelFunction */

/**
 * `o` checked to be an options object with only the `allowed` keys (`{}` when undefined).
 * @template {object} T
 * @param {string} what
 * @param {T | undefined} o
 * @param {readonly (keyof T & string)[]} allowed
 * @returns {Partial<T>}
 */
function options(what, o, allowed) {
  if (o === undefined) return {};
  if (o === null || typeof o !== "object" || Array.isArray(o)) {
    throw new ConfigError(`${what}: expected an options object, got ${describe(o)}`);
  }
  /** @type {readonly string[]} */
  const known = allowed;
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) {
      throw new ConfigError(`${what}: unknown option ${JSON.stringify(k)} (expected one of: ${allowed.join(", ")})`);
    }
  }
  return o;
}

/**
 * The `message` of what was thrown, if it has one.
 * @param {unknown} e
 * @returns {unknown}
 */
function messageOf(e) {
  return /** @type {{ message?: unknown } | null | undefined} */ (e)?.message;
}

/**
 * Calls the tools it is offered (all, or those named in `callTools`) with
 * arguments made from their JSON Schemas, then answers with `text`, a
 * value of the output schema (`output`, or one made from the schema), or
 * the tools' results as JSON (`success (no tool calls)` when none ran).
 * As Pydantic AI's TestModel; `seed` varies the made-up values.
 */
class TestModel extends Model {
  #probe;
  /** @type {"all" | string[]} */
  #callTools;
  /** @param {import("./testing").TestModelOptions} [opts] */
  constructor(opts) {
    const o = options("TestModel", opts, ["callTools", "text", "output", "seed"]);
    let text;
    try {
      text = JSON.stringify(o);
    } catch (e) {
      throw new ConfigError(`TestModel: the options cannot be written as JSON: ${messageOf(e) ?? e}`);
    }
    const probe = guard(() => native.NativeTestModel.test(text));
    super(probe.model());
    this.#probe = probe;
    this.#callTools = Array.isArray(o.callTools) ? [...o.callTools] : "all";
  }
  /**
   * Which tools it calls: "all" or their names.
   * @returns {"all" | string[]}
   */
  get callTools() {
    return this.#callTools;
  }
  /**
   * Every request received, as request documents (`{messages, tools?, options?}`).
   * @returns {RequestDocument[]}
   */
  get received() {
    return JSON.parse(this.#probe.received());
  }
  /**
   * The last request received (undefined before the first).
   * @returns {RequestDocument | undefined}
   */
  get lastRequest() {
    return this.received.at(-1);
  }
}

/** Answers with these messages (canonical messages, `role` optional, or strings: one text block each), in order. */
class ScriptedModel extends Model {
  #probe;
  /** @param {readonly ModelAnswer[]} messages */
  constructor(messages) {
    if (!Array.isArray(messages)) {
      throw new ConfigError(`ScriptedModel: expected an array of messages (or strings), got ${describe(messages)}`);
    }
    let text;
    try {
      text = JSON.stringify(messages);
    } catch (e) {
      throw new ConfigError(`ScriptedModel: the messages cannot be written as JSON: ${messageOf(e) ?? e}`);
    }
    const probe = guard(() => native.NativeTestModel.scripted(text));
    super(probe.model());
    this.#probe = probe;
  }
  /**
   * Every request received, as request documents.
   * @returns {RequestDocument[]}
   */
  get received() {
    return JSON.parse(this.#probe.received());
  }
  /**
   * How many answers are left.
   * @returns {number}
   */
  get remaining() {
    return this.#probe.remaining();
  }
}

/**
 * Answers with `fn(messages, { tools, settings, signal })`: a message
 * (canonical, `role` optional), a string (one text block), or a promise of
 * either. What it throws fails the run with a model error naming it.
 * `modelId` defaults to the function's name.
 */
class FunctionModel extends Model {
  /** @type {ModelFunction} */
  #fn;
  /**
   * @param {ModelFunction} fn
   * @param {{ provider?: string, modelId?: string }} [opts]
   */
  constructor(fn, opts) {
    if (typeof fn !== "function") {
      throw new ConfigError(
        `FunctionModel: expected a function (messages, { tools, settings, signal }) => message, got ${describe(fn)}`,
      );
    }
    const o = options("FunctionModel", opts, ["provider", "modelId"]);
    super({ provider: o.provider ?? "function", modelId: o.modelId ?? (fn.name || "function") });
    this.#fn = fn;
  }
  /**
   * Calls the function.
   * @param {Message[]} messages
   * @param {ModelRequestInfo} info
   * @returns {ModelAnswer | PromiseLike<ModelAnswer>}
   */
  request(messages, info) {
    return this.#fn(messages, info);
  }
}

/**
 * Wraps `model` (a model string, a Model, or an object with `request`) and
 * writes each exchange to the cassette at `path` (JSON Lines, the
 * canonical format), emptied first unless `{ append: true }`.
 */
class Recorder extends Model {
  /** @type {string} */
  #path;
  /**
   * @param {string | import("./index").Model | import("./index").ModelLike} model
   * @param {string} path
   * @param {{ append?: boolean }} [opts]
   */
  constructor(model, path, opts) {
    const o = options("Recorder", opts, ["append"]);
    const inner = toNative(model);
    if (inner === undefined) {
      throw new ConfigError(
        `Recorder: model: expected a model string, a Model or an object with a request method, got ${describe(model)}`,
      );
    }
    if (typeof path !== "string") throw new ConfigError(`Recorder: path: expected a string, got ${describe(path)}`);
    const probe = guard(() => native.NativeTestModel.recorder(inner, path, o.append === true));
    super(probe.model());
    this.#path = path;
  }
  /**
   * The cassette file.
   * @returns {string}
   */
  get path() {
    return this.#path;
  }
}

/**
 * Serves the cassette at `path` in order, offline. A request that is not
 * the recorded one fails the run with a model error naming the exchange
 * and the first difference.
 */
class Replay extends Model {
  #probe;
  /** @type {string} */
  #path;
  /** @param {string} path */
  constructor(path) {
    if (typeof path !== "string") throw new ConfigError(`Replay: path: expected a string, got ${describe(path)}`);
    const probe = guard(() => native.NativeTestModel.replay(path));
    super(probe.model());
    this.#probe = probe;
    this.#path = path;
  }
  /**
   * How many exchanges are left to serve.
   * @returns {number}
   */
  get remaining() {
    return this.#probe.remaining();
  }
  /**
   * The cassette file.
   * @returns {string}
   */
  get path() {
    return this.#path;
  }
}

module.exports = { TestModel, ScriptedModel, FunctionModel, Recorder, Replay };
