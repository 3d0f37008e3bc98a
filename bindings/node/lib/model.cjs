"use strict";
// Models: from a string ("openai:gpt-4o-mini"), with settings of your own
// (base URL, key, headers, user agent, timeouts), or written in
// JavaScript: a subclass of Model (or any object) with a `request` method,
// which the engine calls for every model call (see model_host.cjs).

const native = require("./native.cjs");
const { ConfigError, guard } = require("./errors.cjs");
const { describe } = require("./schema.cjs");
const { hostNative } = require("./model_host.cjs");

/** What a model written in JavaScript reports as its provider unless it says its own. */
const JAVASCRIPT = "javascript";

/**
 * An object that may be a model written in JavaScript: its `request`,
 * `provider` and `modelId` are checked here, not trusted.
 * @typedef {{ readonly request?: unknown, readonly provider?: unknown, readonly modelId?: unknown }} MaybeModel
 */

/**
 * The name of `obj`'s class ("model" for a plain object).
 * @param {object} obj
 * @returns {string}
 */
function className(obj) {
  const c = obj?.constructor;
  return typeof c === "function" && c !== Object && c.name ? c.name : "model";
}

/**
 * `obj[key]`, a string or nothing (anything else is a ConfigError naming it).
 * @param {MaybeModel} obj
 * @param {"provider" | "modelId"} key
 * @param {string} label
 * @returns {string | undefined}
 */
function textOf(obj, key, label) {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new ConfigError(`model: ${label}.${key} must be a string, got ${describe(v)}`);
  return v === "" ? undefined : v;
}

/**
 * The native model that calls `obj.request` (a Model subclass or any object with one).
 * @param {MaybeModel} obj
 * @param {string} [fallbackProvider]
 * @param {string} [fallbackModelId]
 * @returns {object}
 */
function hosted(obj, fallbackProvider, fallbackModelId) {
  const name = className(obj);
  if (typeof obj.request !== "function") {
    throw new ConfigError(
      `model: ${name} has no request method: define request(messages, { tools, settings, signal }), returning a message or a promise of one`,
    );
  }
  const provider = textOf(obj, "provider", name) ?? fallbackProvider ?? JAVASCRIPT;
  const modelId = textOf(obj, "modelId", name) ?? fallbackModelId ?? name;
  // Its request is a function (checked above): what it answers is checked by the engine.
  const model = /** @type {import("./index").ModelLike} */ (obj);
  return guard(() => hostNative(model, provider, modelId, `${name}.request`));
}

class Model {
  /** @type {any} */
  #native;
  /** @type {string | undefined} */
  #provider;
  /** @type {string | undefined} */
  #modelId;

  /**
   * `spec`: "openai:gpt-4o-mini", "openai-responses:gpt-5",
   * "anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-flash". The key comes
   * from `settings.apiKey` or the provider's variable (OPENAI_API_KEY...):
   * a missing one is a ConfigError here, before any request.
   *
   * A subclass that defines `request(messages, { tools, settings, signal })`
   * is a model written in JavaScript: it calls `super()` (or
   * `super({ provider, modelId })`, what it reports: default "javascript"
   * and the class's name).
   * @param {string | { provider?: string, modelId?: string }} [spec]
   * @param {import("./index").ModelSettings} [settings]
   */
  constructor(spec, settings) {
    if (spec instanceof native.NativeModel) {
      // @internal: a test model of parlance-ai/testing.
      this.#native = spec;
      return;
    }
    if (spec === undefined || (spec !== null && typeof spec === "object" && !Array.isArray(spec))) {
      if (settings !== undefined) {
        throw new ConfigError("Model: a model written in JavaScript takes one argument, { provider, modelId }");
      }
      const name = className(this);
      for (const k of Object.keys(spec ?? {})) {
        if (k !== "provider" && k !== "modelId") {
          throw new ConfigError(`Model: unknown option ${JSON.stringify(k)} (a model written in JavaScript takes provider and modelId; a provider's model takes a string: "openai:gpt-4o-mini")`);
        }
      }
      this.#provider = spec === undefined ? undefined : textOf(spec, "provider", name);
      this.#modelId = spec === undefined ? undefined : textOf(spec, "modelId", name);
      return;
    }
    if (typeof spec !== "string") {
      throw new ConfigError(`Model: expected a model string ("openai:gpt-4o-mini"), got ${describe(spec)}`);
    }
    if (settings !== undefined && (settings === null || typeof settings !== "object")) {
      throw new ConfigError(`Model ${spec}: settings: expected an object, got ${describe(settings)}`);
    }
    // The settings are checked by the core (unknown ones named with the known ones).
    this.#native = guard(
      () => new native.NativeModel(spec, settings === undefined ? undefined : JSON.stringify(settings)),
    );
  }

  /**
   * The provider's name (`openai`, `anthropic`...; "javascript" for a model written in JavaScript).
   * @returns {string}
   */
  get provider() {
    return this.#native?.provider ?? this.#provider ?? JAVASCRIPT;
  }
  /**
   * The model's id (a model written in JavaScript: its class's name unless it says its own).
   * @returns {string}
   */
  get modelId() {
    return this.#native?.modelId ?? this.#modelId ?? className(this);
  }
  /**
   * @internal The engine's model. A class that defines `request` is
   * called through it (a new native model each time: see model_host.cjs).
   * @returns {any}
   */
  get _native() {
    // `request` is a subclass's (index.d.ts declares it; this class does not define it).
    if (typeof (/** @type {MaybeModel} */ (this)).request === "function" || this.#native === undefined) {
      return hosted(this, this.#provider, this.#modelId);
    }
    return this.#native;
  }
}

/**
 * The native model (or model string) of anything taken as a model: a
 * string, a Model, or an object with a `request` method. `undefined` for
 * anything else.
 * @param {unknown} model
 * @returns {string | object | undefined}
 */
function toNative(model) {
  if (typeof model === "string") return model;
  if (model instanceof Model) return model._native;
  if (model !== null && typeof model === "object" && typeof (/** @type {MaybeModel} */ (model)).request === "function") {
    return hosted(model);
  }
  return undefined;
}

module.exports = { Model, toNative };
