"use strict";
// Models written in JavaScript, for the Rust engine (see
// bindings/node/src/model_host.rs). A model is an object with
// `request(messages, { tools, settings, signal })` returning the
// assistant's message (a canonical message object, `role` optional, or a
// string: one text block), or a promise of it. The engine calls it on
// Node's main thread through lib/js_call.cjs; what it throws fails the run
// with a model error naming it.

const native = require("./native.cjs");
const { caller, abort } = require("./js_call.cjs");

/** @typedef {import("./index").ModelLike} ModelLike */

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
  const call = caller(({ messages, tools, settings }, signal) => model.request(messages, { tools, settings, signal }), "message");
  return native.hostModel(call, abort, provider, modelId, label);
}

module.exports = { hostNative };
