"use strict";
// Models written in JavaScript, for the Rust engine (see
// bindings/node/src/model_host.rs). A model is an object with
// `request(messages, { tools, settings, signal })` returning the
// assistant's message (a canonical message object, `role` optional, or a
// string: one text block), or a promise of it. The engine calls it on
// Node's main thread; what it throws fails the run with a model error
// naming it. These host functions must never throw (a throw in a
// thread-safe call would end the process), so everything is caught.

const native = require("./native.cjs");

/** @typedef {import("./index").ModelLike} ModelLike */

/**
 * Calls in flight, by token: their AbortController.
 * @type {Map<number, AbortController>}
 */
const calls = new Map();

/**
 * @param {number} token
 * @param {string} text the message's JSON, or the error's message
 * @param {string | undefined} errorName
 */
function report(token, text, errorName) {
  calls.delete(token);
  try {
    native.completeModel(token, text, errorName);
  } catch {
    // Nothing is left to report to (the call was dropped meanwhile).
  }
}

/**
 * @param {number} token
 * @param {unknown} e what the model threw, or its promise was rejected with
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
 * @param {unknown} v what the model answered
 */
function returned(token, v) {
  let text;
  try {
    text = JSON.stringify(v === undefined ? null : v);
  } catch (e) {
    const message = /** @type {{ message?: unknown } | null | undefined} */ (e)?.message;
    thrown(token, new TypeError(`its message cannot be written as JSON: ${message ?? e}`));
    return;
  }
  report(token, text, undefined);
}

/**
 * The function the engine calls (on the main thread) for each request to `model`.
 * @param {ModelLike} model
 * @returns {(args: [number, string]) => void}
 */
function caller(model) {
  // The native module hands the arguments over as one array.
  return function call([token, requestJson]) {
    try {
      const { messages, tools, settings } = JSON.parse(requestJson);
      const controller = new AbortController();
      calls.set(token, controller);
      // What it answers is checked by the engine (from its JSON), whatever its type says.
      /** @type {unknown} */
      const v = model.request(messages, { tools, settings, signal: controller.signal });
      if (v !== null && typeof v === "object" && typeof (/** @type {{ then?: unknown }} */ (v)).then === "function") {
        /** @type {PromiseLike<unknown>} */ (v).then(
          (value) => returned(token, value),
          (e) => thrown(token, e),
        );
      } else {
        returned(token, v);
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
    controller.abort(new DOMException("the model call was cancelled: its run stopped", "AbortError"));
  } catch {
    // An abort listener threw: nothing to do about it here.
  }
}

/**
 * A new native model that calls `model.request` (one per agent or
 * recorder that uses it: the native side holds the object, the object
 * never holds the native side, so nothing keeps either alive in a cycle).
 * `label` (`Echo.request`) names it in errors.
 * @param {ModelLike} model
 * @param {string} provider
 * @param {string} modelId
 * @param {string} label
 * @returns {object} the native model
 */
function hostNative(model, provider, modelId, label) {
  return native.hostModel(caller(model), abort, provider, modelId, label);
}

module.exports = { hostNative };
