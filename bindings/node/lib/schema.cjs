"use strict";
// A tool's parameters as the JSON Schema the Rust engine validates with:
// a JSON Schema object as it is, or a Standard Schema (zod 4, ArkType,
// Valibot...) converted through its Standard JSON Schema interface
// (`~standard.jsonSchema`). The engine validates against that JSON Schema
// first, so the model reads the Rust messages whatever library wrote the
// schema; then the library's own check runs (`argumentCheck`) for what JSON
// Schema cannot say, and its issues read the same way.

const { ConfigError } = require("./errors.cjs");

/**
 * @param {unknown} v
 * @returns {v is { [key: string]: unknown }}
 */
function isPlainObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Zod 4 releases before Standard JSON Schema: its own converter.
 * @param {any} schema
 * @returns {unknown}
 */
function zodFallback(schema) {
  try {
    // Resolved from the user's installation (zod is an optional peer).
    const core = require("zod/v4/core");
    return core.toJSONSchema(schema, { target: "draft-2020-12", io: "input" });
  } catch {
    return undefined;
  }
}

/**
 * The JSON Schema of `parameters` (`what` names it in errors), without the
 * `$schema` key no provider wants in a tool's parameters.
 * @param {any} parameters a JSON Schema object or a Standard Schema, as the user gave it
 * @param {string} what
 * @returns {{ [key: string]: unknown }}
 */
function toJsonSchema(parameters, what) {
  /** @type {unknown} */
  let schema;
  const std = parameters?.["~standard"];
  if (std !== undefined) {
    if (typeof std.jsonSchema?.input === "function") {
      try {
        schema = std.jsonSchema.input({ target: "draft-2020-12" });
      } catch (e) {
        throw new ConfigError(`${what}: the ${std.vendor} schema cannot be written as JSON Schema: ${/** @type {Error} */ (e)?.message ?? e}`);
      }
    } else if (std.vendor === "zod") {
      schema = zodFallback(parameters);
    }
    if (schema === undefined) {
      throw new ConfigError(
        `${what}: this ${std.vendor ?? "Standard"} schema has no JSON Schema form (~standard.jsonSchema); ` +
          "use zod 4.2 or later, or pass a JSON Schema object",
      );
    }
  } else if (isPlainObject(parameters)) {
    schema = parameters;
  } else {
    throw new ConfigError(
      `${what}: expected a JSON Schema object or a Standard Schema (zod 4), got ${describe(parameters)}`,
    );
  }
  if (!isPlainObject(schema)) {
    throw new ConfigError(`${what}: expected a JSON Schema object, got ${describe(schema)}`);
  }
  if ("$schema" in schema) {
    const { $schema: _, ...rest } = schema;
    return rest;
  }
  return schema;
}

/**
 * What runs on the arguments after the engine's validation, for a Standard
 * Schema: its own `validate` (zod's refinements, defaults, transforms and
 * coercion; what `schema.parse(args)` does), giving `{ value }` or
 * `{ issues }`, possibly as a promise. Undefined for a JSON Schema object:
 * the engine's validation is all there is.
 * @param {any} parameters
 * @returns {((args: unknown) => unknown) | undefined}
 */
function argumentCheck(parameters) {
  const std = parameters?.["~standard"];
  if (typeof std?.validate !== "function") return undefined;
  return (/** @type {unknown} */ args) => std.validate(args);
}

/**
 * Standard Schema issues as the engine's problems: `{ path, message }`,
 * the path made of keys (strings) and array indexes (numbers).
 * @param {Iterable<any>} issues
 * @returns {{ path: (string | number)[], message: string }[]}
 */
function problems(issues) {
  return Array.from(issues, (issue) => ({
    path: Array.from(/** @type {Iterable<any>} */ (issue?.path ?? []), (step) => {
      const key = step !== null && typeof step === "object" ? step.key : step;
      return typeof key === "number" ? key : String(key);
    }),
    message: String(issue?.message ?? "is not valid"),
  }));
}

/**
 * What `v` is, for an error message.
 * @param {unknown} v
 * @returns {string}
 */
function describe(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "string" ? `string ${JSON.stringify(v)}` : typeof v;
}

module.exports = { toJsonSchema, argumentCheck, problems, describe };
