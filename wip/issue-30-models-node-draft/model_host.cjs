"use strict";
// Models written in JavaScript, for the Rust engine (see
// bindings/node/src/model_host.rs). A model is an object with
// `request(messages, { tools, settings, signal })` returning the
// assistant's message (a canonical message object, or a string: one text
// block), or a promise of it: a subclass of `Model`, or any object with
// such a method. The engine calls it on Node's main thread; what it
// throws fails the run with a model error naming it. These host functions
// must never throw (a throw in a thread-safe call would end the process),
// so everything is caught.

const native = require("./native.cjs");

/** Calls in flight, by token: their AbortController. */
const calls = new Map();
/** The native model of each JavaScript model (one thread-safe function each). */
const natives = new WeakMap();

function report(token, ok, text) {
  calls.delete(token);
  try {
    native.completeModel(token, ok, text);
  } catch {
    // Nothing is left to report to (the call was dropped meanwhile).
  }
}

function thrown(token, label, e) {
  const isError = e instanceof Error || (e !== null && typeof e === "object" && typeof e.message === "string");
  const name = isError ? String(e.name ?? e.constructor?.name ?? "Error") : "Error";
  const message = isError ? String(e.message) : String(e);
  report(token, false, JSON.stringify({ label, name, message }));
}

function caller(model, label) {
  // The native module hands the arguments over as one array.
  return function call([token, requestJson]) {
    try {
      const { messages, tools, settings } = JSON.parse(requestJson);
      const controller = new AbortController();
      calls.set(token, controller);
      const done = (v) => {
        let text;
        try {
          text = JSON.stringify(v === undefined ? null : v);
        } catch (e) {
          thrown(token, label, new TypeError(`its message cannot be written as JSON: ${e?.message ?? e}`));
          return;
        }
        report(token, true, text);
      };
      const fail = (e) => thrown(token, label, e);
      const v = model.request(messages, { tools, settings, signal: controller.signal });
      if (v !== null && typeof v === "object" && typeof v.then === "function") {
        v.then(done, fail);
      } else {
        done(v);
      }
    } catch (e) {
      thrown(token, label, e);
    }
  };
}

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

/** Whether `v` is a model written in JavaScript (it has a `request` method). */
function isModelLike(v) {
  return v !== null && typeof v === "object" && typeof v.request === "function";
}

/**
 * The native model that calls `model.request`; `options.provider` and
 * `options.modelId` are what it reports (default: "javascript" and the
 * class's name).
 */
function hostNative(model, options = {}) {
  let n = natives.get(model);
  if (n !== undefined) return n;
  const className = model.constructor && model.constructor !== Object ? model.constructor.name : "model";
  const label = `${className}.request`;
  const text = (v, fallback) => (typeof v === "string" && v !== "" ? v : fallback);
  n = native.hostModel(caller(model, label), abort, text(options.provider, "javascript"), text(options.modelId, className), label);
  natives.set(model, n);
  return n;
}

/** The native model of anything an Agent takes as `model`: a string, a Model, an object with `request`. */
function toNative(model, Model) {
  if (typeof model === "string") return model;
  if (model instanceof Model) return model._native;
  if (isModelLike(model)) return hostNative(model, { provider: model.provider, modelId: model.modelId });
  return undefined;
}

module.exports = { hostNative, isModelLike, toNative };
