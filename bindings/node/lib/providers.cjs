"use strict";
// Providers as objects, for a base URL, key, headers or timeouts of your
// own: `new OpenAI({ baseURL, apiKey }).model("gpt-4o-mini")`, or
// `new Agent({ model: "gpt-4o-mini", provider: new OpenAI({...}) })`. A
// model string ("openai:gpt-4o-mini") reads the provider's key variable
// instead. (The Python package's OpenAI, Anthropic... the same way.)

const { Model } = require("./model.cjs");

class Provider {
  /** The provider's name in model strings. */
  static id = "";
  /** @type {import("./index").ModelSettings} */
  #settings;

  /**
   * Settings: baseURL, apiKey, apiKeyEnv, headers, userAgent, timeouts (ms),
   * retry {maxRetries, initialBackoff, maxBackoff, maxRetryAfter} (ms) or
   * maxRetries, apiVersion and azureAdToken (Azure), region and
   * awsCredentials (Bedrock).
   * @param {import("./index").ModelSettings} [settings]
   */
  constructor(settings = {}) {
    this.#settings = { ...settings };
  }

  /**
   * The provider's name.
   * @returns {string}
   */
  get name() {
    return /** @type {typeof Provider} */ (this.constructor).id;
  }

  /**
   * The model `name` of this provider ("gpt-4o-mini"; a `provider:` prefix is allowed).
   * @param {string} name
   * @returns {Model}
   */
  model(name) {
    const prefix = `${this.name}:`;
    const id = typeof name === "string" && name.startsWith(prefix) ? name.slice(prefix.length) : name;
    return new Model(typeof id === "string" ? `${this.name}:${id}` : id, this.#settings);
  }
}

/** OpenAI's Chat Completions API (and any server that speaks it). */
class OpenAI extends Provider {
  static id = "openai";
}
/** OpenAI's Responses API. */
class OpenAIResponses extends Provider {
  static id = "openai-responses";
}
/** Anthropic's Messages API. */
class Anthropic extends Provider {
  static id = "anthropic";
}
/** Google's Gemini API. */
class Gemini extends Provider {
  static id = "gemini";
}
/** Azure OpenAI (settings: `baseURL` of the resource, `apiVersion`, `apiKey` or `azureAdToken`). */
class Azure extends Provider {
  static id = "azure";
}
/** Amazon Bedrock's Converse API (settings: `region`, `awsCredentials` {accessKeyId, secretAccessKey, sessionToken?}). */
class Bedrock extends Provider {
  static id = "bedrock";
}
/** Mistral's API. */
class Mistral extends Provider {
  static id = "mistral";
}
/** Ollama's own API (a local server). */
class Ollama extends Provider {
  static id = "ollama";
}

module.exports = { Provider, OpenAI, OpenAIResponses, Anthropic, Gemini, Azure, Bedrock, Mistral, Ollama };
