"use strict";
// JavaScript functions the Rust engine calls and awaits (see
// bindings/node/src/js_call.rs): a model's `request`, the application's
// checkpoint. The engine calls on Node's main thread; the function's
// value (or promise) is reported back as JSON, what it throws by name
// and message. These host functions must never throw (a throw in a
// thread-safe call would end the process), so everything is caught.

const native = require("./native.cjs");

/**
 * Calls in flight, by token: their AbortController.
 * @type {Map<number, AbortController>}
 */
const calls = new Map();

/**
 * @param {number} token
 * @param {string} text the value's JSON, or the error's message
 * @param {string | undefined} errorName
 */
function report(token, text, errorName) {
  calls.delete(token);
  try {
    native.completeCall(token, text, errorName);
  } catch {
    // Nothing is left to report to (the call was dropped meanwhile).
  }
}

/**
 * @param {number} token
 * @param {unknown} e what the function threw, or its promise was rejected with
 */
function thrown(token, e) {
  // Anything may be thrown: its fields are read as unknowns.
  const o = /** @type {{ name?: unknown, message?: unknown, constructor?: { name?: unknown } } | null | undefined} */ (e);
  const isError = e instanceof Error || (o !== null && typeof o === "object" && typeof o.message === "string");
  let name = "Error";
  let message;
  try {
    if (isError && o) {
      name = String(o.name ?? o.constructor?.name ?? "Error");
      message = String(o.message);
    } else {
      message = String(e);
    }
  } catch {
    message = "(a value that cannot be shown)";
  }
  report(token, message, name);
}

/**
 * @param {number} token
 * @param {unknown} v what the function returned
 * @param {string} what names the value in an error ("message")
 */
function returned(token, v, what) {
  let text;
  try {
    text = JSON.stringify(v === undefined ? null : v);
  } catch (e) {
    const message = /** @type {{ message?: unknown } | null | undefined} */ (e)?.message;
    thrown(token, new TypeError(`its ${what} cannot be written as JSON: ${message ?? e}`));
    return;
  }
  report(token, text, undefined);
}

/**
 * The function the engine calls (on the main thread) for each call of `fn`,
 * which gets the parsed argument and the call's signal; `what` names its
 * value in errors.
 * @param {(argument: any, signal: AbortSignal) => unknown} fn
 * @param {string} [what]
 * @returns {(args: [number, string]) => void}
 */
function caller(fn, what = "value") {
  // The native module hands the arguments over as one array.
  return function call([token, json]) {
    try {
      const argument = JSON.parse(json);
      const controller = new AbortController();
      calls.set(token, controller);
      // What it returns is checked by the engine (from its JSON), whatever its type says.
      /** @type {unknown} */
      const v = fn(argument, controller.signal);
      if (v !== null && typeof v === "object" && typeof (/** @type {{ then?: unknown }} */ (v)).then === "function") {
        /** @type {PromiseLike<unknown>} */ (v).then(
          (value) => returned(token, value, what),
          (e) => thrown(token, e),
        );
      } else {
        returned(token, v, what);
      }
    } catch (e) {
      thrown(token, e);
    }
  };
}

/**
 * Aborts a call the engine gave up on (its run stopped or was aborted).
 * @param {number} token
 */
function abort(token) {
  const controller = calls.get(token);
  if (controller === undefined) return;
  calls.delete(token);
  try {
    controller.abort(new DOMException("the call was cancelled: its run stopped", "AbortError"));
  } catch {
    // An abort listener threw: nothing to do about it here.
  }
}

module.exports = { caller, abort };
