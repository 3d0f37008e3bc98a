"use strict";
// Models: from a string ("openai:gpt-4o-mini"), or with settings of your
// own (base URL, key, headers, user agent, timeouts).

const native = require("./native.cjs");
const { ConfigError, guard } = require("./errors.cjs");
const { describe } = require("./schema.cjs");

class Model {
  /** @type {any} */
  #native;

  /**
   * `spec`: "openai:gpt-4o-mini", "openai-responses:gpt-5",
   * "anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-flash". The key comes
   * from `settings.apiKey` or the provider's variable (OPENAI_API_KEY...):
   * a missing one is a ConfigError here, before any request.
   * @param {string} spec
   * @param {import("./index").ModelSettings} [settings]
   */
  constructor(spec, settings) {
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
   * The provider's name (`openai`, `anthropic`...).
   * @returns {string}
   */
  get provider() {
    return this.#native.provider;
  }
  /**
   * The model's id.
   * @returns {string}
   */
  get modelId() {
    return this.#native.modelId;
  }
  /** @internal */
  get _native() {
    return this.#native;
  }
}

module.exports = { Model };
