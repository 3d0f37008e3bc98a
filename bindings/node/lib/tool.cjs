"use strict";
// `tool({...})`: a name, a description the model reads, parameters (a
// JSON Schema or a zod 4 schema) and `execute`, sync or async. The schema
// is compiled by the Rust engine right here, so a bad one is an error where
// the tool is defined.

const native = require("./native.cjs");
const { ConfigError, guard } = require("./errors.cjs");
const { toJsonSchema, argumentCheck, describe } = require("./schema.cjs");

const TOOL = Symbol.for("parlance.Tool");

/** @typedef {import("./index").Tool & { _check: ((args: unknown) => unknown) | undefined, _def(): object }} ToolObject */

/**
 * Whether `v` was made by `tool()`.
 * @param {unknown} v
 * @returns {v is ToolObject}
 */
function isTool(v) {
  return v != null && /** @type {{ [TOOL]?: unknown }} */ (v)[TOOL] === true;
}

/**
 * Defines a tool (types: `tool` in index.d.ts).
 * @param {any} def
 * @returns {ToolObject}
 */
function tool(def) {
  if (def === null || typeof def !== "object") {
    throw new ConfigError(`tool: expected {name, description, parameters, execute}, got ${describe(def)}`);
  }
  const { name, description = "", parameters, execute, needsApproval, timeout, maxInvalidArguments } = def;
  if (typeof name !== "string" || name === "") {
    throw new ConfigError(`tool: name: expected a non-empty string, got ${describe(name)}`);
  }
  if (typeof description !== "string") {
    throw new ConfigError(`tool ${name}: description: expected a string, got ${describe(description)}`);
  }
  if (typeof execute !== "function") {
    throw new ConfigError(`tool ${name}: execute: expected a function, got ${describe(execute)}`);
  }
  if (!(needsApproval === undefined || typeof needsApproval === "boolean" || typeof needsApproval === "function")) {
    throw new ConfigError(
      `tool ${name}: needsApproval: expected a boolean or a function of the arguments, got ${describe(needsApproval)}`,
    );
  }
  if (timeout !== undefined && !(typeof timeout === "number" && timeout > 0 && Number.isFinite(timeout))) {
    throw new ConfigError(`tool ${name}: timeout: expected a positive number of milliseconds, got ${describe(timeout)}`);
  }
  if (maxInvalidArguments !== undefined && !(Number.isInteger(maxInvalidArguments) && maxInvalidArguments >= 0)) {
    throw new ConfigError(
      `tool ${name}: maxInvalidArguments: expected a whole number of at least 0, got ${describe(maxInvalidArguments)}`,
    );
  }
  const schema = JSON.stringify(toJsonSchema(parameters ?? { type: "object", properties: {} }, `tool ${name}: parameters`));
  guard(() => native.checkToolSchema(name, schema));
  return Object.freeze({
    [TOOL]: true,
    name,
    description,
    /** The input JSON Schema the engine validates with (a copy). */
    get parameters() {
      return JSON.parse(schema);
    },
    execute,
    /** Run after the engine's validation: the schema's own parse (see schema.cjs). */
    _check: argumentCheck(parameters),
    needsApproval: needsApproval ?? false,
    timeout,
    maxInvalidArguments,
    /** What the native module needs (the function stays in JavaScript). */
    _def() {
      return {
        name,
        description,
        schema,
        timeoutMs: timeout,
        needsApproval: typeof needsApproval === "function" ? "predicate" : needsApproval ? "always" : undefined,
        maxInvalidArguments,
      };
    },
  });
}

module.exports = { tool, isTool };
