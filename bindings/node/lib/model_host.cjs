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

/** Calls in flight, by token: their AbortController. */
const calls = new Map();

function report(token, text, errorName) {
  calls.delete(token);
  try {
    native.completeModel(token, text, errorName);
  } catch {
    // Nothing is left to report to (the call was dropped meanwhile).
  }
}

function thrown(token, e) {
  const isError = e instanceof Error || (e !== null && typeof e === "object" && typeof e.message === "string");
  let name = "Error";
  let message;
  try {
    if (isError) {
      name = String(e.name ?? e.constructor?.name ?? "Error");
      message = String(e.message);
    } else {
      message = String(e);
    }
  } catch {
    message = "(a value that cannot be shown)";
  }
  report(token, message, name);
}

function returned(token, v) {
  let text;
  try {
    text = JSON.stringify(v === undefined ? null : v);
  } catch (e) {
    thrown(token, new TypeError(`its message cannot be written as JSON: ${e?.message ?? e}`));
    return;
  }
  report(token, text, undefined);
}

/** The function the engine calls (on the main thread) for each request to `model`. */
function caller(model) {
  // The native module hands the arguments over as one array.
  return function call([token, requestJson]) {
    try {
      const { messages, tools, settings } = JSON.parse(requestJson);
      const controller = new AbortController();
      calls.set(token, controller);
      const v = model.request(messages, { tools, settings, signal: controller.signal });
      if (v !== null && typeof v === "object" && typeof v.then === "function") {
        v.then(
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

/** Aborts a call the engine gave up on (its run stopped or was aborted). */
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
 */
function hostNative(model, provider, modelId, label) {
  return native.hostModel(caller(model), abort, provider, modelId, label);
}

module.exports = { hostNative };
