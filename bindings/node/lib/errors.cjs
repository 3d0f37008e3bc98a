"use strict";
// The errors parlance throws, and ToolError, which tools throw. The native
// module's errors carry a marker and a JSON document (see
// bindings/node/src/errors.rs); `rethrow` turns them into these classes,
// whose `message` is exactly the Rust error's text.

const TOOL_ERROR = Symbol.for("parlance.ToolError");

/** The base of every error parlance throws. */
class ParlanceError extends Error {
  /**
   * @param {string} message
   * @param {ErrorOptions} [options]
   */
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Throw it in a tool to tell the model something went wrong on purpose: the
 * message goes back to the model (result status `error`) whatever the
 * agent's `onToolException` says. Any other throw is an unexpected failure
 * (`tool_failed`).
 */
class ToolError extends Error {
  /**
   * @param {string} message
   * @param {ErrorOptions} [options]
   */
  constructor(message, options) {
    super(message, options);
    this.name = "ToolError";
  }
  get [TOOL_ERROR]() {
    return true;
  }
}

/**
 * Whether `e` is a ToolError (of this copy of the package or another).
 * @param {unknown} e
 * @returns {e is ToolError}
 */
function isToolError(e) {
  return e instanceof ToolError || (e != null && /** @type {{ [TOOL_ERROR]?: unknown }} */ (e)[TOOL_ERROR] === true);
}

/**
 * A run failed. `code` (`tool_failed`, `model_error`, `max_model_calls`,
 * `invalid_arguments_budget`, `invalid_output`...), `detail` (the
 * structured cause, if any), `response` (the failed run: its messages keep
 * the history consistent). Under `onToolException: "fail"` the tool's own
 * error is the `cause`.
 */
class RunError extends ParlanceError {
  /**
   * @param {string} message
   * @param {{ code?: string, detail?: import("./index").JsonValue, response?: import("./response.cjs").Response | null, cause?: unknown }} [options]
   */
  constructor(message, { code = "failed", detail = null, response = null, cause } = {}) {
    super(`run failed (${code}): ${message}`, cause === undefined ? undefined : { cause });
    this.code = code;
    this.detail = detail;
    this.response = response;
  }
}

/** A document is not canonical: `path` names where, `detail` what is wrong. */
class FormatError extends ParlanceError {
  /**
   * @param {string} message
   * @param {{ path?: string, detail?: string }} [options]
   */
  constructor(message, { path = "", detail = message } = {}) {
    super(message);
    this.path = path;
    this.detail = detail;
  }
}

/** A decision was refused (nothing ran): `path` names the decision. */
class DecisionError extends ParlanceError {
  /**
   * @param {string} message
   * @param {{ path?: string, detail?: string }} [options]
   */
  constructor(message, { path = "", detail = message } = {}) {
    super(message);
    this.path = path;
    this.detail = detail;
  }
}

/**
 * An agent, tool, model or store cannot be built as given (a missing API
 * key, an unknown provider, a schema that does not compile...).
 */
class ConfigError extends ParlanceError {}

/**
 * The thread store refused or failed: `kind` is `busy`, `not_found`,
 * `conflict`, `lease_lost`, `corrupt`, `unstorable` or `database`.
 */
class StoreError extends ParlanceError {
  /**
   * @param {string} message
   * @param {{ kind?: string }} [options]
   */
  constructor(message, { kind = "database" } = {}) {
    super(message);
    this.kind = kind;
  }
}

const MARKER = "\u0000parlance:";

/**
 * The error a native error stands for.
 * @param {any} e
 * @returns {unknown}
 */
function translate(e) {
  const m = e?.message;
  if (typeof m !== "string" || !m.startsWith(MARKER)) return e;
  let doc;
  try {
    doc = JSON.parse(m.slice(MARKER.length));
  } catch {
    return e;
  }
  switch (doc.kind) {
    case "FormatError":
      return new FormatError(doc.text, { path: doc.path ?? "", detail: doc.detail ?? doc.text });
    case "DecisionError":
      return new DecisionError(doc.text, { path: doc.path ?? "", detail: doc.detail ?? doc.text });
    case "ConfigError":
      return new ConfigError(doc.text);
    case "StoreError":
      return new StoreError(doc.text, { kind: doc.storeKind });
    default:
      return new ParlanceError(doc.text);
  }
}

/**
 * Rethrows a native error as its class (for `.catch` and `catch` blocks).
 * @param {unknown} e
 * @returns {never}
 */
function rethrow(e) {
  throw translate(e);
}

/**
 * Calls `f`; a native error comes out as its class.
 * @template T
 * @param {() => T} f
 * @returns {T}
 */
function guard(f) {
  try {
    return f();
  } catch (e) {
    throw translate(e);
  }
}

module.exports = {
  ParlanceError,
  ToolError,
  RunError,
  FormatError,
  DecisionError,
  ConfigError,
  StoreError,
  isToolError,
  rethrow,
  guard,
};
