"use strict";
// Guardrails: functions the engine runs at three points of a run (the
// input, each tool call, the final answer), each deciding what happens
// next (see docs/agent.md, "Guardrails"). The engine hands each check over
// as JSON and reads the verdict back (bindings/core/src/guardrail.rs), so
// a guardrail here decides exactly what one in Python or Rust does.

const { ConfigError } = require("./errors.cjs");

const POINTS = new Set(["input", "toolCall", "output"]);

/**
 * What a guardrail decides (plain objects: a guardrail may also write them).
 */
const Verdict = Object.freeze({
  /** Goes on unchanged (so does returning nothing). */
  allow: () => ({ action: "allow" }),
  /**
   * Ends the run: `message` for the user, `reason` for operators.
   * @param {string} message
   * @param {{ reason?: string }} [options]
   */
  block: (message, options = {}) => ({ action: "block", message, ...(options.reason === undefined ? {} : { reason: options.reason }) }),
  /**
   * Goes on with `value` in place of what was checked.
   * @param {unknown} value
   * @param {{ reason?: string }} [options]
   */
  replace: (value, options = {}) => ({ action: "replace", value, ...(options.reason === undefined ? {} : { reason: options.reason }) }),
  /**
   * Tells the model `message` and lets it try again.
   * @param {string} message
   */
  retry: (message) => ({ action: "retry", message }),
  /**
   * The call waits for a human's decision (tool calls only).
   * @param {{ reason?: string }} [options]
   */
  requireApproval: (options = {}) => ({ action: "requireApproval", ...(options.reason === undefined ? {} : { reason: options.reason }) }),
});

class Guardrail {
  /**
   * @param {"input" | "toolCall" | "output"} point
   * @param {(check: import("./index").GuardCheck) => unknown} check
   * @param {{ name?: string }} [options]
   */
  constructor(point, check, options = {}) {
    if (!POINTS.has(point)) {
      throw new ConfigError(`guardrail point: expected one of input, toolCall, output, got ${JSON.stringify(point)}`);
    }
    if (typeof check !== "function") {
      throw new ConfigError(`Guardrail: expected a function, got ${typeof check}`);
    }
    /** @readonly */
    this.point = point;
    /** @readonly */
    this.name = options.name ?? (check.name || "guardrail");
    /** @readonly */
    this.check = check;
  }

  /**
   * A guardrail on a new run's input.
   * @param {(check: import("./index").GuardCheck) => unknown} check
   * @param {{ name?: string }} [options]
   */
  static input(check, options) {
    return new Guardrail("input", check, options);
  }

  /**
   * A guardrail on each tool call with valid arguments.
   * @param {(check: import("./index").GuardCheck) => unknown} check
   * @param {{ name?: string }} [options]
   */
  static toolCall(check, options) {
    return new Guardrail("toolCall", check, options);
  }

  /**
   * A guardrail on the final answer.
   * @param {(check: import("./index").GuardCheck) => unknown} check
   * @param {{ name?: string }} [options]
   */
  static output(check, options) {
    return new Guardrail("output", check, options);
  }
}

/**
 * The one function the engine calls for every guardrail of an agent:
 * `{index, check}` in, the verdict (or null) out.
 * @param {readonly Guardrail[]} guardrails
 * @returns {(argument: { index: number, check: import("./index").GuardCheck }) => unknown}
 */
function judge(guardrails) {
  return ({ index, check }) => {
    const g = /** @type {Guardrail} */ (guardrails[index]);
    /** @type {unknown} */
    const v = g.check(check);
    const read = (/** @type {unknown} */ verdict) => {
      if (verdict === undefined || verdict === null) return null;
      if (typeof verdict !== "object") {
        throw new TypeError(`guardrail ${g.name} returned ${typeof verdict}: return a Verdict (or nothing to allow)`);
      }
      return verdict;
    };
    if (v !== null && typeof v === "object" && typeof (/** @type {{ then?: unknown }} */ (v)).then === "function") {
      return /** @type {PromiseLike<unknown>} */ (v).then(read);
    }
    return read(v);
  };
}

module.exports = { Guardrail, Verdict, judge };
